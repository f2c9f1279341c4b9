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
