"""Reads of the annotation workspace. Blind by construction: nothing here touches judge verdicts or
another annotator's assignment or labels; every read is scoped to one annotator's own rows."""

import re
from dataclasses import dataclass
from functools import cached_property

from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.http import Http404
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from annotations.models import Assignment, Label
from audit.models import Audit, AuditStatus, Claim, Passage, Verdict
from audit.spans import layers, segments

SUBMITTED = Assignment.Status.SUBMITTED
FLAG_NAMES = [  # field (Label.FLAGS, in order), short name, what it means, keyboard shortcut
    ("not_atomic", "Not atomic", "The claim bundles several assertions: one passage span cannot settle it.", "a"),
    ("needs_context", "Needs context", "The claim cannot be understood without the rest of the answer.", "c"),
    ("true_not_in_passages", "True, not in passages", "True in the world, but no passage says it.", "t"),
]
# The row's verdict, numbers and ids are written unescaped (SafeString): an enum value, digits and a URL reversed
# from two integers hold no character HTML gives a meaning to, and skipping escaping (and number formatting) saves
# a row's CPU. User text (claim, note) is always escaped.
VERDICT_VALUES = frozenset(Verdict.values)
TRUE, FALSE = SafeString("true"), SafeString("false")
FLAGS = Label.FLAGS
CITATION = re.compile(r"\[(\d{1,3})\]")


def annotator_audits(user):
    """[{audit, total, submitted, next_assignment_id}] for the audits where user has assignments."""
    mine = Assignment.objects.filter(annotator=user, audit_answer__audit=OuterRef("pk"))
    audits = (
        Audit.objects.filter(Exists(mine))
        .exclude(status=AuditStatus.DRAFT)
        .annotate(
            total=Count("items__assignments", filter=Q(items__assignments__annotator=user)),
            submitted=Count(
                "items__assignments", filter=Q(items__assignments__annotator=user, items__assignments__status=SUBMITTED)
            ),
            next_id=Subquery(mine.exclude(status=SUBMITTED).order_by("audit_answer__position").values("pk")[:1]),
        )
        .order_by("-created_at")
    )
    return [
        {
            "audit": a,
            "total": a.total,
            "submitted": a.submitted,
            "next_assignment_id": None if a.is_closed else a.next_id,
        }
        for a in audits
    ]


def own_assignment(user, assignment_id, lock=False):
    """The user's assignment with its audit and answer, or 404 (someone else's is indistinguishable
    from a missing one). lock: row-lock the assignment (only), inside the caller's transaction."""
    assignments = Assignment.objects.select_related("audit_answer__audit", "audit_answer__answer")
    if lock:
        assignments = assignments.select_for_update(of=("self",))
    try:
        return assignments.get(pk=assignment_id, annotator=user)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None


def own_claim(assignment, claim_id):
    try:
        return assignment.audit_answer.audit.claims().get(pk=claim_id, answer_id=assignment.audit_answer.answer_id)
    except Claim.DoesNotExist:
        raise Http404("No such claim in this answer.") from None


def answer_claims(answer_id, audit=None):
    """The answer's claims to label: all of them, or in a calibration audit only the sampled ones."""
    claims = audit.claims() if audit is not None and audit.is_calibration else Claim.objects
    return list(claims.filter(answer_id=answer_id).order_by("position"))


def labels_by_claim(assignment):
    return {lb.claim_id: lb for lb in Label.objects.filter(assignment=assignment)}


@dataclass
class Row:
    """One claim of the answer with this annotator's label (None before the first save)."""

    claim: Claim
    label: Label | None
    passage: Passage | None  # the evidence passage, when there is one
    evidence_required: bool = True
    url_prefix: str = ""  # claim_url_prefix() of the assignment

    @cached_property
    def pk(self):  # as text, so the template writes it unlocalised
        return SafeString(self.claim.pk)

    @cached_property
    def verdict(self):
        verdict = self.label.verdict if self.label else ""
        return SafeString(verdict) if verdict in VERDICT_VALUES else verdict

    @cached_property
    def evidence_missing(self):  # read up to three times by the row's hint
        lb = self.label
        return bool(lb and lb.verdict and Verdict(lb.verdict).needs_evidence and not lb.evidence_passage_id)

    @cached_property
    def pressed(self):  # {verdict or flag: "true" / "false"}: aria-pressed of the row's buttons (a flag posts it)
        lb, on = self.label, dict.fromkeys(VERDICT_VALUES, FALSE)
        if self.verdict:
            on[self.verdict] = TRUE
        return on | {f: TRUE if lb and getattr(lb, f"flag_{f}") else FALSE for f in FLAGS}

    @property
    def note(self):
        return self.label.note if self.label else ""

    @property
    def unplaced(self):  # the claim's text was not found in the answer
        return self.claim.span_start is None

    @cached_property
    def url(self):  # every control of the row posts here
        return SafeString(f"{self.url_prefix}{self.claim.pk}/")

    @cached_property
    def evidence_quote(self):  # the quoted evidence, shortened as the truncatechars filter would (without its call)
        text = self.label.evidence_text if self.label else ""
        return text if len(text) <= 400 else Truncator(text).chars(400)

    @property
    def blocks_submit(self):
        return self.evidence_missing and self.evidence_required and not self.label.note


def claim_url_prefix(assignment_id):
    """ "/label/7/claim/": with a claim's id and "/" the URL its row posts to; reversed once a page, not once a row."""
    return reverse("workspace_label", args=[assignment_id, 0]).removesuffix("0/")


