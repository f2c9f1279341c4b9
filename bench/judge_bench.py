"""Judge throughput: the anthropic backend (real SDK) against the fake Messages API with a fixed delay per call.

Prints wall time against the ideal `calls x delay / concurrency` for each concurrency (target: >= 90% of
ideal), and, for reference, the same number of calls sent by a bare thread pool with the SDK and no
database ("sdk"): on a small shared machine that ceiling is itself below the ideal. The fake caches like
the API (a prefix is readable once the first response writing it began; none under the model's minimum),
and the passages are long enough to cache: "sibling reads" is the share of each answer's verify calls
after the first that read the cache (target 100%), "read share" the cache reads among all cached tokens.
Run: .venv/bin/python bench/judge_bench.py [--answers 64] [--claims 5] [--delay 0.2] [--concurrency 8 32]
The fake server runs in its own process (so its threads do not share our interpreter lock), on a throwaway
SQLite file under /tmp.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DB = "/tmp/judge_bench.sqlite3"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")  # DEBUG off

import django  # noqa: E402


def setup_db():
    for suffix in ("", "-wal", "-shm"):
        Path(DB + suffix).unlink(missing_ok=True)
    django.setup()

    from bench.tables import create_tables

    create_tables()


def make_answers(name, n, claims):
    from django.utils import timezone

    from audit.models import Answer, Dataset, Passage

    ds = Dataset.objects.create(name=name)
    for i in range(n):
        sentences = [f"Fact {name}-{i}-{j} is stated in passage {j}." for j in range(claims)]
        a = Answer.objects.create(
            dataset=ds,
            external_id=f"a{i}",
            question="q?",
            text=" ".join(sentences),
            created_at=timezone.now(),
            content_hash="x" * 64,
        )
        more = "More background text, long enough for the passages to be cached. " * 12
        Passage.objects.bulk_create(
            Passage(answer=a, position=j, external_id=f"doc-{j}", text=f"Background text. {s} {more}")
            for j, s in enumerate(sentences)
        )
    return ds


def sdk_only(url, ds, calls, concurrency):
    """The same number of verify requests sent straight from a thread pool with the sync SDK, no database:
    what this machine (SDK + fake server, sharing 2 cores) allows, to read the runner's figure against."""
    from concurrent.futures import ThreadPoolExecutor

    import anthropic

    from audit.judge import prompts
    from audit.models import Passage

    spec = prompts.build_spec()
    passages = list(Passage.objects.filter(answer__dataset=ds).order_by("answer_id", "position")[:5])
    blocks = prompts.verify_system_blocks(spec, [(p.external_id, p.text) for p in passages])
    bodies = [prompts.verify_params(spec, blocks, p.text) for p in passages]
    client = anthropic.Anthropic(api_key="bench", base_url=url, max_retries=0, timeout=30)
    with ThreadPoolExecutor(concurrency) as pool:
        started = time.perf_counter()
        list(pool.map(lambda i: client.messages.create(**bodies[i % len(bodies)]), range(calls)))
        return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=128)
    parser.add_argument("--claims", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    args = parser.parse_args()
    setup_db()
    from django.conf import settings
    from django.test.utils import override_settings

    import audit.judge.llm  # noqa: F401 - the SDK import (about a second here) is start-up, not throughput
    from audit.judge.services import judge_run_create, judge_run_execute

    minimum = json.dumps(settings.JUDGE_MIN_CACHE_TOKENS)
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_anthropic", "--delay", str(args.delay), "--min-cache-tokens", minimum],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        print(
            f"fake Messages API at {url}, {args.delay * 1000:.0f} ms per call; "
            f"{args.answers} answers x {args.claims} claims"
        )
        print(
            f"{'concurrency':>11} {'calls':>6} {'wall s':>7} {'ideal s':>8} {'of ideal':>9} "
            f"{'sdk s':>7} {'sdk/ideal':>9} {'claims':>7} {'sibling reads':>13} {'read share':>10}"
        )
        for c in args.concurrency:
            ds = make_answers(f"c{c}", args.answers, args.claims)
            with override_settings(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="bench", JUDGE_CONCURRENCY=c):
                run = judge_run_create(backend="anthropic", dataset=ds)
                started = time.perf_counter()
                run = judge_run_execute(run.pk)
                wall = time.perf_counter() - started
            calls = args.answers * (1 + args.claims)
            ideal = calls * args.delay / c
            assert run.status == "done" and run.claims_done == args.answers * args.claims, run.message
            ceiling = sdk_only(url, ds, calls, c)
            # Each answer writes its prefix once (its first verify call); every later call should read it.
            prefix = run.cache_write_tokens / args.answers if run.cache_write_tokens else 0
            reads = run.cache_read_tokens / prefix if prefix else 0
            siblings = args.answers * (args.claims - 1)
            cached = run.cache_read_tokens + run.cache_write_tokens
            print(
                f"{c:>11} {calls:>6} {wall:>7.2f} {ideal:>8.2f} {ideal / wall:>8.0%} {ceiling:>7.2f} "
                f"{ideal / ceiling:>8.0%} {run.claims_done:>7} {reads / siblings:>12.0%} "
                f"{run.cache_read_tokens / cached if cached else 0:>9.0%}"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
