"""Import benchmark: a synthetic JSONL file of N answers, imported into a throwaway SQLite db.

    DEBUG=true .venv/bin/python bench/import_bench.py [N] [--claims K] [--verdicts]

Each answer has 5 passages of ~150 words (and K claims, default 0; with --verdicts each claim carries an
external verdict with evidence quoted from passage 1). Prints file size, import time, answers/s and
peak memory (ru_maxrss of this process, which also covers Django and the generation).
The database is /tmp/import_bench.sqlite3, recreated each run; BENCH_DATABASE_URL=postgres://... runs it on
a throwaway PostgreSQL database you created instead (it is migrated and flushed).
"""

import argparse
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
DB = Path("/tmp/import_bench.sqlite3")
DATA = Path("/tmp/import_bench.jsonl")
# BENCH_DATABASE_URL: a throwaway PostgreSQL database you created (it is migrated and filled), else SQLite.
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL") or f"sqlite:///{DB}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")

WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "it",
    "be",
    "are",
    "was",
    "api",
    "user",
    "request",
    "server",
    "cache",
    "token",
    "limit",
    "error",
    "retry",
    "timeout",
    "database",
    "index",
    "query",
    "page",
    "answer",
    "passage",
    "claim",
    "audit",
    "model",
    "release",
    "version",
    "support",
    "account",
    "billing",
    "invoice",
    "region",
    "cluster",
    "node",
    "deploy",
    "config",
    "value",
]


def generate(n, claims, verdicts, path):
    rng = random.Random(7)
    # A pool of passages reused with a unique prefix: generation stays fast, every passage differs.
    pool = [" ".join(rng.choices(WORDS, k=150)) + "." for _ in range(997)]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            passages = [
                {
                    "id": f"p{j + 1}",
                    "source": f"kb/doc-{(i * 5 + j) % 50_000}",
                    "text": f"Doc {i}-{j}. " + pool[(i * 5 + j) % len(pool)],
                }
                for j in range(5)
            ]
            sentences = [" ".join(passages[0]["text"].split()[k * 8 : (k + 1) * 8]) for k in range(max(claims, 3))]
            rec = {
                "id": f"ans-{i}",
                "question": f"Question {i}: how do I {' '.join(rng.choices(WORDS, k=8))}?",
                "answer": ". ".join(sentences) + ".",
                "passages": passages,
                "created_at": f"2026-11-{1 + i % 28:02d}T10:00:00Z",
                "meta": {"model": f"m{i % 3}", "product_area": f"area{i % 7}"},
            }
            if claims:
                rec["claims"] = [
                    {"text": s} | ({"verdict": "supported", "evidence": s, "passage_id": "p1"} if verdicts else {})
                    for s in sentences[:claims]
                ]
            f.write(json.dumps(rec) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=100_000)
    ap.add_argument("--claims", type=int, default=0)
    ap.add_argument("--verdicts", action="store_true")
    args = ap.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    from audit.ingest.services import answers_import
    from audit.models import Answer, Claim, Passage
    from bench.tables import create_tables

    t0 = time.perf_counter()
    generate(args.n, args.claims, args.verdicts, DATA)
    size = DATA.stat().st_size
    print(f"generated {args.n:,} answers, {size / 1e6:,.0f} MB in {time.perf_counter() - t0:.1f} s")
    for p in (DB, Path(f"{DB}-wal"), Path(f"{DB}-shm")):
        p.unlink(missing_ok=True)

    create_tables()
    call_command("flush", interactive=False, verbosity=0)  # a reused throwaway PostgreSQL database

    t0, cpu0 = time.perf_counter(), time.process_time()
    with DATA.open("rb") as f:
        batch = answers_import(f, dataset_name="bench", file_name=DATA.name)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    assert batch.status == "done", batch.errors[:5]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"imported {batch.created:,} answers ({Passage.objects.count():,} passages, {Claim.objects.count():,} "
        f"claims) in {elapsed:.1f} s: {batch.created / elapsed:,.0f} answers/s, {size / 1e6 / elapsed:,.1f} MB/s"
    )
    # CPU time of this process: less sensitive than wall time to other work on a shared machine.
    print(f"CPU time of the import: {cpu:.1f} s; load average now {os.getloadavg()[0]:.1f}")
    print(f"peak memory (ru_maxrss): {peak_mb:,.0f} MB")
    t0 = time.perf_counter()
    with DATA.open("rb") as f:
        again = answers_import(f, dataset_name="bench", file_name=DATA.name)
    print(
        f"re-import of the same file: {again.status}, {again.unchanged:,} unchanged, {time.perf_counter() - t0:.1f} s"
    )
    assert Answer.objects.count() == args.n
    DATA.unlink()


if __name__ == "__main__":
    main()
