"""Sampling bench: draw 150 answers from a pool of 1,000,000 with two stratification keys.

Run from /work/main:  DEBUG=true .venv/bin/python bench/sampling_bench.py [--pool N] [--only sqlite|postgres]
                                                                            [--judge]
Builds the pool with one INSERT ... SELECT in a throwaway database (SQLite file under /tmp, PostgreSQL
database bench_sampling on 127.0.0.1:5432) and times the preview (GROUP BY) and the full draw.
--judge also gives every answer 1-2 claims and a verdict per claim under one judge version (about 14%
of answers fail, 2% stay unjudged), derives the per-answer outcomes once (AnswerJudgement) and times strata
judge x meta.model, then the preview after a judge run on 150 more answers (incremental update).
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQLITE_PATH = "/tmp/bench_sampling.sqlite3"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_URL = "postgres://postgres@127.0.0.1:5432/bench_sampling"

# Skewed model mix (gpt-4 half the traffic) and a deterministic length spread over 0..1499 chars.
MODEL_CASE = (
    "CASE WHEN i % 20 < 10 THEN 'gpt-4' WHEN i % 20 < 16 THEN 'claude' WHEN i % 20 < 19 THEN 'llama' ELSE 'mistral' END"
)
LENGTH = "((CAST(i AS BIGINT) * 7919 + (CAST(i AS BIGINT) / 7) * 104729) % 1500)"
# Constant SQL: only the constants above and integers (pool size, dataset id) are substituted in.
POOL_SQL = {
    "sqlite": (
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {n}) "
        "INSERT INTO audit_answer (dataset_id, external_id, question, text, created_at, meta, content_hash, "
        "length) SELECT {ds}, 'a' || i, 'q', '', '2026-11-20 10:00:00', "
        "json_object('model', {model}, 'doc_type', 'd' || (i % 3)), '', {length} FROM c"
    ),
    "postgresql": (
        "INSERT INTO audit_answer (dataset_id, external_id, question, text, created_at, meta, content_hash, "
        "length) SELECT {ds}, 'a' || i, 'q', '', '2026-11-20 10:00:00+00', "
        "jsonb_build_object('model', {model}, 'doc_type', 'd' || (i % 3)), '', {length} "
        "FROM generate_series(1, {n}) AS i"
    ),
}

# Claims: position 0 for every answer, position 1 for every third. Verdicts: one per claim, except
# claims of answers with id % 50 = 0 (unjudged); the bad ones spread by a multiplicative hash of the claim id.
CLAIMS_SQL = (
    "INSERT INTO audit_claim (answer_id, position, text, origin, judge_version_id) "
    "SELECT id, 0, 'claim', 'judge', {jv} FROM audit_answer WHERE dataset_id = {ds} "
    "UNION ALL SELECT id, 1, 'claim', 'judge', {jv} FROM audit_answer WHERE dataset_id = {ds} AND id % 3 = 0"
)
VERDICT_CASE = (
    "CASE WHEN (c.id * 7919) % 100 < 8 THEN 'unsupported' WHEN (c.id * 7919) % 100 < 10 "
    "THEN 'contradicted' ELSE 'supported' END"
)
VERDICTS_SQL = (
    "INSERT INTO audit_judgeverdict (claim_id, judge_version_id, raw_verdict, verdict, evidence, "
    "passage_external_id, reason, created_at) SELECT c.id, {jv}, {v}, {v}, '', '', '', "
    "'2026-11-20 10:00:00+00' FROM audit_claim c WHERE c.answer_id % 50 <> 0"
)

NEW_VERDICTS_SQL = (
    "INSERT INTO audit_judgeverdict (claim_id, judge_version_id, raw_verdict, verdict, evidence, "
    "passage_external_id, reason, created_at) SELECT c.id, {jv}, 'supported', 'supported', '', '', '', "
    "'2026-11-21 10:00:00+00' FROM audit_claim c WHERE c.answer_id % 50 = 0 AND c.answer_id <= 7500"
)


def add_judge_verdicts(cur, ds, vendor):
    from audit.models import JudgeVersion

    jv = JudgeVersion.objects.create(kind="offline", name="bench-judge", content_hash="bench-judge")
    t = time.perf_counter()
    for sql in (CLAIMS_SQL, VERDICTS_SQL.replace("{v}", VERDICT_CASE)):
        cur.execute(sql.replace("{jv}", str(jv.id)).replace("{ds}", str(ds.id)))
    cur.execute("ANALYZE")
    cur.execute("SELECT (SELECT COUNT(*) FROM audit_claim), (SELECT COUNT(*) FROM audit_judgeverdict)")
    claims, verdicts = cur.fetchone()
    print(f"[{vendor}] {claims:,} claims and {verdicts:,} verdicts added in {time.perf_counter() - t:.1f} s")


def explain(vendor, qs):
    from django.db import connection

    sql, params = qs.query.sql_with_params()
    with connection.cursor() as cur:
        cur.execute(("EXPLAIN QUERY PLAN " if vendor == "sqlite" else "EXPLAIN ") + sql, params)
        rows = cur.fetchall()
    for r in rows:
        print(f"[{vendor}]   plan: {r[-1]}")


def child(n, judge=False):
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
    django.setup()
    from django.apps import apps
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from audit.models import Audit, Dataset
    from audit.sampling import services

    settings.MIGRATION_MODULES = {c.label: None for c in apps.get_app_configs()}  # plain syncdb of the models
    call_command("migrate", run_syncdb=True, verbosity=0)
    vendor = connection.vendor
    t = time.perf_counter()
    ds = Dataset.objects.create(name="bench")
    with connection.cursor() as cur:
        sql = POOL_SQL[vendor]
        for name, value in (("{model}", MODEL_CASE), ("{length}", LENGTH), ("{n}", str(int(n))), ("{ds}", str(ds.id))):
            sql = sql.replace(name, value)
        cur.execute(sql)
        cur.execute("ANALYZE")
        print(f"[{vendor}] pool of {n:,} answers built in {time.perf_counter() - t:.1f} s")
        if judge:
            add_judge_verdicts(cur, ds, vendor)
        if vendor == "sqlite":  # a live database does not hold a million fresh rows in its WAL
            cur.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def timed(label, fn):
        t0 = time.perf_counter()
        out = fn()
        print(f"[{vendor}] {label}: {time.perf_counter() - t0:.3f} s")
        return out

    keys = ["judge", "meta.model"] if judge else ["meta.model", "length"]
    if judge:
        from django.db.models import Count

        from audit.sampling import population as pop
        from audit.sampling.judgements import judgements_sync

        jv = services._judge_version_id(ds, keys, {})
        timed("one-off derivation of answer judgements from the bulk-loaded verdicts", lambda: judgements_sync(jv))
        qs, exprs = pop.strata(pop.population(ds), keys, jv)
        explain(vendor, qs.order_by().values(**exprs).annotate(_n=Count("pk")))
    p = timed(
        f"preview, strata {' x '.join(keys)} (GROUP BY)",
        lambda: services.audit_preview(dataset=ds, strata_keys=keys, size=150),
    )
    print(f"[{vendor}]   {len(p['design'])} strata, population {p['population_size']:,}")
    for alloc, seed in (("proportional", 1), ("equal", 2), ("neyman", 3)):
        audit = timed(
            f"create audit, 150 answers, {alloc} allocation (counts + draw + insert)",
            lambda a=alloc, s=seed: services.audit_create(
                name=f"bench-{a}", dataset=ds, strata_keys=keys, allocation_method=a, size=150, seed=s
            ),
        )
        assert audit.items.count() == 150
    timed(
        "create audit, simple random sample of 150",
        lambda: services.audit_create(name="bench-srs", dataset=ds, size=150, seed=4),
    )
    timed(
        "create audit, 150 answers, stratified, excluding answers already audited",
        lambda: services.audit_create(
            name="bench-excl",
            dataset=ds,
            strata_keys=keys,
            size=150,
            seed=5,
            population_filter={"exclude_audited": True},
        ),
    )
    again = services.audit_create(name="bench-repeat", dataset=ds, strata_keys=keys, size=150, seed=1)
    first = Audit.objects.get(name="bench-proportional")
    same = set(again.items.values_list("answer_id", flat=True)) == set(first.items.values_list("answer_id", flat=True))
    print(f"[{vendor}] same seed, same sample: {same}")
    if judge:  # a judge run on 150 unjudged answers: the next sampling recomputes only those answers
        with connection.cursor() as cur:
            cur.execute(NEW_VERDICTS_SQL.replace("{jv}", str(jv)))
        timed(
            "preview after a judge run added verdicts to 150 answers (incremental)",
            lambda: services.audit_preview(dataset=ds, strata_keys=keys, size=150),
        )


def prepare(backend):
    if backend == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(SQLITE_PATH + suffix).unlink(missing_ok=True)
        return f"sqlite:///{SQLITE_PATH}"
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS bench_sampling")
        conn.execute("CREATE DATABASE bench_sampling")
    return PG_URL


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool", type=int, default=1_000_000)
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--judge", action="store_true", help="stratify by judge x meta.model over judged answers")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.pool, args.judge)
    for backend in [args.only] if args.only else ["sqlite", "postgres"]:
        env = {**os.environ, "DATABASE_URL": prepare(backend), "DEBUG": os.environ.get("DEBUG", "true")}
        env.pop("TEST_DATABASE_NAME", None)
        cmd = [sys.executable, __file__, "--child", "--pool", str(args.pool), *(["--judge"] if args.judge else [])]
        subprocess.run(cmd, env=env, cwd=ROOT, check=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
