"""Writes of the annotation workspace. Every write locks its assignment row first, so a double click,
two tabs or a save racing the submit are serialised: the unique (assignment, claim) constraint never trips."""

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotations.adjudication.services import AuditClosed, gold_on_reopen, gold_on_submit
from annotations.models import Assignment, Label
from annotations.workspace.selectors import answer_claims, labels_by_claim, own_assignment, own_claim
from audit import history, roles
from audit.models import Audit, AuditStatus, HistoryEvent, Passage, Verdict
from audit.notify.events import notify_answer_reopened
from audit.spans import dom_to_raw_offsets
from audit.validation import row_id

UNSET = object()
FLAGS = Label.FLAGS
MAX_TIME_INCREMENT = 120  # seconds accepted per time-on-task report
MAX_NOTE = 5000
CLOSED = "This audit is closed: its labels are frozen."
SUBMITTED = "This answer is submitted and locked. Ask the audit lead to reopen it."


class Refused(Exception):
    """The assignment cannot change now (submitted, audit closed): HTTP 409."""


class Invalid(ValueError):
    """The request names something wrong (passage, offsets, verdict): HTTP 400."""


def _refuse_closed(assignment):
    """Read the audit's status again after the assignment lock is held: the audit object came with the
    request and may predate a close. audit_close locks every assignment of the audit before it writes,
    so a save either finishes before the close or sees it here."""
    audit = assignment.audit_answer.audit
    audit.status = Audit.objects.values_list("status", flat=True).get(pk=audit.pk)
    if audit.is_closed:
        raise Refused(CLOSED)


def _lock(assignment):
    """Re-read the assignment's mutable state under a row lock and refuse edits when locked."""
    fresh = (
        Assignment.objects.select_for_update().only("status", "started_at", "omission", "note").get(pk=assignment.pk)
    )
    _refuse_closed(assignment)
    if fresh.status == Assignment.Status.SUBMITTED:
        raise Refused(SUBMITTED)
    assignment.status, assignment.started_at = fresh.status, fresh.started_at
    assignment.omission, assignment.note = fresh.omission, fresh.note
    return fresh


def _mark_started(assignment):
    if assignment.status == Assignment.Status.ASSIGNED:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.STARTED, started_at=now)
        assignment.status, assignment.started_at = Assignment.Status.STARTED, now


def check_evidence(answer_id, passage_id, start, end, quoted, raw=False):
    """Return (passage, start, end, text) after proving passage.text[start:end] == quoted. Offsets are
    the browser's (see dom_to_raw_offsets) unless raw: offsets into the stored text (an undo)."""
    try:
        passage = Passage.objects.only("id", "answer_id", "external_id", "text").get(
            pk=int(passage_id), answer_id=answer_id
        )
        start, end = int(start), int(end)
    except (Passage.DoesNotExist, TypeError, ValueError):
        raise Invalid("The evidence names no passage of this answer.") from None
    if not raw:
        start, end = dom_to_raw_offsets(passage.text, start, end)
    if not (0 <= start < end <= len(passage.text)):
        raise Invalid(f"The evidence offsets {start}-{end} fall outside passage {passage.external_id}.")
    quote = passage.text[start:end]
    if quote.replace("\r\n", "\n").replace("\r", "\n") != (quoted or "").replace("\r\n", "\n"):
        raise Invalid(
            f"The selected text does not match passage {passage.external_id} at {start}-{end}. "
            "Reload the page and select it again."
        )
    return passage, start, end, quote


def _label_state(label):
    state = {"verdict": label.verdict, "note": label.note, "evidence": label.evidence_state()}
    state.update({f: getattr(label, f"flag_{f}") for f in FLAGS})
    return state


def _check_fields(verdict, note):
    if verdict is not UNSET and verdict not in Verdict.values and verdict != "":
        raise Invalid(f"Unknown verdict {verdict!r}.")
    if note is not UNSET and len(note) > MAX_NOTE:
        raise Invalid(f"The note is longer than {MAX_NOTE} characters.")


def claim_label_save(assignment, claim, *, user, verdict=UNSET, evidence=UNSET, flags=None, note=UNSET, undoes=None):
    """Set the given fields of the user's label on claim; fields left UNSET keep their value, so two tabs
    editing different fields do not overwrite each other. evidence: None clears it, else a dict
    {passage, start, end, text} checked against the passage. undoes: the id of the history event this
    save reverts (recorded as an "undo", even when it changes nothing). Returns (label, old): old holds
    the previous values of the fields that changed, None when nothing changed."""
    _check_fields(verdict, note)
    if claim.answer_id != assignment.audit_answer.answer_id:
        raise Invalid("This claim belongs to another answer.")
    with transaction.atomic():
        _lock(assignment)
        label = Label.objects.select_for_update().filter(assignment=assignment, claim=claim).first()
        return _label_apply(assignment, claim, label, user, verdict, evidence, flags, note, undoes)


