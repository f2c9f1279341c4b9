"""Reads for assignments and progress: a fixed number of queries whatever the audit's size."""

from statistics import median

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, OuterRef, Q, Subquery

from annotations.models import Assignment
from audit import roles
from audit.models import Audit

S = Assignment.Status


def audit_list():
    return (
        Audit.objects.select_related("dataset", "created_by")
        .annotate(
            n_items=Count("items", distinct=True),
            n_assignments=Count("items__assignments", distinct=True),
            n_submitted=Count("items__assignments", filter=Q(items__assignments__status=S.SUBMITTED), distinct=True),
        )
        .order_by("-created_at", "-id")
    )


def annotators():
    return get_user_model().objects.filter(groups__name=roles.ANNOTATOR, is_active=True).order_by("username").distinct()


def _annotator_role(user_id):
    return get_user_model().groups.through.objects.filter(user_id=user_id, group__name=roles.ANNOTATOR)


def _minutes(seconds):
    return round(median(seconds) / 60, 1) if seconds else None


def audit_progress(audit):
    """{"annotators": [{user_id, username, can_label, assigned, started, submitted, median_minutes}],
    "overall": {...}}. assigned counts every assignment the annotator holds; can_label: they are active and
    still have the annotator role (else their open work waits for a reassignment); median minutes per
    submitted answer come from Assignment.active_seconds (time on task, not wall time)."""
    qs = Assignment.objects.filter(audit_answer__audit=audit)
    rows = list(
        qs.values("annotator_id", "annotator__username", "annotator__is_active")
        .order_by("annotator__username")
        .annotate(
            annotator_role=Exists(_annotator_role(OuterRef("annotator_id"))),
            assigned=Count("pk"),
            started=Count("pk", filter=Q(status=S.STARTED)),
            submitted=Count("pk", filter=Q(status=S.SUBMITTED)),
        )
    )
    times = {}
    for who, secs in qs.filter(status=S.SUBMITTED).values_list("annotator_id", "active_seconds"):
        times.setdefault(who, []).append(secs)
    people = [
        {
            "user_id": r["annotator_id"],
            "username": r["annotator__username"],
            "can_label": r["annotator__is_active"] and r["annotator_role"],
            "is_active": r["annotator__is_active"],
            "assigned": r["assigned"],
            "started": r["started"],
            "submitted": r["submitted"],
            "median_minutes": _minutes(times.get(r["annotator_id"])),
        }
        for r in rows
    ]
    total = sum(p["assigned"] for p in people)
    submitted = sum(p["submitted"] for p in people)
    overall = {
        "assigned": total,
        "started": sum(p["started"] for p in people),
        "submitted": submitted,
        "percent": round(100 * submitted / total) if total else 0,
        "median_minutes": _minutes([s for v in times.values() for s in v]),
    }
    return {"annotators": people, "overall": overall}


def audit_assignments(audit):
    """The audit's assignments; partner_id: the annotator of the same answer's other slot, who may never take it."""
    partner = Assignment.objects.filter(audit_answer=OuterRef("audit_answer")).exclude(pk=OuterRef("pk"))
    return (
        Assignment.objects.filter(audit_answer__audit=audit)
        .select_related("annotator", "audit_answer__answer")
        .annotate(partner_id=Subquery(partner.values("annotator_id")[:1]))
        .order_by("audit_answer__position", "slot")
    )


# The lead's filter on an audit's assignments: status value -> (label, lookup). "Reopened": started again
# after a reopening, with the lead's reason (a reopened answer that is submitted again counts as submitted).
ASSIGNMENT_FILTERS = {
    "assigned": ("Not started", Q(status=S.ASSIGNED)),
    "started": ("Started", Q(status=S.STARTED, reopen_reason="")),
    "reopened": ("Reopened", Q(status=S.STARTED) & ~Q(reopen_reason="")),
    "submitted": ("Submitted", Q(status=S.SUBMITTED)),
}


def filter_assignments(assignments, status=None, annotator_id=None):
    """The audit's assignments narrowed to one status (a key of ASSIGNMENT_FILTERS) and/or one annotator;
    an unknown value does not filter."""
    if status in ASSIGNMENT_FILTERS:
        assignments = assignments.filter(ASSIGNMENT_FILTERS[status][1])
    if annotator_id is not None:
        assignments = assignments.filter(annotator_id=annotator_id)
    return assignments


def audit_annotators(audit):
    """Everyone holding an assignment of the audit, by name (for the lead's filter)."""
    return get_user_model().objects.filter(assignments__audit_answer__audit=audit).distinct().order_by("username")


def with_reassign_choices(assignments):
    """Each assignment with .choices: the annotators who may take it (anyone with the role but the two
    annotators of its answer), and .can_label: its annotator is active and still has the role (else its
    open work waits for a reassignment). One query for the annotators, whatever the number of assignments."""
    people, out = list(annotators()), list(assignments)
    able = {u.pk for u in people}
    for a in out:
        a.choices = [u for u in people if u.pk not in (a.annotator_id, a.partner_id)]
        a.can_label = a.annotator_id in able
    return out
