"""Times the annotation workspace through the Django test client (full middleware stack, in process):
the page and the label save, over an answer with 20 claims and 10 passages of 300 words, and counts
the bytes of a first visit (HTML + CSS + JS including htmx), raw and gzipped, with the sources as written and as
production serves them (our own CSS and JS minified by collectstatic). Throwaway SQLite file.
Also counts the keystrokes to label a 6-claim answer with sentence evidence on every claim, with the
keys before (sentence cursor only) and now (p + passage number, and the splitter that also cuts at
"word.Next"), on a real answer of the demo data (see keystrokes()).

    DEBUG=true .venv/bin/python bench/workspace_bench.py [REQUESTS]
"""

import gzip
import os
import re
import statistics
import sys
import time
from pathlib import Path

DB = Path("/tmp/workspace_bench.sqlite3")
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ["ALLOWED_HOSTS"] = "testserver"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

django.setup()

import random  # noqa: E402

from django.contrib.staticfiles import finders  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from bench.tables import create_tables  # noqa: E402
from claimaudit.staticfiles import minified  # noqa: E402

VERDICTS = ["supported", "contradicted", "unsupported", "non_assertive"]
WORDS = [
    "the",
    "service",
    "limit",
    "request",
    "minute",
    "passage",
    "region",
    "account",
    "billing",
    "plan",
    "quota",
    "retry",
    "error",
    "window",
]


def build(ann, other, n_claims=20, name="2026-W48"):
    from tests.factories import make_assigned_audit

    rng = random.Random(5)
    _, mine = make_assigned_audit(ann, other, n_answers=5, n_claims=n_claims, n_passages=10, name=name)
    a = mine[0]
    for p in a.audit_answer.answer.passages.all():
        p.text = " ".join(rng.choice(WORDS) for _ in range(300))
        p.save()
    return a


def label_all(client, a, verdict_of=lambda i: VERDICTS[i % len(VERDICTS)]):
    """Every claim gets a verdict, as after the annotator's pass (the heavier page: verdicts, warnings)."""
    for i, claim in enumerate(a.audit_answer.answer.claims.order_by("position")):
        client.post(f"/label/{a.pk}/claim/{claim.pk}/", {"verdict": verdict_of(i)}, headers={"HX-Request": "true"})


def attach_all(client, a, claims):
    """Every claim quotes 60 characters of passage i mod 10 (two claims share each passage)."""
    passages = list(a.audit_answer.answer.passages.order_by("position"))
    for i, claim in enumerate(claims):
        p = passages[i % len(passages)]
        start = 10 + 70 * (i // len(passages))
        post = {
            "evidence": "attach",
            "passage": p.pk,
            "start": start,
            "end": start + 60,
            "text": p.text[start : start + 60],
        }
        r = client.post(f"/label/{a.pk}/claim/{claim.pk}/", post, headers={"HX-Request": "true"})
        assert r.status_code == 200, r.content[:300]


def timed(n, fn):
    """Median and p95 wall time, and median CPU time of this process (the server's, as the client is in
    process: its share is small), in ms."""
    out, cpu = [], []
    for i in range(n):
        t, c = time.perf_counter(), time.process_time()
        r = fn(i)
        out.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        assert r.status_code == 200, r.content[:300]
    out.sort()
    return statistics.median(out), out[int(len(out) * 0.95) - 1], statistics.median(cpu)


def statements(fn):
    """The SQL statements one request sends, transaction control included (SQLite's BEGIN IMMEDIATE)."""
    with CaptureQueriesContext(connection) as q:
        fn()
    if os.environ.get("SHOW_SQL"):
        print("\n".join(x["sql"][:120] for x in q.captured_queries))
    return len(q.captured_queries)


def asset(name, served):
    """A static file's bytes: as written, or as production serves it (collectstatic minifies our own files)."""
    data = Path(finders.find(name)).read_bytes()
    if served and "/" not in name:  # the project's own files are the top level of static/
        data = minified(name, data.decode()).encode()
    return data


def first_visit_bytes(html, served=False):
    assets = re.findall(r'(?:href|src)="/static/([^"]+\.(?:css|js))"', html)
    files = {name: asset(name, served) for name in assets}
    raw = len(html.encode()) + sum(len(b) for b in files.values())
    gz = len(gzip.compress(html.encode())) + sum(len(gzip.compress(b)) for b in files.values())
    return raw, gz, sorted(files)


def parts(html):
    """Where a first visit's raw bytes are: the claim rows, the passages, each asset (KB)."""
    out = {"claim rows": sum(len(r.encode()) for r in re.findall(r'<li id="claim-.*?</li>', html, re.S))}
    out["passages"] = sum(len(p.encode()) for p in re.findall(r'<article class="passage".*?</article>', html, re.S))
    for name in re.findall(r'(?:href|src)="/static/([^"]+\.(?:css|js))"', html):
        out[name.rsplit("/", 1)[-1]] = len(Path(finders.find(name)).read_bytes())
    return ", ".join(f"{k} {v / 1024:.1f}" for k, v in out.items())


OLD_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s)")
NEW_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]\u00bb]*(?=(\s)|([A-Z]))")
ABBR = re.compile(
    r"(?:^|[^A-Za-z])(?:mr|mrs|ms|dr|prof|sr|jr|st|vs|no|fig|approx|inc|ltd|co|al|cf|ca|[A-Za-z](?:\.[A-Za-z])*)$", re.I
)


