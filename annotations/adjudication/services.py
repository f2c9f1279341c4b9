"""Writes of the adjudication area: gold by agreement, adjudicated gold, closing and reopening an audit.

Every change of a gold label or of an audit's state goes through here and leaves a HistoryEvent."""

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotations.adjudication.rules import adjudication_refusal
from annotations.adjudication.selectors import audit_gold_progress
from annotations.models import Assignment, GoldLabel, Label
from audit import history, roles
from audit.jobs.judge import judge_runs_stop_for_close
from audit.models import NEEDS_EVIDENCE, AuditAnswer, AuditStatus, Claim, HistoryEvent, Passage, Verdict
from audit.notify.events import notify_disputes_ready
from audit.spans import dom_to_raw_offsets
from audit.validation import row_id

REASON_MAX = 4000


class AdjudicationError(Exception):
    """A refused write; the message says what is wrong, for the person who asked."""


class AuditClosed(AdjudicationError):
    pass


class StaleGold(AdjudicationError):
    """The gold label changed since the form was rendered; .current is the row now stored (or None)."""

    def __init__(self, message, current):
        super().__init__(message)
        self.current = current


def gold_snapshot(gold):
    """The fields of a gold label that the audit trail keeps as old/new."""
    if gold is None:
        return None
    return {
        "verdict": gold.verdict,
        "source": gold.source,
        **{f.removesuffix("_id"): v for f, v in gold.evidence_fields().items()},
        "adjudicator": gold.adjudicator_id,
        "reason": gold.reason,
        "version": gold.version,
    }


def gold_on_submit(audit_answer):
    """Called (inside the submit transaction) after an assignment of audit_answer is submitted.

    When both assignments are submitted, claims whose two verdicts agree become gold (source: agreed),
    with A's evidence when A gave any, else B's. An agreed gold from an earlier submission is updated
    (or withdrawn when the labels no longer agree); an adjudicated gold is never overwritten: a
    history event notes the new agreement instead. When every assignment of the audit is submitted,
    the audit moves from labelling to adjudication. Calling it twice changes nothing."""
    audit = audit_answer.audit
    with transaction.atomic():
        _lock_open(audit)
        assignments = list(Assignment.objects.filter(audit_answer=audit_answer))
        if len(assignments) == 2 and all(a.status == Assignment.Status.SUBMITTED for a in assignments):
            _agreed_gold(audit, audit_answer, assignments)
        _advance_audit(audit)


def _refuse_closed(audit):
    if audit.is_closed:
        raise AuditClosed(f"Audit {audit.name} is closed: its labels and gold are frozen. A lead can reopen it.")


def _lock_open(audit):
    """Re-read the audit's status under a row lock: a gold write and a close cannot interleave."""
    audit.status = type(audit).objects.select_for_update().values_list("status", flat=True).get(pk=audit.pk)
    _refuse_closed(audit)


def _agreed_gold(audit, audit_answer, assignments):
    by_slot = {a.slot: {} for a in assignments}
    slot_of = {a.id: a.slot for a in assignments}
    for label in Label.objects.filter(assignment__in=assignments):
        by_slot[slot_of[label.assignment_id]][label.claim_id] = label
    labels_a, labels_b = by_slot.get("A", {}), by_slot.get("B", {})
    answer = audit_answer.answer
    claims = list(Claim.objects.filter(answer=answer).order_by("position"))
    golds = {g.claim_id: g for g in GoldLabel.objects.select_for_update().filter(audit=audit, claim__answer=answer)}
    for claim in claims:
        la, lb, gold = labels_a.get(claim.id), labels_b.get(claim.id), golds.get(claim.id)
        trail = {"audit": audit, "kind": "gold", "answer": answer, "claim": claim}
        if gold is not None and gold.source == GoldLabel.Source.ADJUDICATED:
            _mark_recheck(trail, gold, _basis(la, lb))
        if la is not None and lb is not None and la.verdict and la.verdict == lb.verdict:
            _apply_agreement(trail, la, lb, gold)
        elif gold is not None and gold.source == GoldLabel.Source.AGREED:
            # The labels were changed after a reopen and now differ: the claim goes back to the queue.
            # Allowed only because the audit is open (checked above); the trail keeps the old row.
            history.record(
                **trail, action="agreement_withdrawn", old=gold_snapshot(gold), reason="The two labels no longer agree."
            )
            gold.delete()