def own_claim_label_save(user, assignment_id, claim_id, *, verdict=UNSET, evidence=UNSET, flags=None, note=UNSET):
    """claim_label_save as the workspace posts it, once per verdict, so with its reads folded: the user's own
    assignment is read and row-locked in one statement with its audit and answer, the label with its claim
    in the next (the claim alone only on its first save). Returns (assignment, claim, label, old); Http404
    when the assignment is not the user's or the claim not in its answer.
    The audit status read with the lock may, on PostgreSQL, predate a close that committed while this
    waited; that close needed every assignment submitted, so the locked row's own status refuses the save."""
    _check_fields(verdict, note)
    with transaction.atomic():
        assignment = own_assignment(user, assignment_id, lock=True)
        if assignment.audit_answer.audit.is_closed:
            raise Refused(CLOSED)
        if assignment.status == Assignment.Status.SUBMITTED:
            raise Refused(SUBMITTED)
        label = (
            Label.objects.select_for_update(of=("self",))
            .select_related("claim", "evidence_passage")
            .filter(assignment=assignment, claim_id=row_id(claim_id))  # an oversized id finds nothing
            .first()
        )
        claim = label.claim if label else own_claim(assignment, claim_id)
        label, old = _label_apply(assignment, claim, label, user, verdict, evidence, flags, note, None)
    return assignment, claim, label, old


def _label_apply(assignment, claim, label, user, verdict, evidence, flags, note, undoes):
    """The write of a save, under the assignment's lock. The lock serialises every save of this assignment,
    so a missing label cannot appear meanwhile: build it here and write it once (an insert)."""
    checked = None
    if evidence not in (UNSET, None):
        checked = check_evidence(
            claim.answer_id,
            *(evidence.get(k) for k in ("passage", "start", "end", "text")),
            raw=undoes is not None,
        )
    label = label or Label(assignment=assignment, claim=claim)
    old = _label_state(label)
    if verdict is not UNSET:
        label.verdict = verdict
    if note is not UNSET:
        label.note = note.strip()
    for name, value in (flags or {}).items():
        if name not in FLAGS:
            raise Invalid(f"Unknown flag {name!r}.")
        setattr(label, f"flag_{name}", bool(value))
    if evidence is None:
        label.set_evidence()
    elif checked:
        label.set_evidence(*checked)
    new = _label_state(label)
    changed = {k for k in new if new[k] != old[k]}
    if not changed and undoes is None:
        return label, None  # same value again (double click, second tab): nothing to record
    if changed:
        label.version += 1
        label.save(force_insert=label.pk is None)
        _mark_started(assignment)
    history.record(
        assignment.audit_answer.audit,
        kind="label",
        action="undo" if undoes else "save",
        user=user,
        answer=assignment.audit_answer.answer,
        claim=claim,
        old={k: old[k] for k in changed},
        new={k: new[k] for k in changed} | ({"undoes": undoes} if undoes else {}),
    )
    return label, ({k: old[k] for k in changed} or None)


def claim_label_undo(assignment, *, user):
    """Revert the user's latest label change on this answer that is not undone yet, as a new save with
    its own history event (so undo can go back several steps, and the trail shows each one).
    Returns (claim_id, label, old) or raises Invalid when there is nothing left to undo."""
    with transaction.atomic():
        _lock(assignment)
        events = HistoryEvent.objects.filter(
            audit_id=assignment.audit_answer.audit_id,
            answer_id=assignment.audit_answer.answer_id,
            user=user,
            kind="label",
            action__in=("save", "undo"),
        ).order_by("-id")
        undone, target = set(), None
        for event in events.only("id", "action", "claim_id", "old", "new")[:500]:
            if event.action == "undo":
                undone.add(event.new.get("undoes"))
            elif event.id not in undone:
                target = event
                break
        if target is None:
            raise Invalid("Nothing to undo on this answer.")
        old = target.old
        kw = {k: old[k] for k in ("verdict", "note", "evidence") if k in old}
        flags = {f: old[f] for f in FLAGS if f in old}
        claim = target.claim
        label, changed = claim_label_save(assignment, claim, user=user, flags=flags, undoes=target.id, **kw)
    return claim, label, changed


