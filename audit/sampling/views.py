from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audit.judge.services import judge_run_create
from audit.judge.tasks import judge_run_enqueue
from audit.models import Audit
from audit.roles import lead_required
from audit.sampling import forms, selectors, services


def _error(request, exc):
    messages.error(request, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))


def _service_error(form, exc):
    for field, message in forms.refusal_fields(exc):
        form.add_error(field, message)


def _created(request, audit, notes):
    messages.success(request, f"Audit {audit.name} created: {audit.items.count()} answers sampled.")
    for note in notes:
        messages.warning(request, f"{note['field']}: {note['message']}.")


@lead_required
def audit_new(request):
    form = forms.AuditForm(request.POST or None)
    preview = None
    if request.method == "POST" and form.is_valid():
        if request.htmx:  # the live preview: strata sizes, nothing saved
            try:
                kwargs = form.service_kwargs()
                preview = services.audit_preview(**kwargs, seed=form.cleaned_data["seed"] or 0)
                preview["audited"] = selectors.population_audited(kwargs["dataset"], preview["filter"])
            except (ValidationError, ValueError) as e:
                _service_error(form, e)
        elif not form.cleaned_data["name"]:
            form.add_error("name", "A name is required to create the audit.")
        else:
            try:
                audit = services.audit_create(
                    name=form.cleaned_data["name"],
                    seed=form.cleaned_data["seed"],
                    policy=form.cleaned_data["policy"],
                    user=request.user,
                    **form.service_kwargs(),
                )
            except (ValidationError, ValueError) as e:
                _service_error(form, e)
            else:
                _created(request, audit, audit.design_notes)
                return redirect("audit_detail", audit.id)
    template = "sampling/audit_new.html#preview" if request.htmx else "sampling/audit_new.html"
    status = 400 if form.errors and not request.htmx else 200  # htmx: the preview shows the errors in place
    bad_fields = [f for f in form if f.errors] if not request.htmx else []  # the refused create's summary
    return render(request, template, {"form": form, "preview": preview, "bad_fields": bad_fields}, status=status)


@lead_required
@require_POST
def audit_judge(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    if audit.is_closed:  # labels and gold are frozen; the judge lab scores versions against its gold
        messages.error(request, f"Audit {audit.name} is closed: its sample is not judged again.")
        return redirect("audit_detail", audit.id)
    form = forms.JudgeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a judge backend.")
        return redirect("audit_detail", audit.id)
    try:
        run = judge_run_create(backend=form.cleaned_data["backend"], audit=audit, user=request.user)
    except (ValidationError, ValueError) as e:
        _error(request, e)
        return redirect("audit_detail", audit.id)
    judge_run_enqueue(run)
    return redirect("judge_run", run.id)
