"""A lead's Monday on the demo, timed step by step: `make demo`'s setup, then its processes (honcho with
Procfile.dev: runserver and the task worker) and the pages in headless Chromium: import this week's answers
(over the inline limit, so the worker imports them), judge them, make next week's audit like the demo audit
(preview, create, the worker judges the sample, then assigns it), and the first annotator's way in (the
guidelines, then the workspace). Throwaway SQLite database under a temporary directory; a free port.

    .venv/bin/python bench/monday_bench.py
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEMO = ROOT / "claimaudit" / "demo_data" / "ragtruth_qa_visible.jsonl"
PASSWORD = "claim-audit-demo"
TIMEOUT_MS = 300_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def this_weeks_file(path, copies=3):
    """The demo answers again under new ids, dated this week: about 1.5 MB, over the 1 MB inline limit."""
    with DEMO.open() as src, path.open("w") as out:
        records = [json.loads(line) for line in src if line.strip()]
        for c in range(copies):
            for r in records:
                r = {**r, "id": f"w49-{c}-{r['id']}", "created_at": "2026-12-01T09:00:00Z"}
                r.pop("claims", None)
                out.write(json.dumps(r) + "\n")
    return path


class Timer:
    def __init__(self):
        self.rows = []

    def step(self, name, fn):
        t = time.monotonic()
        result = fn()
        self.rows.append((name, time.monotonic() - t))
        print(f"{time.monotonic() - t:8.1f} s  {name}", flush=True)
        return result


def main():
    tmp = Path(tempfile.mkdtemp(prefix="monday-bench-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DJANGO_SETTINGS_MODULE")}
    env.update(
        DEBUG="true",
        WORKER_COMMAND="make worker",
        PATH=f"{BIN}{os.pathsep}{env['PATH']}",
        DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}",
        IMPORT_SPOOL_DIR=str(tmp / "spool"),
        ANTHROPIC_API_KEY="",
        PYTHONUNBUFFERED="1",
    )
    timer = Timer()
    manage = [sys.executable, "manage.py"]
    # The schema straight from the models (as the tests build it), so the figures do not wait on migrations.
    schema = {**env, "DJANGO_SETTINGS_MODULE": "tests.schema_settings"}
    timer.step(
        "make demo: migrate + load_demo",
        lambda: [
            subprocess.run([*manage, *args], cwd=ROOT, env=e, check=True, capture_output=True)
            for args, e in ((["migrate", "--run-syncdb", "--noinput"], schema), (["load_demo"], env))
        ],
    )
    proc = subprocess.Popen(
        [str(BIN / "honcho"), "-f", "Procfile.dev", "start", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    out, ready = [], threading.Event()

    def read():
        for line in proc.stdout:
            out.append(line)
            if "Starting worker" in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    timer.step("make demo: web + worker up", lambda: ready.wait(120))
    url = f"http://127.0.0.1:{port}"
    data = this_weeks_file(tmp / "this-week.jsonl")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(TIMEOUT_MS)

            def login(user):
                page.goto(f"{url}/login/")
                page.fill("input[name=username]", user)
                page.fill("input[name=password]", PASSWORD)
                page.keyboard.press("Enter")
                page.wait_for_url(f"{url}/")

            timer.step("lead logs in", lambda: login("lead"))

            def upload():
                page.goto(f"{url}/import/")
                page.set_input_files("input[name=file]", str(data))
                page.select_option("select[name=dataset]", "RAGTruth")
                page.click("form.import-form button[type=submit]")
                page.wait_for_selector("#import_result h2:has-text('Imported')")

            timer.step(f"import this week's answers ({data.stat().st_size / 1e6:.1f} MB, by the worker)", upload)

            def judge():
                page.goto(f"{url}/judge/runs/")
                page.select_option("select[name=backend]", "offline")
                page.click("form.judge-start button[type=submit]")
                page.wait_for_selector("#progress .tag.ok:has-text('Done')")

            timer.step("judge them (offline baseline, by the worker)", judge)

            def like_preview():
                page.goto(f"{url}/audits/")
                page.click("a:has-text('demo-2026-W48')")
                page.click("a:has-text('New audit like this one')")
                page.wait_for_selector("h2:has-text('Preview: RAGTruth-2026-W49')")

            timer.step("open demo-2026-W48 -> New audit like this one (preview)", like_preview)

            def like_create():
                page.click("button:has-text('Create, judge the sample and assign')")
                page.wait_for_selector("#progress .tag.ok:has-text('Done')")
                page.click("#main h1 a")  # the audit
                page.wait_for_selector("h1 .tag:has-text('Labelling')")

            timer.step("create it: sample judged and assigned", like_create)

            def annotator():
                page.context.clear_cookies()
                login("ann1")
                page.goto(f"{url}/")
                page.locator(".card", has=page.locator("h3:has-text('RAGTruth-2026-W49')")).locator(
                    "a:has-text('Label next answer')"
                ).click()
                page.wait_for_selector("h1:has-text('Annotation guidelines')")
                page.click("button:has-text('I have read them')")
                page.wait_for_selector("#claims")

            timer.step("ann1: home -> guidelines -> the first answer", annotator)
            browser.close()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    mails = [m for m in re.findall(r"Subject: (\[Claim Audit\][^\n]*)", "".join(out))]
    print(f"console emails: {len(mails)}")
    for m in mails:
        print(f"   {m}")
    total = sum(s for _, s in timer.rows)
    print(f"{total:8.1f} s  total")


if __name__ == "__main__":
    main()
