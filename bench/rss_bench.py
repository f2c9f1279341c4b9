"""Resident memory of the real processes: a gunicorn web worker idle (after serving the login page), the same
worker after an audit report and a Parquet gold export, and an idle task worker (db_worker). Read from
/proc/<pid>/status (VmRSS). Throwaway SQLite database under /tmp with the demo loaded; loopback only.

    .venv/bin/python bench/rss_bench.py            # this tree
    .venv/bin/python bench/rss_bench.py /work/main # another checkout, for a before/after
"""

import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
PY = str(Path(__file__).resolve().parent.parent / ".venv" / "bin" / "python")
PORT = 8791


def rss_mib(pid):
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def children(pid):
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def settle(pid, seconds=2.0):
    """RSS once it stops growing for `seconds` (a bench may wait; a test never does)."""
    last, stable_since = -1.0, time.monotonic()
    while time.monotonic() - stable_since < seconds:
        now = rss_mib(pid)
        if abs(now - last) > 0.5:
            last, stable_since = now, time.monotonic()
        time.sleep(0.2)
    return last


def run(cmd, env):
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def client():
    jar = CookieJar()
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)), jar


def get(opener, path):
    with opener.open(f"http://127.0.0.1:{PORT}{path}", timeout=120) as r:
        return r.read()


def login(opener, jar):
    get(opener, "/login/")
    token = next(c.value for c in jar if c.name == "csrftoken")
    data = urlencode({"username": "lead", "password": "claim-audit-demo", "csrfmiddlewaretoken": token}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/login/", data=data, headers={"Referer": "http://127.0.0.1/"})
    opener.open(req, timeout=60).read()


def main():
    tmp = Path(tempfile.mkdtemp(prefix="rss_bench_"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "DEBUG": "1",
        "PLAIN_STATIC": "1",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SETTINGS_MODULE": "claimaudit.settings",
        "PYTHONPATH": str(ROOT),
    }
    schema = {**env, "DJANGO_SETTINGS_MODULE": "tests.schema_settings"}
    if not (ROOT / "tests" / "schema_settings.py").exists():
        schema = env
    run([PY, "manage.py", "migrate", "--run-syncdb", "-v0"], schema)
    run([PY, "manage.py", "load_demo"], env)
    web = subprocess.Popen(
        [PY, "-m", "gunicorn", "claimaudit.wsgi", "--bind", f"127.0.0.1:{PORT}", "--workers", "1"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [PY, "manage.py", "db_worker", "--no-reload", "--no-startup-delay"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        opener, jar = client()
        for _ in range(100):
            try:
                get(opener, "/login/")
                break
            except OSError:
                time.sleep(0.2)
        (wpid,) = children(web.pid)
        idle = settle(wpid)
        login(opener, jar)
        get(opener, "/audits/")
        light = settle(wpid)
        audit_id = re.search(rb'href="/audits/(\d+)/"', get(opener, "/audits/")).group(1).decode()
        get(opener, f"/reports/{audit_id}/")
        get(opener, f"/adjudicate/export/{audit_id}/?level=claim&format=parquet")
        heavy = settle(wpid)
        worker_idle = settle(worker.pid)
        print(f"tree: {ROOT}")
        print(f"web worker idle (login page served):        {idle:6.1f} MiB")
        print(f"web worker after login + audits list:        {light:6.1f} MiB")
        print(f"web worker after a report + parquet export:  {heavy:6.1f} MiB")
        print(f"task worker (db_worker) idle:                {worker_idle:6.1f} MiB")
    finally:
        for p in (web, worker):
            p.terminate()
            p.wait(timeout=30)


if __name__ == "__main__":
    main()
