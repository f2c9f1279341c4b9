"""Demo labels: both annotators' labels for part of the demo audit, derived from RAGTruth's human spans.

Annotator A (slot A) is RAGTruth's human annotation mapped claim by claim: a claim whose span in the
answer overlaps a Conflict span is contradicted; otherwise, overlapping a Baseless span, unsupported;
otherwise supported. A claim that
cannot be located in the answer (no span_start/span_end) is labelled supported, like text no RAGTruth
span covers. RAGTruth marks spans, not evidence, so demo labels carry no evidence, and each says so in
its note.

Annotator B (slot B) is the same labelling with a documented, deterministic perturbation, so that the
adjudication queue has real-looking disputes: for each claim, random.Random("demo-B:<answer external
id>:<claim position>") draws a number; below FLIP_RATE (10%) B's verdict is flipped: supported ->
unsupported, unsupported -> supported, contradicted -> unsupported. The seed uses no database ids, so
the same demo data gives the same disagreements on every machine.

Only the first `fraction` of the audit's answers (by queue position, rounded) are filled. Their
assignments are marked is_demo=True and submitted with a plausible active time (45 s + 20 s per claim,
jittered by the same kind of seeded draw), then gold_on_submit() makes the agreed gold and leaves the
disagreements to the adjudication queue. Everything shown from these rows is tagged "demo data".
"""

import math
import random
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotations.adjudication.services import gold_on_submit
from annotations.models import Assignment, Label
from audit import history
from audit.models import AuditAnswer, Verdict

FLIP_RATE = 0.10
FLIP = {
    Verdict.SUPPORTED: Verdict.UNSUPPORTED,
    Verdict.UNSUPPORTED: Verdict.SUPPORTED,
    Verdict.CONTRADICTED: Verdict.UNSUPPORTED,
}
NOTE = "Demo label derived from RAGTruth human spans (no evidence span in the source data)."


def human_verdict(claim, spans):
    """The verdict RAGTruth's spans give a claim (see the module docstring)."""
    if claim.span_start is None or claim.span_end is None:
        return Verdict.SUPPORTED
    overlapping = [
        s.get("label_type", "")
        for s in spans
        if isinstance(s, dict) and s.get("start", 0) < claim.span_end and claim.span_start < s.get("end", 0)
    ]
    if any("Conflict" in t for t in overlapping):
        return Verdict.CONTRADICTED
    if any("Baseless" in t for t in overlapping):
        return Verdict.UNSUPPORTED
    return Verdict.SUPPORTED


def perturbed_verdict(verdict, answer_external_id, position):
    rng = random.Random(f"demo-B:{answer_external_id}:{position}")
    return FLIP.get(verdict, verdict) if rng.random() < FLIP_RATE else verdict


def _seconds(answer_external_id, slot, n_claims):
    rng = random.Random(f"demo-time:{answer_external_id}:{slot}")
    return 45 + 20 * n_claims + rng.randint(0, 60)


def demo_labels_load(audit, fraction=0.6):
    """Fill and submit both assignments of the first `fraction` of the audit's answers; returns their count."""
    items = list(
        AuditAnswer.objects.filter(audit=audit)
        .select_related("answer", "audit")
        .order_by("position")
        .prefetch_related("answer__claims", "assignments")
    )
    items = items[: math.floor(len(items) * fraction + 0.5)]
    now = timezone.now()
    with transaction.atomic():
        for item in items:
            assignments = {a.slot: a for a in item.assignments.all()}
            if set(assignments) != {"A", "B"}:
                raise ValueError(
                    f"Answer {item.answer.external_id} of {audit.name} needs two assignments (A and B) "
                    "before demo labels can be loaded: assign the audit first."
                )
            if all(a.status == Assignment.Status.SUBMITTED for a in assignments.values()):
                continue  # loaded before (or labelled by people): leave it
            _fill(item, assignments, now)
            gold_on_submit(item)
    return len(items)


def _fill(item, assignments, now):
    answer = item.answer
    claims = sorted(answer.claims.all(), key=lambda c: c.position)
    spans = answer.meta.get("human_labels") or []
    for slot, assignment in assignments.items():
        for claim in claims:
            verdict = human_verdict(claim, spans)
            if slot == "B":
                verdict = perturbed_verdict(verdict, answer.external_id, claim.position)
            Label.objects.update_or_create(
                assignment=assignment, claim=claim, defaults={"verdict": verdict, "note": NOTE}
            )
        seconds = _seconds(answer.external_id, slot, len(claims))
        assignment.status, assignment.is_demo, assignment.active_seconds = Assignment.Status.SUBMITTED, True, seconds
        assignment.started_at, assignment.submitted_at = now - timedelta(seconds=seconds), now
        assignment.save()
        # No user: nobody did this; the annotator the demo labels stand for is named in the new value.
        history.record(
            item.audit,
            kind="assignment",
            action="demo_submitted",
            answer=answer,
            new={
                "slot": slot,
                "annotator": assignment.annotator.username,
                "claims": len(claims),
                "active_seconds": seconds,
            },
            reason="Demo labels derived from RAGTruth human spans.",
        )
