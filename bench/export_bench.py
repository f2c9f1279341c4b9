"""Times the gold export of a 10,000-claim audit (1,000 answers x 10 claims, both annotators' labels, gold on
every claim, one judge verdict per claim, closed) in each level and format, through export_bytes() and
through the lead's download view. Throwaway SQLite file under /tmp; never the dev database.

    DEBUG=true .venv/bin/python bench/export_bench.py [N_ANSWERS] [CLAIMS_PER_ANSWER]
"""

import os
import statistics
import sys
import time
from pathlib import Path

DB = Path("/tmp/export_bench.sqlite3")
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

django.setup()

import random  # noqa: E402

from django.db import connection, reset_queries  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.tables import create_tables  # noqa: E402

VERDICTS = ["supported", "contradicted", "unsupported", "non_assertive"]


def build(n_answers, per_answer, users):
    from annotations.models import Assignment, GoldLabel, Label
    from audit.models import Answer, Audit, AuditAnswer, Claim, Dataset, JudgeVerdict, JudgeVersion, Passage

    rng, now = random.Random(11), timezone.now()
    ds = Dataset.objects.create(name="bench")
    answers = Answer.objects.bulk_create(
        Answer(
            dataset=ds,
            external_id=f"ans-{i}",
            question=f"Question {i}?",
            text="t",
            created_at=now,
            content_hash="x" * 64,
        )
        for i in range(n_answers)
    )
    passages = Passage.objects.bulk_create(
        Passage(answer=a, position=0, external_id="passage 1", text="The limit is 100 requests per minute.")
        for a in answers
    )
    claims = Claim.objects.bulk_create(
        (
            Claim(
                answer=a,
                position=p,
                text=f"=Claim {p} of {a.external_id}: the limit is {p} per minute.",
                origin="imported",
            )
            for a in answers
            for p in range(per_answer)
        ),
        batch_size=5000,
    )
    audit = Audit.objects.create(name="bench-W48", dataset=ds, status="adjudication", seed=1, size=n_answers)
    items = AuditAnswer.objects.bulk_create(
        AuditAnswer(
            audit=audit,
            answer=a,
            position=i,
            stratum=f"s{i % 4}",
            stratum_population=n_answers * 25,
            stratum_sample=n_answers // 4,
            inclusion_probability=0.01,
            weight=100.0,
        )
        for i, a in enumerate(answers)
    )
    asg = Assignment.objects.bulk_create(
        Assignment(audit_answer=it, annotator=users[s], slot="AB"[s], status="submitted", active_seconds=200)
        for it in items
        for s in (0, 1)
    )
    version = JudgeVersion.objects.create(kind="anthropic", name="verify-v1", content_hash="b" * 64)
    labels, gold, judge = [], [], []
    for i, c in enumerate(claims):
        k, p = divmod(i, per_answer)
        va = rng.choices(VERDICTS, weights=[80, 3, 10, 7])[0]
        vb = va if rng.random() < 0.9 else rng.choice(VERDICTS)
        ev = {"evidence_passage": passages[k], "evidence_start": 0, "evidence_end": 9, "evidence_text": "The limit"}
        labels += [
            Label(assignment=asg[2 * k], claim=c, verdict=va, **ev),
            Label(assignment=asg[2 * k + 1], claim=c, verdict=vb),
        ]
        gold.append(
            GoldLabel(
                audit=audit,
                claim=c,
                verdict=va,
                source="agreed" if va == vb else "adjudicated",
                adjudicator=None if va == vb else users[2],
                reason="" if va == vb else "per passage 1",
                **ev,
            )
        )
        judge.append(
            JudgeVerdict(
                claim=c,
                judge_version=version,
                raw_verdict=va,
                verdict=va,
                evidence="The limit",
                passage_external_id="passage 1",
                guard_passed=True,
            )
        )
    Label.objects.bulk_create(labels, batch_size=5000)
    GoldLabel.objects.bulk_create(gold, batch_size=5000)
    JudgeVerdict.objects.bulk_create(judge, batch_size=5000)
    Audit.objects.filter(pk=audit.pk).update(status="closed", closed_at=now)
    audit.refresh_from_db()
    return audit


def main():
    n_answers = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    per_answer = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    DB.unlink(missing_ok=True)
    create_tables()
    setup_test_environment()
    from annotations.adjudication import export
    from tests.factories import make_user

    users = [
        make_user("bench-ann1", "annotator"),
        make_user("bench-ann2", "annotator"),
        make_user("bench-adj", "adjudicator"),
    ]
    lead = make_user("bench-lead", "lead")
    t0 = time.perf_counter()
    audit = build(n_answers, per_answer, users)
    print(
        f"export bench: {n_answers} answers x {per_answer} claims = {n_answers * per_answer} claims "
        f"(built in {time.perf_counter() - t0:.1f} s; SQLite {DB}); seconds, best / median of 5"
    )
    client = Client()
    client.force_login(lead)
    for level in export.LEVELS:
        for fmt in export.FORMATS:
            times, sizes = [], set()
            for _ in range(5):
                reset_queries()
                t0 = time.perf_counter()
                data = export.export_bytes(audit, level=level, fmt=fmt)
                times.append(time.perf_counter() - t0)
                sizes.add(data)
            queries = len(connection.queries)
            t0 = time.perf_counter()
            r = client.get(f"/adjudicate/export/{audit.id}/", {"level": level, "format": fmt})
            view = time.perf_counter() - t0
            assert r.status_code == 200 and r.content in sizes, r.status_code
            print(
                f"  {level:>6} {fmt:<7} {min(times):.3f} / {statistics.median(times):.3f}  view {view:.3f}  "
                f"queries {queries}  {len(data) / 1024:,.0f} KiB  identical bytes x5: {len(sizes) == 1}"
            )
    DB.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
