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


# Readable text of a trail value (old/new) and of imported metadata: never Python's repr on a page.
SUMMARY_KEYS = ("status", "verdict", "source", "evidence_text", "version", "restores", "agreed")  # a snapshot's gist
LIST_SHOWN = 10


def describe(value, passages=None):
    """A readable line: text as is, None as "none", booleans as yes/no, lists joined, objects as key: value
    (a snapshot with SUMMARY_KEYS by those alone), an evidence span as its quoted text and passage number.
    `passages`: {passage id: number} of the answer, to name the passage an id stands for."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return _describe_list(value, passages)
    if isinstance(value, dict):
        return _describe_object(value, passages)
    return str(value)


def _describe_list(items, passages):
    if not items:
        return "none"
    sep = "; " if any(isinstance(v, dict) for v in items) else ", "
    text = sep.join(describe(v, passages) for v in items[:LIST_SHOWN])
    return text + (f" … ({len(items)} in all)" if len(items) > LIST_SHOWN else "")


def _describe_object(obj, passages):
    if {"passage", "text"} <= obj.keys():  # an evidence span: {passage, start, end, text}
        return _span(obj["text"], obj["passage"], passages)
    keys = [k for k in SUMMARY_KEYS if obj.get(k) not in (None, "")] or sorted(obj)
    return " · ".join(f"{k.removesuffix('_text')}: {_field(obj, k, passages)}" for k in keys)


def _field(obj, key, passages):
    if key == "evidence_text":  # a gold snapshot's span: its text and evidence_passage
        return _span(obj[key], obj.get("evidence_passage"), passages)
    if key in ("passage", "evidence_passage") and isinstance(obj[key], int):
        return _passage(obj[key], passages)
    return describe(obj[key], passages)


def _span(text, passage_id, passages):
    return f"“{text}”" + (f" in {_passage(passage_id, passages)}" if passage_id is not None else "")


def _passage(passage_id, passages):
    number = (passages or {}).get(passage_id)
    return f"passage {number}" if number is not None else "a passage"