def _basis(la, lb):
    """The two verdicts a gold label rests on."""
    return {"A": la.verdict if la else "", "B": lb.verdict if lb else ""}


def _mark_recheck(trail, gold, current):
    """An adjudicated gold stays, but is marked for re-check when a label differs from the ones the
    adjudicator decided on (cleared when the labels return to them). Recorded; idempotent."""
    basis = gold.basis or {"A": gold.verdict, "B": gold.verdict}  # unknown basis: compare with the gold
    needs = current != basis
    if needs == gold.recheck:
        return
    GoldLabel.objects.filter(pk=gold.pk).update(recheck=needs)
    gold.recheck = needs
    history.record(
        **trail,
        action="recheck" if needs else "recheck_cleared",
        old={"labels": basis},
        new={"labels": current},
        reason="A label changed after the adjudication: the adjudicated gold stands until re-checked."
        if needs
        else "The labels are back to those the adjudication rested on.",
    )


def gold_on_reopen(audit_answer, user, reason):
    """Called inside the reopen transaction of an assignment of audit_answer: the agreed gold of the answer
    is withdrawn (it rested on a label that may now change; the resubmission makes it again), adjudicated
    gold stays, and an audit in adjudication returns to labelling. Recorded in the trail."""
    audit, answer = audit_answer.audit, audit_answer.answer
    _lock_open(audit)
    agreed = list(
        GoldLabel.objects.select_for_update().filter(
            audit=audit, claim__answer_id=answer.pk, source=GoldLabel.Source.AGREED
        )
    )
    why = f"An assignment of this answer was reopened: {reason}"[:REASON_MAX]
    HistoryEvent.objects.bulk_create(
        HistoryEvent(
            audit=audit,
            kind="gold",
            action="agreement_withdrawn",
            user=user,
            answer=answer,
            claim_id=g.claim_id,
            old=gold_snapshot(g),
            reason=why,
        )
        for g in agreed
    )
    GoldLabel.objects.filter(pk__in=[g.pk for g in agreed]).delete()
    reason = "An assignment was reopened."
    history.audit_status_move(audit, AuditStatus.ADJUDICATION, AuditStatus.LABELLING, user=user, reason=reason)
    return len(agreed)


def _apply_agreement(trail, la, lb, gold):
    fields = {"verdict": la.verdict, **(la if la.has_evidence else lb).evidence_fields()}
    if gold is None:
        gold = GoldLabel.objects.create(
            audit=trail["audit"], claim=trail["claim"], source=GoldLabel.Source.AGREED, **fields
        )
        history.record(
            **trail, action="agreed", new=gold_snapshot(gold), reason="Both annotators gave the same verdict."
        )
        return
    if all(getattr(gold, k) == v for k, v in fields.items()):
        return
    if gold.source == GoldLabel.Source.ADJUDICATED:
        noted = HistoryEvent.objects.filter(
            audit=trail["audit"],
            claim=trail["claim"],
            action="agreement_kept_adjudicated",
            created_at__gte=gold.updated_at,
        )
        if noted.exists():  # idempotent: the note is written once per adjudicated value
            return
        history.record(
            **trail,
            action="agreement_kept_adjudicated",
            old=gold_snapshot(gold),
            new={"agreed": fields},
            reason="The annotators now agree on another value; the adjudicated gold stands.",
        )
        return
    old = gold_snapshot(gold)
    for k, v in fields.items():
        setattr(gold, k, v)
    gold.version += 1
    gold.save()
    history.record(
        **trail,
        action="agreed",
        old=old,
        new=gold_snapshot(gold),
        reason="Both annotators gave the same verdict (resubmitted).",
    )