def assignment_fields_save(assignment, *, user, omission=UNSET, note=UNSET):
    """The answer-level fields: 'the answer omits something the question needed' and a note."""
    if note is not UNSET and len(note) > MAX_NOTE:
        raise Invalid(f"The note is longer than {MAX_NOTE} characters.")
    with transaction.atomic():
        _lock(assignment)
        old = {"omission": assignment.omission, "note": assignment.note}
        new = {
            "omission": bool(omission) if omission is not UNSET else assignment.omission,
            "note": note.strip() if note is not UNSET else assignment.note,
        }
        if new == old:
            return False
        Assignment.objects.filter(pk=assignment.pk).update(**new)
        assignment.omission, assignment.note = new["omission"], new["note"]
        _mark_started(assignment)
        history.record(
            assignment.audit_answer.audit,
            kind="assignment",
            action="answer_fields",
            user=user,
            answer=assignment.audit_answer.answer,
            old=old,
            new=new,
        )
    return True


def submit_problems(assignment, claims, labels_by_claim):
    """[(claim, message)] that block submitting; empty when the answer can be submitted."""
    required = assignment.audit_answer.audit.evidence_required
    problems = []
    for claim in claims:
        label = labels_by_claim.get(claim.pk)
        if label is None or not label.verdict:
            problems.append((claim, "needs a verdict"))
        elif required and Verdict(label.verdict).needs_evidence and not label.evidence_passage_id and not label.note:
            problems.append((claim, "needs evidence from a passage, or a note saying why there is none"))
    return problems


def assignment_submit(assignment, user, *, seconds=0):
    """Check every claim, lock the assignment and hand the answer to gold. Raises Invalid with
    .problems, or Refused. seconds: time on task not yet reported by the page."""
    assignment_time_add(assignment, seconds)  # counted even when the submit is refused below
    with transaction.atomic():
        _lock(assignment)
        claims = answer_claims(assignment.audit_answer.answer_id, assignment.audit_answer.audit)
        problems = submit_problems(assignment, claims, labels_by_claim(assignment))
        if problems:
            err = Invalid(f"{len(problems)} claim(s) are not ready.")
            err.problems = problems
            raise err
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk).update(
            status=Assignment.Status.SUBMITTED, submitted_at=now, started_at=assignment.started_at or now
        )
        assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, now
        history.record(
            assignment.audit_answer.audit,
            kind="assignment",
            action="submit",
            user=user,
            answer=assignment.audit_answer.answer,
            new={"assignment": assignment.pk},
        )
        gold_on_submit(assignment.audit_answer)
    return assignment


def assignment_time_add(assignment, seconds):
    """Add active seconds reported by the page. Capped per report and by the wall-clock time since the
    assignment was started; ignored once submitted or closed. Returns the seconds counted."""
    try:
        seconds = max(0, min(int(seconds), MAX_TIME_INCREMENT))
    except (TypeError, ValueError):
        return 0
    if not seconds or assignment.audit_answer.audit.is_closed:
        return 0
    now = timezone.now()
    if assignment.started_at:
        wall = (now - assignment.started_at).total_seconds() + MAX_TIME_INCREMENT
        seconds = max(0, min(seconds, int(wall) - assignment.active_seconds))
    updated = (
        Assignment.objects.filter(pk=assignment.pk)
        .exclude(status=Assignment.Status.SUBMITTED)
        .exclude(audit_answer__audit__status=AuditStatus.CLOSED)
        .update(
            active_seconds=F("active_seconds") + seconds,
            status=Assignment.Status.STARTED,
            started_at=Coalesce(F("started_at"), now),
        )
    )
    return seconds if updated else 0


def assignment_reopen(assignment, user, reason):
    """Lead only (the view checks the role): unlock a submitted assignment, with a recorded reason. The
    agreed gold of the answer is withdrawn until the annotator resubmits (see gold_on_reopen)."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid("Say why the answer is reopened.")
    with transaction.atomic():
        fresh = Assignment.objects.select_for_update().only("status").get(pk=assignment.pk)
        _refuse_closed(assignment)
        if fresh.status != Assignment.Status.SUBMITTED:
            raise Refused("Only a submitted answer can be reopened.")
        who = assignment.annotator
        if not (who.is_active and roles.has_role(who, roles.ANNOTATOR)):
            # Started work keeps its annotator and is never reassigned: nobody could resubmit it.
            raise Refused(f"{who.get_username()} can no longer label (deactivated or not an annotator).")
        Assignment.objects.filter(pk=assignment.pk).update(
            status=Assignment.Status.STARTED, submitted_at=None, reopen_reason=reason
        )
        assignment.status, assignment.submitted_at, assignment.reopen_reason = Assignment.Status.STARTED, None, reason
        history.record(
            assignment.audit_answer.audit,
            kind="assignment",
            action="reopen",
            user=user,
            answer=assignment.audit_answer.answer,
            new={"assignment": assignment.pk},
            reason=reason,
        )
        try:
            gold_on_reopen(assignment.audit_answer, user, reason)
        except AuditClosed as e:
            raise Refused(str(e)) from None
        notify_answer_reopened(assignment, reason)  # sent once the transaction commits
    return assignment
