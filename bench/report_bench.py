"""Times the full audit report (page render incl. the 10,000-resample cluster bootstraps) and the htmx
judge fragment (the version switch builds only the judge section) for an audit of 150 answers / 900
claims and one of 2,000 answers / 12,000 claims, each with three earlier audits of the same dataset for
the trend; prints queries of both, and how far the bootstrap bounds move with the seed.
Throwaway SQLite file under /tmp; never the dev database.

    DEBUG=true .venv/bin/python bench/report_bench.py
"""

import os
import statistics
import sys
import time
from pathlib import Path

DB = Path(os.environ.get("REPORT_BENCH_DB", "/tmp/report_bench.sqlite3"))
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.db import connection, reset_queries  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.tables import create_tables  # noqa: E402

VERDICTS = ["supported", "contradicted", "unsupported", "non_assertive"]
PREVALENCE = [0.80, 0.03, 0.10, 0.07]
CLAIMS_PER_ANSWER = 6


def build(n_answers, name, rng, users, versions):
    from annotations.models import Assignment, GoldLabel, Label
    from audit.models import Answer, Audit, AuditAnswer, Claim, Dataset, JudgeVerdict

    ds = Dataset.objects.create(name=name)
    now = timezone.now()
    answers = Answer.objects.bulk_create(
        Answer(dataset=ds, external_id=f"{name}-{i}", question="q?", text="t", created_at=now, content_hash="x" * 64)
        for i in range(n_answers)
    )
    claims = Claim.objects.bulk_create(
        Claim(answer=a, position=p, text=f"claim {p}", origin="imported")
        for a in answers
        for p in range(CLAIMS_PER_ANSWER)
    )
    strata = ["judge:supported", "judge:unsupported", "judge:contradicted"]
    population = {
        "judge:supported": 90 * n_answers,
        "judge:unsupported": 7 * n_answers,
        "judge:contradicted": 3 * n_answers,
    }
    audits = []
    for week in range(4):  # three earlier audits, then the one the bench reports on
        audit = Audit.objects.create(
            name=f"{name}-w{week}",
            dataset=ds,
            status="adjudication",
            seed=week,
            size=n_answers,
            population_size=sum(population.values()),
        )
        sample = {s: len(range(k, n_answers, 3)) for k, s in enumerate(strata)}
        items = AuditAnswer.objects.bulk_create(
            AuditAnswer(
                audit=audit,
                answer=a,
                position=i,
                stratum=strata[i % 3],
                stratum_population=population[strata[i % 3]],
                stratum_sample=sample[strata[i % 3]],
                inclusion_probability=sample[strata[i % 3]] / population[strata[i % 3]],
                weight=population[strata[i % 3]] / sample[strata[i % 3]],
            )
            for i, a in enumerate(answers)
        )
        asg = Assignment.objects.bulk_create(
            Assignment(
                audit_answer=it,
                annotator=users[(i + s) % len(users)],
                slot="AB"[s],
                status="submitted",
                active_seconds=int(rng.integers(120, 900)),
            )
            for i, it in enumerate(items)
            for s in (0, 1)
        )
        a = rng.choice(VERDICTS, size=len(claims), p=PREVALENCE)
        b = np.where(rng.random(len(claims)) < 0.9, a, rng.choice(VERDICTS, size=len(claims), p=PREVALENCE))
        gold = np.where(rng.random(len(claims)) < 0.5, a, b)
        labels = []
        for i, c in enumerate(claims):
            labels.append(Label(assignment=asg[2 * (i // CLAIMS_PER_ANSWER)], claim=c, verdict=a[i]))
            labels.append(Label(assignment=asg[2 * (i // CLAIMS_PER_ANSWER) + 1], claim=c, verdict=b[i]))
        Label.objects.bulk_create(labels, batch_size=5000)
        GoldLabel.objects.bulk_create(
            (GoldLabel(audit=audit, claim=c, verdict=gold[i], source="agreed") for i, c in enumerate(claims)),
            batch_size=5000,
        )
        audits.append(audit)
    for v in versions:
        judge = np.where(rng.random(len(claims)) < 0.88, gold, rng.choice(VERDICTS, size=len(claims), p=PREVALENCE))
        JudgeVerdict.objects.bulk_create(
            (
                JudgeVerdict(claim=c, judge_version=v, raw_verdict=judge[i], verdict=judge[i], guard_passed=True)
                for i, c in enumerate(claims)
            ),
            batch_size=5000,
        )
    return audits[-1]


def stability(audit):
    """How far the 95% bounds of the A-vs-B claim agreement move over 5 seeds (10,000 resamples)."""
    from annotations.report.stats_agreement import agreement
    from annotations.report.stats_common import VERDICTS

    try:
        from annotations.report.frames import tables
    except ImportError:  # an older layout of the report (run against an earlier commit)
        return
    _, cl, _, _ = tables(audit, None)
    both = cl[cl["A"].notna() & cl["B"].notna()]
    runs = [agreement(both["answer_id"], both["A"], both["B"], VERDICTS, seed=s) for s in range(5)]
    for key in ("percent_agreement", "cohen_kappa", "gwet_ac1"):
        bounds = [r[key]["ci"] for r in runs]
        spread = max(max(b[i] for b in bounds) - min(b[i] for b in bounds) for i in (0, 1))
        print(
            f"        bootstrap {key:<17} bounds over 5 seeds: max spread {spread:.4f} "
            f"(+-{spread / 2:.4f}); printed MC error {runs[0][key]['ci_mc_error']:.4f}"
        )


def cleanup():
    for suffix in ("", "-wal", "-shm"):
        Path(f"{DB}{suffix}").unlink(missing_ok=True)


def main():
    cleanup()
    create_tables()
    setup_test_environment()
    from annotations.report.build import build_report
    from audit.models import JudgeVersion
    from tests.factories import make_user

    lead = make_user("bench-lead", "lead")
    users = [make_user(f"bench-ann{i}", "annotator") for i in range(4)]
    versions = [
        JudgeVersion.objects.create(kind=k, name=n, content_hash=n.ljust(64, "0"))
        for k, n in (("offline", "baseline"), ("anthropic", "prompt-v1"))
    ]
    client = Client()
    client.force_login(lead)
    rng = np.random.default_rng(2026)
    print(
        f"report bench (SQLite {DB}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}); "
        "wall seconds best / median of 5, CPU seconds of the request (best) in brackets"
    )
    for n in (150, 2000):
        audit = build(n, f"ds{n}", rng, users, versions)
        page, pure, frag, page_cpu, frag_cpu = [], [], [], [], []
        for _ in range(5):
            reset_queries()
            t0, c0 = time.perf_counter(), time.process_time()
            r = client.get(f"/reports/{audit.id}/")
            page.append(time.perf_counter() - t0)
            page_cpu.append(time.process_time() - c0)
            assert r.status_code == 200, r.status_code
            queries = len(connection.queries)
            reset_queries()
            t0, c0 = time.perf_counter(), time.process_time()
            f = client.get(f"/reports/{audit.id}/?version={versions[0].id}", headers={"HX-Request": "true"})
            frag.append(time.perf_counter() - t0)
            frag_cpu.append(time.process_time() - c0)
            assert f.status_code == 200, f.status_code
            frag_queries = len(connection.queries)
            t0 = time.perf_counter()
            build_report(audit)
            pure.append(time.perf_counter() - t0)
        print(
            f"  {n:>5} answers / {n * CLAIMS_PER_ANSWER:>6} claims: page {min(page):.3f} / "
            f"{statistics.median(page):.3f} (CPU {min(page_cpu):.3f})  build_report {min(pure):.3f} / "
            f"{statistics.median(pure):.3f}  queries {queries}  html {len(r.content) // 1024} KiB"
        )
        print(
            f"        judge fragment (htmx version switch) {min(frag):.3f} / {statistics.median(frag):.3f} "
            f"(CPU {min(frag_cpu):.3f})  queries {frag_queries}  html {len(f.content) // 1024} KiB"
        )
        stability(audit)
        for path in ("claims/?gold=any", "claims/?disagree=annotators", "answers/?gold=any"):
            times = []
            for _ in range(5):
                reset_queries()
                t0 = time.perf_counter()
                r = client.get(f"/reports/{audit.id}/{path}")
                times.append(time.perf_counter() - t0)
                assert r.status_code == 200, r.status_code
            print(
                f"        drill-down {path:<28} {min(times):.3f} / {statistics.median(times):.3f}  "
                f"queries {len(connection.queries)}"
            )
    cleanup()


if __name__ == "__main__":
    main()