def _advance_audit(audit):
    if audit.status != AuditStatus.LABELLING:
        return
    pending = Assignment.objects.filter(audit_answer__audit=audit).exclude(status=Assignment.Status.SUBMITTED)
    if not Assignment.objects.filter(audit_answer__audit=audit).exists() or pending.exists():
        return
    # Conditional UPDATE: of two submits finishing together, exactly one moves the audit and records it.
    moved = history.audit_status_move(
        audit, AuditStatus.LABELLING, AuditStatus.ADJUDICATION, reason="Every assignment is submitted."
    )
    audit.status = AuditStatus.ADJUDICATION
    if moved:
        notify_disputes_ready(audit, audit_gold_progress(audit)["missing"])  # email adjudicators, webhook


def mine_on_answer(user, answer_id):
    """The (item_id, status) rows adjudication_refusal needs for one answer (one query)."""
    rows = Assignment.objects.filter(annotator_id=user.id, audit_answer__answer_id=answer_id)
    return list(rows.values_list("audit_answer_id", "status"))


def check_may_adjudicate(user, item, assignments):
    """Raise PermissionDenied unless user may adjudicate item (its assignments loaded)."""
    if not roles.has_role(user, roles.ADJUDICATOR):
        raise PermissionDenied("Adjudication is for adjudicators.")
    slots = [(a.annotator_id, a.status) for a in assignments]
    why = adjudication_refusal(user.id, item.pk, slots, mine_on_answer(user, item.answer_id))
    if why:
        raise PermissionDenied(why)


def gold_adjudicate(
    audit, claim, *, user, verdict, evidence="none", passage=None, start=None, end=None, reason, expected_version
):
    """Set the gold verdict of one claim as adjudicator; returns the saved GoldLabel.

    evidence: "a" / "b" (take that annotator's evidence), "new" (passage + start/end offsets into its
    text; the quote is cut server-side), or "none". expected_version is the gold version the form saw
    (0: no gold yet); a different stored version raises StaleGold carrying the current row."""
    _refuse_closed(audit)
    reason = (reason or "").strip()
    if not reason:
        raise AdjudicationError("A reason is required: say why this is the gold verdict.")
    if len(reason) > REASON_MAX:
        raise AdjudicationError(f"The reason is too long ({len(reason)} characters, at most {REASON_MAX}).")
    if verdict not in Verdict.values:
        raise AdjudicationError(f"Unknown verdict {verdict!r}: choose one of {', '.join(Verdict.values)}.")
    item = AuditAnswer.objects.filter(audit=audit, answer_id=claim.answer_id).first()
    if item is None:
        raise AdjudicationError("This claim is not part of the audit.")
    assignments = list(Assignment.objects.filter(audit_answer=item))
    check_may_adjudicate(user, item, assignments)
    fields = {"verdict": verdict, **_chosen_evidence(claim, assignments, verdict, evidence, passage, start, end)}
    slot_of = {a.id: a.slot for a in assignments}
    labels = {slot_of[lb.assignment_id]: lb for lb in Label.objects.filter(assignment__in=assignments, claim=claim)}
    basis = _basis(labels.get("A"), labels.get("B"))
    fields.update(source=GoldLabel.Source.ADJUDICATED, adjudicator=user, reason=reason, basis=basis, recheck=False)
    with transaction.atomic():
        _lock_open(audit)
        return _save_gold(audit, claim, fields, user, expected_version)


