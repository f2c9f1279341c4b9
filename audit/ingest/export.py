"""A dataset's answers back out in the native import shape (JSON lines), meta of passages and claims kept.

Re-importing the export into the same dataset is a no-op: every record normalises to the content hash it
was imported with. Imported claims carry the verdict of their external judge. Answers are read in chunks
(four queries each), so memory stays bounded whatever the dataset's size.
"""

import json

from django.db.models import Prefetch

from audit.models import Answer, Claim, ClaimOrigin, JudgeVerdict, JudgeVersion, Passage

CHUNK = 500


def dataset_records(dataset):
    """Yield the native record of every answer of the dataset, ordered by id."""
    last = 0
    while True:
        chunk = list(_answers(dataset, last)[:CHUNK])
        if not chunk:
            return
        yield from (_record(a) for a in chunk)
        last = chunk[-1].id


def dataset_jsonl(dataset):
    for rec in dataset_records(dataset):
        yield (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _answers(dataset, after):
    verdicts = JudgeVerdict.objects.filter(judge_version__kind=JudgeVersion.Kind.EXTERNAL).order_by("-id")
    claims = Claim.objects.filter(origin=ClaimOrigin.IMPORTED).order_by("position")
    return (
        Answer.objects.filter(dataset=dataset, id__gt=after)
        .order_by("id")
        .prefetch_related(
            Prefetch("passages", queryset=Passage.objects.order_by("position"), to_attr="passage_list"),
            Prefetch(
                "claims",
                queryset=claims.prefetch_related(Prefetch("judge_verdicts", queryset=verdicts, to_attr="external")),
                to_attr="claim_list",
            ),
        )
    )


def _record(a):
    rec = {"id": a.external_id, "question": a.question, "answer": a.text, "created_at": a.created_at.isoformat()}
    if a.meta:
        rec["meta"] = a.meta
    rec["passages"] = [_part({"id": p.external_id, "source": p.source, "text": p.text}, p.meta) for p in a.passage_list]
    if a.claim_list:
        rec["claims"] = [_claim(c) for c in a.claim_list]
    return rec


def _claim(c):
    out = {"text": c.text}
    if c.external:
        v = c.external[0]
        out |= {"verdict": v.raw_verdict, "evidence": v.evidence, "passage_id": v.passage_external_id}
        out["reason"] = v.reason
    return _part(out, c.meta)


def _part(out, meta):
    if meta:
        out["meta"] = meta
    return out
