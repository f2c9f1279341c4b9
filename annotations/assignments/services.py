"""Writes for assignments: give a drawn audit to annotators, reassign, add an annotator."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.assignments import pairing
from annotations.models import Assignment
from audit import history, roles
from audit.models import Audit, AuditStatus
from audit.notify.events import notify_audit_assigned
from audit.sampling.selectors import items_without_claims


def _check_annotators(users):
    User = get_user_model()
    ids = [u.pk for u in users]
    ok = set(User.objects.filter(pk__in=ids, is_active=True, groups__name=roles.ANNOTATOR).values_list("pk", flat=True))
    missing = [u.get_username() for u in users if u.pk not in ok]
    if missing:
        raise ValidationError(f"Not in the annotators group: {', '.join(missing)}.")


@transaction.atomic
def audit_assign(audit, annotators, user=None):
    """Give every sampled answer to two distinct annotators (slots A, B); the audit moves to labelling."""
    audit = Audit.objects.select_for_update().get(pk=audit.pk)
    annotators = list({u.pk: u for u in annotators}.values())
    if audit.status != AuditStatus.DRAFT or Assignment.objects.filter(audit_answer__audit=audit).exists():
        raise ValidationError("This audit is already assigned; reassign or add an annotator instead.")
    if len(annotators) < 2:
        raise ValidationError("Choose at least two annotators: every answer is labelled by two people.")
    _check_annotators(annotators)
    if not audit.items.exists():
        raise ValidationError("This audit has nothing to label: its sample is empty.")
    missing = items_without_claims(audit)
    if missing:
        raise ValidationError(
            f"{missing} sampled answer(s) have no claims: claims must exist before annotation "
            "starts (run the judge on the sample, or import claims)."
        )
    items = list(audit.items.order_by("position").values_list("pk", flat=True))
    plan = pairing.plan_pairs(len(items), [u.pk for u in annotators])
    Assignment.objects.bulk_create(
        Assignment(audit_answer_id=item, annotator_id=who, slot=slot)
        for item, pair in zip(items, plan, strict=True)
        for slot, who in zip("AB", pair, strict=True)
    )
    history.record(
        audit,
        kind="assignment",
        action="assign",
        user=user,
        new={"annotators": [u.get_username() for u in annotators], "assignments": 2 * len(items)},
    )
    history.audit_status_move(audit, AuditStatus.DRAFT, AuditStatus.LABELLING, user=user)
    notify_audit_assigned(audit, annotators, user)  # email the annotators, the audit's webhook
    return audit


def _locked(assignment):
    """The assignment, row-locked, with what the history and the checks read."""
    return (
        Assignment.objects.select_for_update()
        .select_related("audit_answer__audit", "audit_answer__answer", "annotator")
        .get(pk=assignment.pk)
    )


def _check_newcomer(a, annotator):
    """The annotator may take the assignment: not the other annotator of the same answer, and one who labels."""
    if Assignment.objects.filter(audit_answer_id=a.audit_answer_id, annotator=annotator).exists():
        raise ValidationError(
            f"{annotator.get_username()} already labels this answer: the two annotators of an answer must differ."
        )
    _check_annotators([annotator])


@transaction.atomic
def assignment_reassign(assignment, annotator, user=None):
    """Move an unstarted assignment to another annotator (never the other annotator of the same answer)."""
    a = _locked(assignment)
    if a.status != Assignment.Status.ASSIGNED:
        raise ValidationError("Only an assignment that has not been started can be reassigned.")
    if a.audit_answer.audit.is_closed:
        raise ValidationError("The audit is closed.")
    if annotator.pk == a.annotator_id:
        raise ValidationError(f"{annotator.get_username()} already has this assignment.")
    _check_newcomer(a, annotator)
    old = a.annotator.get_username()
    a.annotator = annotator
    a.save(update_fields=["annotator"])
    history.record(
        a.audit_answer.audit,
        kind="assignment",
        action="reassign",
        user=user,
        answer=a.audit_answer.answer,
        old={"annotator": old, "slot": a.slot},
        new={"annotator": annotator.get_username(), "slot": a.slot},
    )
    return a


def _can_label(user):
    return user.is_active and user.groups.filter(name=roles.ANNOTATOR).exists()


@transaction.atomic
def assignment_restart(assignment, annotator, user=None):
    """Give the started (or reopened) work of an annotator who can no longer label (deactivated, or the role
    taken) to another annotator, from the start: their unsubmitted labels are discarded, as nobody could
    finish them and the audit could never close. Refused while its annotator can still label."""
    a = _locked(assignment)
    if a.status != Assignment.Status.STARTED:
        raise ValidationError("Only started work is restarted; one not started is reassigned.")
    if a.audit_answer.audit.is_closed:
        raise ValidationError("The audit is closed.")
    if _can_label(a.annotator):
        raise ValidationError(f"{a.annotator.get_username()} can still label it: their labels stay with it.")
    _check_newcomer(a, annotator)
    old, discarded = a.annotator.get_username(), a.labels.count()
    a.labels.all().delete()
    a.annotator, a.status, a.started_at, a.submitted_at = annotator, Assignment.Status.ASSIGNED, None, None
    a.active_seconds, a.omission, a.note, a.reopen_reason = 0, False, "", ""
    a.save()
    history.record(
        a.audit_answer.audit,
        kind="assignment",
        action="restart",
        user=user,
        answer=a.audit_answer.answer,
        old={"annotator": old, "slot": a.slot, "labels": discarded},
        new={"annotator": annotator.get_username(), "slot": a.slot},
    )
    return a, discarded


@transaction.atomic
def audit_add_annotator(audit, annotator, user=None):
    """Bring a new annotator into a running audit: move unstarted assignments to them until loads are level."""
    audit = Audit.objects.select_for_update().get(pk=audit.pk)
    if audit.status != AuditStatus.LABELLING:
        raise ValidationError("Annotators can be added while the audit is in labelling.")
    _check_annotators([annotator])
    rows = list(
        Assignment.objects.filter(audit_answer__audit=audit).values_list(
            "pk", "audit_answer_id", "annotator_id", "status"
        )
    )
    by_item, loads = {}, {}
    for _pk, item, who, _status in rows:
        by_item.setdefault(item, []).append(who)
        loads[who] = loads.get(who, 0) + 1
    # People on the audit who can no longer label (deactivated, or the annotator role taken away).
    able = set(
        get_user_model()
        .objects.filter(pk__in=loads, is_active=True, groups__name=roles.ANNOTATOR)
        .values_list("pk", flat=True)
    )
    plan = pairing.plan_rebalance(
        [
            (pk, item, who, next((o for o in by_item[item] if o != who), None), status == Assignment.Status.ASSIGNED)
            for pk, item, who, status in rows
        ],
        annotator.pk,
        loads,
        stranded=set(loads) - able,
    )
    moved = Assignment.objects.filter(pk__in=[pk for pk, _ in plan], status=Assignment.Status.ASSIGNED)
    count = moved.update(annotator=annotator)
    history.record(
        audit,
        kind="assignment",
        action="add_annotator",
        user=user,
        new={
            "annotator": annotator.get_username(),
            "moved": [{"assignment": pk, "from_user_id": donor} for pk, donor in plan],
        },
    )
    return count