def passage_blocks(passages, labels):
    """[(passage, [(piece, claim ids, claim numbers)])]: this annotator's evidence marked in each passage, each
    piece with the ids ("3 7") and numbers ("1, 4") of the claims quoting it, as text ("" for none)."""
    by_passage = {}
    for lb in labels:
        if lb.evidence_passage_id:
            by_passage.setdefault(lb.evidence_passage_id, []).append((lb.evidence_start, lb.evidence_end, lb.claim))
    return [
        (p, [_marked(piece, claims) for piece, claims in layers(p.text, by_passage.get(p.pk, []))]) for p in passages
    ]


def _marked(piece, claims):
    if not claims:
        return piece, "", ""
    return (
        piece,
        SafeString(" ".join(str(c.pk) for c in claims)),
        SafeString(", ".join(c.number for c in claims)),
    )


def progress(assignment):
    """Where this assignment sits in the annotator's own queue of the audit: one query."""
    rows = list(
        Assignment.objects.filter(
            annotator_id=assignment.annotator_id, audit_answer__audit_id=assignment.audit_answer.audit_id
        )
        .order_by("audit_answer__position")
        .values_list("pk", "status")
    )
    ids = [pk for pk, _ in rows]
    i = ids.index(assignment.pk)
    open_after = [pk for pk, st in rows[i + 1 :] + rows[:i] if st != SUBMITTED]
    return {
        "index": i + 1,
        "total": len(rows),
        "submitted": sum(st == SUBMITTED for _, st in rows),
        "prev_id": ids[i - 1] if i > 0 else None,
        "next_id": ids[i + 1] if i + 1 < len(ids) else None,
        "next_open_id": open_after[0] if open_after else None,
    }


def cited(text, passages):
    """(text, None) when the piece cites no passage, else (None, [(piece, passage or None)]): the answer's [n]
    markers linked to its n-th passage (1-based). The template loops over pieces only where there are cites."""
    out, at = [], 0
    for m in CITATION.finditer(text):
        n = int(m.group(1))
        if 1 <= n <= len(passages):
            out += [(text[at : m.start()], None), (m.group(0), passages[n - 1])]
            at = m.end()
    return (None, [*out, (text[at:], None)]) if out else (text, None)


def answer_segments(text, claims, passages):
    """[(text, cited pieces, claim pk, claim number)] of the answer text, each claim's span a segment."""
    spans = [(c.span_start, c.span_end, c) for c in claims]
    return [
        (*cited(piece, passages), *((SafeString(c.pk), c.number) if c else ("", "")))
        for piece, c in segments(text, spans)
    ]


def workspace(assignment):
    """Everything the page shows, in a fixed number of queries whatever the number of claims and passages."""
    answer = assignment.audit_answer.answer
    claims = answer_claims(answer.pk, assignment.audit_answer.audit)
    labels = labels_by_claim(assignment)
    passages = list(Passage.objects.filter(answer=answer).order_by("position"))
    by_pk = {p.pk: p for p in passages}
    claims_by_pk = {c.pk: c for c in claims}
    for lb in labels.values():
        lb.claim = claims_by_pk.get(lb.claim_id)
    required, prefix = assignment.audit_answer.audit.evidence_required, claim_url_prefix(assignment.pk)
    rows = [
        Row(c, labels.get(c.pk), by_pk.get(getattr(labels.get(c.pk), "evidence_passage_id", None)), required, prefix)
        for c in claims
    ]
    return {
        "rows": rows,
        "answer_segments": answer_segments(answer.text, claims, passages),
        "passages": passage_blocks(passages, [lb for lb in labels.values() if lb.claim]),
        "progress": progress(assignment),
    }


def row(assignment, claim, label=None):
    """One claim row after a save: label given, or read (with its evidence passage) when not."""
    if label is None:
        label = Label.objects.filter(assignment=assignment, claim=claim).select_related("evidence_passage").first()
    passage = label.evidence_passage if label and label.evidence_passage_id else None
    return Row(claim, label, passage, assignment.audit_answer.audit.evidence_required, claim_url_prefix(assignment.pk))


def passages_with_marks(assignment, passage_ids):
    """The given passages re-rendered with their marks (after evidence moved): two queries."""
    passages = list(Passage.objects.filter(pk__in=passage_ids, answer_id=assignment.audit_answer.answer_id))
    labels = Label.objects.filter(assignment=assignment, evidence_passage_id__in=passage_ids).select_related("claim")
    return passage_blocks(passages, list(labels))


def queue(user, audit_id):
    """The annotator's own answers in an audit with status and labelled-claim counts; 404 if none."""
    try:
        audit = Audit.objects.get(pk=audit_id)
    except Audit.DoesNotExist:
        raise Http404("No such audit.") from None
    labelled = (
        Label.objects.filter(assignment=OuterRef("pk"))
        .exclude(verdict="")
        .values("assignment")
        .annotate(n=Count("pk"))
        .values("n")
    )
    claims = (
        audit.claims()
        .filter(answer=OuterRef("audit_answer__answer"))
        .values("answer")
        .annotate(n=Count("pk"))
        .values("n")
    )
    items = list(
        Assignment.objects.filter(annotator=user, audit_answer__audit=audit)
        .select_related("audit_answer__answer")
        .order_by("audit_answer__position")
        .annotate(labelled=Subquery(labelled), claims=Subquery(claims))
        .defer("audit_answer__answer__text", "audit_answer__answer__meta")
    )
    if not items:
        raise Http404("You have no answers in this audit.")
    for i, item in enumerate(items, start=1):
        item.minutes, item.index = round(item.active_seconds / 60, 1), i
    return audit, items


def any_assignment(assignment_id):
    """For the lead's reopen action only."""
    try:
        return Assignment.objects.select_related("audit_answer__audit", "audit_answer__answer", "annotator").get(
            pk=assignment_id
        )
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
