"""Reads for the people pages: a fixed number of queries whatever the size of the team."""

from django.contrib.auth import get_user_model
from django.db.models import Count, Q

from annotations.models import Assignment
from audit.models import HistoryEvent

OPEN = ~Q(assignments__status=Assignment.Status.SUBMITTED)


def people():
    """Every user with their groups and their count of open (unsubmitted) assignments: two queries."""
    return (
        get_user_model()
        .objects.annotate(open_assignments=Count("assignments", filter=OPEN))
        .prefetch_related("groups")
        .order_by("-is_active", "username")
    )


def person(user_id):
    """(user, open assignments, recent events); raises DoesNotExist. Four queries."""
    user = get_user_model().objects.prefetch_related("groups").get(pk=user_id)
    open_ = (
        Assignment.objects.filter(annotator=user)
        .exclude(status=Assignment.Status.SUBMITTED)
        .select_related("audit_answer__audit", "audit_answer__answer")
        .order_by("audit_answer__audit_id", "audit_answer__position")
    )
    events = HistoryEvent.objects.filter(person=user).select_related("user").order_by("-created_at", "-id")[:50]
    return user, list(open_), list(events)
