from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotations.models import Assignment
from audit.models import Audit
from audit.roles import lead_required
from audit.sampling import forms, selectors, services


def _error(request, exc):
    messages.error(request, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))


@lead_required
def audits(request):
    return render(request, "sampling/audits.html", {"audits": selectors.audit_list()})


@lead_required
def audit_new(request):
    form = forms.AuditForm(request.POST or None)
    preview = None
    if request.method == "POST" and form.is_valid():
        if request.htmx:  # the live preview: strata sizes, nothing saved
            try:
                preview = services.audit_preview(**form.service_kwargs())
            except ValueError as e:
                form.add_error(None, str(e))
        elif not form.cleaned_data["name"]:
            form.add_error("name", "A name is required to create the audit.")
        else:
            try:
                audit = services.audit_create(
                    name=form.cleaned_data["name"],
                    seed=form.cleaned_data["seed"],
                    user=request.user,
                    **form.service_kwargs(),
                )
            except (ValidationError, ValueError) as e:
                form.add_error(None, " ".join(getattr(e, "messages", [str(e)])))
            else:
                messages.success(request, f"Audit {audit.name} created: {audit.items.count()} answers sampled.")
                return redirect("audit_detail", audit.id)
    template = "sampling/audit_new.html#preview" if request.htmx else "sampling/audit_new.html"
    return render(request, template, {"form": form, "preview": preview})


@lead_required
def audit_detail(request, audit_id):
    try:
        audit = selectors.audit_detail(audit_id)
    except Audit.DoesNotExist:
        raise Http404("No such audit.") from None
    progress, add_form = selectors.audit_progress(audit), forms.AnnotatorForm()
    # Offer only people not already on the audit: adding one of them would move nothing.
    add_form.fields["annotator"].queryset = add_form.fields["annotator"].queryset.exclude(
        pk__in=[p["user_id"] for p in progress["annotators"]]
    )
    ctx = {
        "audit": audit,
        "progress": progress,
        "without_claims": selectors.items_without_claims(audit),
        "runs": selectors.latest_judge_runs(audit),
        "assign_form": forms.AssignForm(),
        "add_form": add_form,
        "judge_form": forms.JudgeForm(),
    }
    return render(request, "sampling/audit_detail.html", ctx)


@lead_required
@require_POST
def audit_assign(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    form = forms.AssignForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("Choose at least two annotators from the list.")
        services.audit_assign(audit, list(form.cleaned_data["annotators"]), user=request.user)
        messages.success(request, "Assigned: every answer has two annotators. The audit is in labelling.")
    except ValidationError as e:
        _error(request, e)
    return redirect("audit_detail", audit.id)


@lead_required
@require_POST
def audit_add_annotator(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    form = forms.AnnotatorForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("Choose an annotator.")
        moved = services.audit_add_annotator(audit, form.cleaned_data["annotator"], user=request.user)
        messages.success(request, f"{form.cleaned_data['annotator'].get_username()} added: {moved} assignments moved.")
    except ValidationError as e:
        _error(request, e)
    return redirect("audit_detail", audit.id)


@lead_required
@require_POST
def audit_judge(request, audit_id):
    from audit.judge.services import judge_run_create, judge_run_enqueue

    audit = get_object_or_404(Audit, pk=audit_id)
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


@lead_required
def audit_assignments(request, audit_id):
    audit = get_object_or_404(Audit.objects.select_related("dataset"), pk=audit_id)
    ctx = {
        "audit": audit,
        "assignments": selectors.audit_assignments(audit),
        "annotators": list(selectors.annotators()),
    }
    return render(request, "sampling/assignments.html", ctx)


@lead_required
@require_POST
def assignment_reassign(request, assignment_id):
    assignment = get_object_or_404(Assignment.objects.select_related("audit_answer"), pk=assignment_id)
    form = forms.AnnotatorForm(request.POST)
    error = None
    try:
        if not form.is_valid():
            raise ValidationError("Choose an annotator.")
        services.assignment_reassign(assignment, form.cleaned_data["annotator"], user=request.user)
    except ValidationError as e:
        error = " ".join(e.messages)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect("audit_assignments", assignment.audit_answer.audit_id)
    a = selectors.audit_assignments(assignment.audit_answer.audit_id).get(pk=assignment.pk)
    ctx = {"a": a, "annotators": list(selectors.annotators()), "error": error}
    return render(request, "sampling/assignments.html#row", ctx)
