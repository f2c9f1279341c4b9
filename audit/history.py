"""The audit trail: one append-only row per change. Services call record(); nothing updates or deletes rows."""

from audit.models import HistoryEvent


def record(audit, *, kind, action, user=None, answer=None, claim=None, old=None, new=None, reason="", person=None):
    return HistoryEvent.objects.create(
        audit=audit,
        person=person,
        kind=kind,
        action=action,
        user=user,
        answer=answer,
        claim=claim,
        old=old,
        new=new,
        reason=reason,
    )


def audit_status_move(audit, old, new, *, user=None, reason=""):
    """Move the audit from status old to new (only if it is still old) and record it; returns whether it moved."""
    moved = type(audit).objects.filter(pk=audit.pk, status=old).update(status=new)
    if moved:
        audit.status = new
        record(audit, kind="audit", action="status", user=user, old={"status": old}, new={"status": new}, reason=reason)
    return bool(moved)