def gold_take_all(item, rows, slot, *, user, reason):
    """Adjudicate every disputed claim of item without adjudicated gold as annotator slot ("a" or "b")
    labelled it, evidence included, with one reason. rows: the item's claim rows (selectors.claim_rows).
    Returns the number of claims set; each save is a gold_adjudicate with its own history event."""
    if slot not in ("a", "b"):
        raise AdjudicationError("Choose annotator A or B.")
    todo = [
        r
        for r in rows
        if r["kind"] == "disputed"
        and r[slot]
        and r[slot].verdict
        and not (r["gold"] and r["gold"].source == GoldLabel.Source.ADJUDICATED and not r["gold"].recheck)
    ]
    if not todo:
        raise AdjudicationError(
            "No disputed claim of this answer is left to take: each has adjudicated gold, not marked for re-check."
        )
    with transaction.atomic():
        for r in todo:
            label = r[slot]
            gold_adjudicate(
                item.audit,
                r["claim"],
                user=user,
                verdict=label.verdict,
                evidence=slot if label.has_evidence else "none",
                reason=reason,
                expected_version=r["gold"].version if r["gold"] else 0,
            )
    return len(todo)


def _chosen_evidence(claim, assignments, verdict, evidence, passage, start, end):
    empty = {"evidence_passage_id": None, "evidence_start": None, "evidence_end": None, "evidence_text": ""}
    if verdict not in NEEDS_EVIDENCE or evidence in ("none", "", None):
        return empty  # unsupported and non-assertive claims have no evidence span
    if evidence in ("a", "b"):
        assignment = next(a for a in assignments if a.slot == evidence.upper())
        label = Label.objects.filter(assignment=assignment, claim=claim).first()
        if label is None or not label.has_evidence:
            raise AdjudicationError(f"Annotator {evidence.upper()} gave no evidence for this claim.")
        return label.evidence_fields()
    if evidence != "new":
        raise AdjudicationError(f"Unknown evidence choice {evidence!r}.")
    pk = row_id(passage)
    p = Passage.objects.filter(pk=pk, answer_id=claim.answer_id).first() if pk else None
    if p is None:
        raise AdjudicationError("Select the evidence in one of this answer's passages.")
    try:
        start, end = int(start), int(end)
    except (TypeError, ValueError):
        raise AdjudicationError("The evidence selection has no valid start and end offsets.")
    start, end = dom_to_raw_offsets(p.text, start, end)  # the browser counts CR LF as one character
    if not 0 <= start < end <= len(p.text):
        raise AdjudicationError(f"The evidence offsets {start}-{end} fall outside passage {p.external_id}.")
    return {
        "evidence_passage_id": p.id,
        "evidence_start": start,
        "evidence_end": end,
        "evidence_text": p.text[start:end],
    }


def _save_gold(audit, claim, fields, user, expected_version):
    trail = {
        "audit": audit,
        "kind": "gold",
        "answer": claim.answer,
        "claim": claim,
        "user": user,
        "reason": fields["reason"],
    }
    gold = GoldLabel.objects.filter(audit=audit, claim=claim).first()
    if gold is None:
        if expected_version:
            raise StaleGold(_stale_message(None), None)
        try:
            with transaction.atomic():
                gold = GoldLabel.objects.create(audit=audit, claim=claim, version=1, **fields)
        except IntegrityError:  # another adjudicator created it first
            current = GoldLabel.objects.filter(audit=audit, claim=claim).first()
            raise StaleGold(_stale_message(current), current)
        history.record(**trail, action="adjudicated", new=gold_snapshot(gold))
        return gold
    old = gold_snapshot(gold)
    # Compare-and-set in one UPDATE: two adjudicators holding the same version cannot both succeed.
    updated = GoldLabel.objects.filter(pk=gold.pk, version=expected_version).update(
        version=F("version") + 1, updated_at=timezone.now(), **fields
    )
    if not updated:
        gold.refresh_from_db()
        raise StaleGold(_stale_message(gold), gold)
    gold.refresh_from_db()
    history.record(**trail, action="adjudicated", old=old, new=gold_snapshot(gold))
    return gold


