"""SQLite under a long import: 16 annotators saving labels while the task worker imports a large file.

    .venv/bin/python bench/sqlite_contention_bench.py [--answers 200000] [--writers 16] [--pause 0.25]

A synthetic JSONL file (--answers answers, 5 passages of --passage-words words each) is uploaded the way the
web does it (spooled, a queued batch), then a real `manage.py db_worker` process imports it while --writers
threads, each logged in as its own annotator, POST label saves (verdict changes, through Django's test
client: the whole middleware and view stack) with --pause seconds between saves, until the import ends.
Prints the import's duration, the saves made, the errors (any status but 200; target 0) and the save
latency percentiles (target p99 under 2 s). The database is /tmp/contention_bench.sqlite3, recreated.
"""

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DB = Path("/tmp/contention_bench.sqlite3")
DATA = Path("/tmp/contention_bench.jsonl")
SPOOL = Path("/tmp/contention_bench_spool")
ENV = {
    "DATABASE_URL": f"sqlite:///{DB}",
    "DEBUG": "true",
    "IMPORT_SPOOL_DIR": str(SPOOL),
    "ALLOWED_HOSTS": "testserver",
    "IMPORT_MAX_UPLOAD_BYTES": str(4 << 30),
}
os.environ.update(ENV)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")


def generate(n, words, path):
    vocab = [
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
        "api",
        "user",
        "request",
        "server",
        "cache",
        "token",
        "limit",
        "error",
        "retry",
    ]
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            body = " ".join(vocab[(i * 7 + k) % len(vocab)] for k in range(words))
            passages = ",".join(f'{{"id": "p{j}", "text": "Doc {i}-{j}. {body}."}}' for j in range(5))
            f.write(
                f'{{"id": "ans-{i}", "question": "Question {i}?", "answer": "Answer {i}. {body[:80]}.", '
                f'"passages": [{passages}], "meta": {{"model": "m{i % 3}"}}}}\n'
            )


def writer(user, assignment, claims, ready, go, stop, pause, latencies, errors):
    from django.db import connection
    from django.test import Client

    client = Client()
    client.force_login(user)
    client.post(f"/label/{assignment.pk}/claim/{claims[0].pk}/", {"verdict": "supported"})  # warm-up, not counted
    ready.release()
    verdicts, i = ("supported", "unsupported"), 0
    while not stop.is_set():
        go.wait()
        claim = claims[i % len(claims)]
        t0 = time.perf_counter()
        try:
            r = client.post(f"/label/{assignment.pk}/claim/{claim.pk}/", {"verdict": verdicts[i % 2]})
            status = r.status_code
        except Exception as e:
            status = f"{type(e).__name__}: {e}"
        latencies.append(time.perf_counter() - t0)
        if status != 200:
            errors.append(status)
        i += 1
        stop.wait(pause)
    connection.close()


def lock_probe(stop, waits):
    """Time to take SQLite's write lock, every 50 ms: the lock's share of the latency, without Django's CPU."""
    conn = sqlite3.connect(DB, isolation_level=None, timeout=60)
    while not stop.wait(0.05):
        t0 = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        waits.append(time.perf_counter() - t0)
        conn.execute("ROLLBACK")
    conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=200_000)
    ap.add_argument("--passage-words", type=int, default=60)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--pause", type=float, default=0.25, help="seconds between one writer's saves")
    ap.add_argument("--baseline", type=float, default=10, help="seconds of saves with no import first")
    args = ap.parse_args()

    import django

    django.setup()
    from django.core.files import File

    from audit.ingest.services import import_enqueue
    from audit.models import Answer, Claim, ImportBatch
    from bench.tables import create_tables
    from tests.factories import make_assigned_audit, make_user

    for p in (DB, Path(f"{DB}-wal"), Path(f"{DB}-shm"), *(SPOOL.iterdir() if SPOOL.exists() else ())):
        p.unlink(missing_ok=True)
    create_tables()
    t0 = time.perf_counter()
    generate(args.answers, args.passage_words, DATA)
    print(
        f"generated {args.answers:,} answers, {DATA.stat().st_size / 1e6:,.0f} MB in {time.perf_counter() - t0:.1f} s"
    )

    people = []
    for w in range(args.writers):
        user = make_user(f"ann{w}", "annotator")
        _, (assignment, *_) = make_assigned_audit(user, name=f"bench-{w}", n_answers=1, n_claims=4)
        people.append((user, assignment, list(Claim.objects.filter(answer_id=assignment.audit_answer.answer_id))))
    with DATA.open("rb") as f:
        batch = import_enqueue(File(f, name="bench.jsonl"), dataset_name="bench")
    DATA.unlink()
    assert batch.pk, batch.errors

    ready, go, stop, latencies, errors = threading.Semaphore(0), threading.Event(), threading.Event(), [], []
    threads = [
        threading.Thread(target=writer, args=(*p, ready, go, stop, args.pause, latencies, errors), daemon=True)
        for p in people
    ]
    for t in threads:
        t.start()
    for _ in threads:
        ready.acquire()
    go.set()  # the baseline: the same saves, no import
    time.sleep(args.baseline)
    go.clear()
    report("no import", args.writers, latencies, errors)
    del latencies[:], errors[:]
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1"],
        cwd=ROOT,
        env={**os.environ, **ENV},
    )
    while ImportBatch.objects.get(pk=batch.pk).status == "queued":
        time.sleep(0.05)
    started = time.perf_counter()
    go.set()
    waits = []
    probe = threading.Thread(target=lock_probe, args=(stop, waits), daemon=True)
    probe.start()
    worker.wait()
    import_seconds = time.perf_counter() - started
    stop.set()
    for t in threads:
        t.join()
    batch.refresh_from_db()
    print(
        f"import: {batch.status}, {batch.created:,} answers ({Answer.objects.count():,} visible) in "
        f"{import_seconds:.1f} s; load average {os.getloadavg()[0]:.1f}"
    )
    report("during the import", args.writers, latencies, errors)
    probe.join()
    report("write lock wait (probe)", 1, waits, [])


def report(when, writers, latencies, errors):
    lat = sorted(latencies) or [float("nan")]
    p = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else lat * 99
    print(
        f"{when}: {writers} writers, {len(lat):,} label saves, errors: {len(errors)} "
        f"{sorted(set(map(str, errors)))[:5]}; latency p50 {p[49]:.3f} s, p99 {p[98]:.3f} s, max {lat[-1]:.3f} s"
    )


if __name__ == "__main__":
    main()
