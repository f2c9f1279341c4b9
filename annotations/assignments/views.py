from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotations.assignments import forms, selectors, services
from annotations.models import Assignment, PendingAssignment
from audit.models import Audit
from audit.roles import lead_required
from audit.sampling import selectors as sampling_selectors
from audit.sampling.forms import JudgeForm


def _error(request, exc):
    messages.error(request, " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc))


@lead_required
def audits(request):
    return render(request, "sampling/audits.html", {"audits": selectors.audit_list()})


@lead_required
def audit_detail(request, audit_id):
    return _detail(request, audit_id)


def _detail(request, audit_id, assign_form=None, assign_error=None):
    try:
        audit = sampling_selectors.audit_detail(audit_id)
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
        "without_claims": sampling_selectors.items_without_claims(audit),
        "runs": sampling_selectors.latest_judge_runs(audit),
        "assign_form": assign_form or forms.AssignForm(),
        "assign_error": assign_error,
        "add_form": add_form,
        "judge_form": JudgeForm(),
        "pending": PendingAssignment.objects.filter(audit=audit).first(),  # made "like" another audit
    }
    return render(request, "sampling/audit_detail.html", ctx, status=400 if assign_error else 200)


@lead_required
@require_POST
def audit_assign(request, audit_id):
    """A refused assignment comes back on the audit page with the annotators as ticked and the reason beside them."""
    audit = get_object_or_404(Audit, pk=audit_id)
    form = forms.AssignForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("Choose at least two annotators from the list.")
        services.audit_assign(audit, list(form.cleaned_data["annotators"]), user=request.user)
    except ValidationError as e:
        return _detail(request, audit.id, assign_form=form, assign_error=" ".join(e.messages))
    messages.success(request, "Assigned: every answer has two annotators. The audit is in labelling.")
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
def audit_assignments(request, audit_id):
    audit = get_object_or_404(Audit.objects.select_related("dataset"), pk=audit_id)
    every = selectors.audit_assignments(audit)
    status = request.GET.get("status", "")
    who = request.GET.get("annotator", "")
    who = int(who) if who.isascii() and who.isdigit() and len(who) < 18 else None
    shown = selectors.with_reassign_choices(selectors.filter_assignments(every, status, who))
    ctx = {
        "audit": audit,
        "assignments": shown,
        "total": every.count(),
        "statuses": [(k, label) for k, (label, _q) in selectors.ASSIGNMENT_FILTERS.items()],
        "status": status if status in selectors.ASSIGNMENT_FILTERS else "",
        "annotator": who,
        "people": selectors.audit_annotators(audit),
    }
    return render(request, "sampling/assignments.html", ctx)


def _row_change(request, assignment_id, change):
    """Reassign or restart one assignment (change(assignment, annotator, user)); htmx gets its row again."""
    assignment = get_object_or_404(Assignment.objects.select_related("audit_answer"), pk=assignment_id)
    form = forms.AnnotatorForm(request.POST)
    error = None
    try:
        if not form.is_valid():
            raise ValidationError("Choose an annotator.")
        change(assignment, form.cleaned_data["annotator"], user=request.user)
    except ValidationError as e:
        error = " ".join(e.messages)
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect("audit_assignments", assignment.audit_answer.audit_id)
    [a] = selectors.with_reassign_choices(
        selectors.audit_assignments(assignment.audit_answer.audit_id).filter(pk=assignment.pk)
    )
    ctx = {"a": a, "error": error and f"Not changed (annotator): {error}"}
    return render(request, "sampling/assignments.html#row", ctx, status=400 if error else 200)


@lead_required
@require_POST
def assignment_reassign(request, assignment_id):
    return _row_change(request, assignment_id, services.assignment_reassign)


@lead_required
@require_POST
def assignment_restart(request, assignment_id):
    """Started work of an annotator who can no longer label goes to another, from the start."""
    return _row_change(request, assignment_id, services.assignment_restart)
