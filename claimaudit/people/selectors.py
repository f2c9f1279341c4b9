"""Reads for the people pages: a fixed number of queries whatever the size of the team."""

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, OuterRef, Q

from annotations.models import Assignment
from audit import roles
from audit.models import HistoryEvent


def open_q(prefix=""):
    """An assignment not submitted yet, in any audit: the one meaning of "open" on the people pages, whether read
    from an assignment (prefix "") or through a relation to it (e.g. "assignments__")."""
    return ~Q(**{f"{prefix}status": Assignment.Status.SUBMITTED})


def open_assignments(user):
    """The person's open assignments."""
    return Assignment.objects.filter(open_q(), annotator=user)


def people():
    """Every user with their groups, their count of open (unsubmitted) assignments and whether they may still
    label them (active, with the annotator role): two queries."""
    role = get_user_model().groups.through.objects.filter(user_id=OuterRef("pk"), group__name=roles.ANNOTATOR)
    return (
        get_user_model()
        .objects.annotate(
            open_assignments=Count("assignments", filter=open_q("assignments__")),
            annotator_role=Exists(role),
        )
        .prefetch_related("groups")
        .order_by("-is_active", "username")
    )


def person(user_id):
    """(user, open assignments, recent events); raises DoesNotExist. Four queries."""
    user = get_user_model().objects.prefetch_related("groups").get(pk=user_id)
    open_ = (
        open_assignments(user)
        .select_related("audit_answer__audit", "audit_answer__answer")
        .order_by("audit_answer__audit_id", "audit_answer__position")
    )
    events = HistoryEvent.objects.filter(person=user).select_related("user").order_by("-created_at", "-id")[:50]
    return user, list(open_), list(events)