def _stale_message(current):
    now = (
        f"it is now {current.get_verdict_display().lower()} (version {current.version})"
        if current
        else "its gold was withdrawn"
    )
    return (
        f"Not saved: someone else changed the gold of this claim since you opened it; {now}. "
        "Review the current value below and save again if you still disagree."
    )


def audit_close(audit, user):
    """Close an audit (leads): every assignment must be submitted, every claim of every sampled answer must
    have gold and no adjudicated gold may wait for a re-check. Freezes labels and gold, and stops the judge runs
    over the audit (audit.jobs.judge.judge_runs_stop_for_close): returns (audit, ids of the runs stopped)."""
    if not roles.has_role(user, roles.LEAD):
        raise PermissionDenied("Only an audit lead can close an audit.")
    with transaction.atomic():
        # The assignments first (in id order, as a submit takes its assignment then the audit): a label
        # save in flight finishes before the close, and one arriving later waits and then sees it closed.
        statuses = list(
            Assignment.objects.select_for_update()
            .filter(audit_answer__audit_id=audit.pk)
            .order_by("pk")
            .values_list("status", flat=True)
        )
        audit = type(audit).objects.select_for_update().get(pk=audit.pk)
        if audit.is_closed:
            raise AuditClosed(f"Audit {audit.name} is already closed.")
        # Before the gold check: a run's store in flight either committed first (its claims are counted) or
        # now fails its lease check and writes nothing. A refused close rolls this back: the runs go on.
        stopped = judge_runs_stop_for_close(audit, user)
        open_ = sum(s != Assignment.Status.SUBMITTED for s in statuses)
        if open_:
            raise AdjudicationError(
                f"Cannot close {audit.name}: {_n(open_, 'assignment')} not submitted (unfinished or reopened); "
                "the annotators must submit them first."
            )
        missing = gold_missing_count(audit)
        if missing:
            raise AdjudicationError(
                f"Cannot close {audit.name}: {missing} claim{'s' if missing != 1 else ''} "
                f"still {'have' if missing != 1 else 'has'} no gold label."
            )
        recheck = GoldLabel.objects.filter(audit=audit, recheck=True).count()
        if recheck:
            raise AdjudicationError(
                f"Cannot close {audit.name}: {_n(recheck, 'adjudicated gold label')} marked for re-check "
                "(a label changed after the adjudication); an adjudicator must decide again."
            )
        old = audit.status
        audit.status, audit.closed_at = AuditStatus.CLOSED, timezone.now()
        audit.save(update_fields=["status", "closed_at"])
        history.record(
            audit,
            kind="audit",
            action="closed",
            user=user,
            old={"status": old},
            new={"status": audit.status},
            reason=f"Judge runs stopped: {', '.join(map(str, stopped))}." if stopped else "",
        )
    return audit, stopped


def audit_reopen(audit, user, reason):
    """Reopen a closed audit (leads, with a reason): it returns to adjudication."""
    if not roles.has_role(user, roles.LEAD):
        raise PermissionDenied("Only an audit lead can reopen an audit.")
    reason = (reason or "").strip()
    if not reason:
        raise AdjudicationError("A reason is required to reopen a closed audit.")
    with transaction.atomic():
        audit = type(audit).objects.select_for_update().get(pk=audit.pk)
        if not audit.is_closed:
            raise AdjudicationError(f"Audit {audit.name} is not closed.")
        audit.status, audit.closed_at = AuditStatus.ADJUDICATION, None
        audit.save(update_fields=["status", "closed_at"])
        history.record(
            audit,
            kind="audit",
            action="reopened",
            user=user,
            old={"status": AuditStatus.CLOSED},
            new={"status": audit.status},
            reason=reason[:REASON_MAX],
        )
    return audit


def _n(count, noun):
    return f"{count} {noun}{'s' if count != 1 else ''} {'are' if count != 1 else 'is'}"


def gold_missing_count(audit):
    claims = audit.claims()
    return claims.count() - GoldLabel.objects.filter(audit=audit, claim__in=claims).count()