def sentences(text, new):
    """The sentence spans of static/evidence.js (new) or of the cursor before it (old), for ASCII text."""
    out, start = [], 0
    for m in (NEW_END if new else OLD_END).finditer(text):
        before = text[max(start, m.start() - 12) : m.start()]
        if new and (
            (m.group(0)[0] == "." and ABBR.search(before)) or (m.group(2) and not re.search(r"[a-z]{2}$|\d$", before))
        ):
            continue
        if text[start : m.end()].strip():
            out.append((start, m.end()))
        start = m.end()
    return out + ([(start, len(text))] if text[start:].strip() else [])


def keystrokes(new):
    """Keys to label the 6 claims of a real answer (the first demo answer with 3+ passages) with one evidence
    sentence each: claim i quotes the middle sentence of passage i mod P. Per claim: the verdict, the cursor
    moves, e, then j (Shift+Enter after the last). Cursor moves: . or , one sentence at a time from where the
    cursor is (the first . lands on the first sentence); with the new keys also p + the passage number, which
    lands on its first sentence, whichever is fewer."""
    import json

    path = Path(__file__).resolve().parent.parent / "claimaudit" / "demo_data" / "ragtruth_qa_visible.jsonl"
    record = next(r for r in map(json.loads, path.read_text().splitlines()) if len(r["passages"]) >= 3)
    texts = [p["text"] if isinstance(p, dict) else p for p in record["passages"]]
    spans = [sentences(t, new) for t in texts]
    flat = [(p, i) for p, ss in enumerate(spans) for i in range(len(ss))]
    keys, at = 0, None
    for claim in range(6):
        p = claim % len(texts)
        target = flat.index((p, len(spans[p]) // 2))
        walk = target + 1 if at is None else abs(target - at)
        jump = 1 + len(str(p + 1)) + len(spans[p]) // 2
        keys += 1 + (min(walk, jump) if new else walk) + 1 + 1  # verdict, cursor, e, j / Shift+Enter
        at = target
    return keys, record["id"]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    DB.unlink(missing_ok=True)
    create_tables()
    setup_test_environment()
    from tests.factories import make_user

    ann, other = make_user("ann", "annotator"), make_user("other", "annotator")
    a, a40 = build(ann, other), build(ann, other, n_claims=40, name="2026-W49")
    claims = list(a.audit_answer.answer.claims.order_by("position"))
    client = Client()
    client.force_login(ann)
    page_url = f"/label/{a.pk}/"
    for _ in range(5):
        client.get(page_url)  # warm templates and connections

    def save(i):  # every request changes a verdict, so each one writes a label and a history row
        claim = claims[i % len(claims)]
        verdict = VERDICTS[(i // len(claims) + 1) % len(VERDICTS)]
        return client.post(f"/label/{a.pk}/claim/{claim.pk}/", {"verdict": verdict}, headers={"HX-Request": "true"})

    first = a40.audit_answer.answer.claims.order_by("position").first()

    def save_first(x):  # the first verdict of a claim: an insert (and the assignment marked started)
        return client.post(f"/label/{x.pk}/claim/{first.pk}/", {"verdict": "supported"}, headers={"HX-Request": "true"})

    page = timed(n, lambda i: client.get(page_url))
    saves = timed(n, save)
    page_sql, save_sql = statements(lambda: client.get(page_url)), statements(lambda: save(n))
    first_sql = statements(lambda: save_first(a40))
    html = client.get(page_url).content.decode()  # every claim labelled by the 200 saves
    raw, gz, assets = first_visit_bytes(html)
    fresh = first_visit_bytes(client.get(f"/label/{a40.pk}/").content.decode())
    label_all(client, a40)
    html40 = client.get(f"/label/{a40.pk}/").content.decode()
    raw40, gz40, _ = first_visit_bytes(html40)
    attach_all(client, a, claims)
    evidenced = timed(n, lambda i: client.get(page_url))
    print(f"workspace bench: {n} requests each, 20 claims, 10 passages x 300 words, SQLite {DB}")
    print(
        f"  workspace page   median {page[0]:6.2f} ms   p95 {page[1]:6.2f} ms   CPU {page[2]:5.2f} ms"
        f"   {page_sql} statements"
    )
    print(
        f"  label save       median {saves[0]:6.2f} ms   p95 {saves[1]:6.2f} ms   CPU {saves[2]:5.2f} ms"
        f"   {save_sql} statements ({first_sql} on a claim's first save; target at most 7, CPU under 6 ms)"
    )
    print(
        f"  page, evidence   median {evidenced[0]:6.2f} ms   p95 {evidenced[1]:6.2f} ms   CPU {evidenced[2]:5.2f} ms"
        "   (every claim quoting a sentence of a passage, as after labelling)"
    )
    print(f"  first visit      {raw / 1024:6.1f} KB raw, {gz / 1024:5.1f} KB gzipped   (target < 150 KB, aim < 120 KB)")
    sraw, sgz, _ = first_visit_bytes(html, served=True)
    print(f"    as served      {sraw / 1024:6.1f} KB raw, {sgz / 1024:5.1f} KB gzipped   (own CSS and JS minified)")
    print(f"                   HTML {len(html.encode()) / 1024:.1f} KB + {', '.join(assets)}")
    print(f"                   KB: {parts(html)}")
    print(
        f"  40 claims        {raw40 / 1024:6.1f} KB raw, {gz40 / 1024:5.1f} KB gzipped   (target < 150 KB),"
        f" HTML {len(html40.encode()) / 1024:.1f} KB; {fresh[0] / 1024:.1f} KB before any label"
    )
    (before, rid), (after, _) = keystrokes(False), keystrokes(True)
    print(f"  keystrokes       {before} before, {after} now: 6 claims of {rid}, sentence evidence on each")
    DB.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
