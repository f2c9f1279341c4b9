"""Builders for adjudication and export tests: audits with both annotators' assignments and labels as rows
(the workspace that normally writes them is built separately)."""

from django.utils import timezone

from annotations.adjudication.services import gold_on_submit
from annotations.models import Assignment, Label
from audit.models import AuditAnswer, Claim, JudgeVerdict, JudgeVersion, Passage
from tests.factories import make_answer, make_audit


def default_verdicts(answer_index, position, slot):
    """Every claim supported, except claim 0 of each answer on which B says unsupported (one dispute each)."""
    return "unsupported" if position == 0 and slot == "B" else "supported"


def build_audit(
    ann_a,
    ann_b,
    *,
    n_answers=2,
    n_claims=3,
    verdicts=default_verdicts,
    submitted=True,
    evidence_slots="A",
    name="2026-W48",
    status="labelling",
):
    """An audit whose answers are all assigned to ann_a (slot A) and ann_b (slot B), every claim labelled.

    Supported/contradicted labels of the slots in evidence_slots quote the claim's own passage."""
    answers = [make_answer(external_id=f"{name}-ans{i}", n_claims=n_claims) for i in range(n_answers)]
    audit = make_audit(answers, name=name, status=status)
    items = list(AuditAnswer.objects.filter(audit=audit).order_by("position"))
    now = timezone.now()
    for i, item in enumerate(items):
        passages = {p.position: p for p in Passage.objects.filter(answer_id=item.answer_id)}
        for slot, user in (("A", ann_a), ("B", ann_b)):
            a = Assignment.objects.create(
                audit_answer=item,
                annotator=user,
                slot=slot,
                status=Assignment.Status.SUBMITTED if submitted else Assignment.Status.STARTED,
                submitted_at=now if submitted else None,
                active_seconds=120,
            )
            labels = []
            for claim in Claim.objects.filter(answer_id=item.answer_id).order_by("position"):
                v = verdicts(i, claim.position, slot)
                kw = {}
                if slot in evidence_slots and v in ("supported", "contradicted"):
                    p = passages[claim.position % len(passages)]
                    start = p.text.index("Paris")
                    kw = {
                        "evidence_passage": p,
                        "evidence_start": start,
                        "evidence_end": start + 5,
                        "evidence_text": "Paris",
                    }
                labels.append(Label(assignment=a, claim=claim, verdict=v, **kw))
            Label.objects.bulk_create(labels)
    return audit


def add_judge(audit, verdict_of, *, name="judge-v1", content_hash="a" * 64):
    """One judge version with a verdict on every claim of the audit: verdict_of(claim) -> verdict."""
    version = JudgeVersion.objects.create(kind=JudgeVersion.Kind.ANTHROPIC, name=name, content_hash=content_hash)
    rows = []
    for claim in Claim.objects.filter(answer__audit_items__audit=audit):
        v = verdict_of(claim)
        rows.append(
            JudgeVerdict(
                claim=claim,
                judge_version=version,
                raw_verdict=v,
                verdict=v,
                evidence="Paris" if v == "supported" else "",
                guard_passed=True if v == "supported" else None,
                passage_external_id="passage 1" if v == "supported" else "",
            )
        )
    JudgeVerdict.objects.bulk_create(rows)
    return version


def submit_all(audit):
    for item in AuditAnswer.objects.filter(audit=audit).select_related("audit"):
        gold_on_submit(item)
