"""API import benchmark: the same file through `manage.py import_answers` and through the HTTP API.

    .venv/bin/python bench/api_bench.py [N] [--batch 500]

Generates N answers (default 10,000; 5 passages of ~150 words each, as bench/import_bench.py), imports
them once with the command (its own process) and once by POSTing JSON lines of `--batch` records to
/api/v1/datasets/{name}/answers on a gunicorn server (one sync worker, DEBUG off), into a throwaway SQLite
database (/tmp/api_bench.sqlite3, recreated each run). Prints answers/s side by side and the peak memory
(VmHWM) of the command process and of the server's worker process.
"""

import argparse
import http.client
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.import_bench import generate  # noqa: E402

DB = Path("/tmp/api_bench.sqlite3")
DATA = Path("/tmp/api_bench.jsonl")
PY = str(ROOT / ".venv" / "bin" / "python")
ENV = {
    **os.environ,
    "DATABASE_URL": f"sqlite:///{DB}",
    "DJANGO_SETTINGS_MODULE": "bench.syncdb_settings",  # tables from the models (see that module)
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(48),
    "ALLOWED_HOSTS": "127.0.0.1",
    "SECURE_SSL_REDIRECT": "false",
    "PLAIN_STATIC": "true",
    "IMPORT_MAX_UPLOAD_BYTES": str(1 << 30),
}


def manage(*args, **kw):
    return subprocess.run([PY, str(ROOT / "manage.py"), *args], env=ENV, check=True, capture_output=True, text=True)


def peak_mb(pid):
    """VmHWM (peak resident set) of a live process, in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def run_command(n):
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            [PY, str(ROOT / "manage.py"), "import_answers", str(DATA), "--dataset", "cmd", "--no-progress"],
            env=ENV,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        _, status, usage = os.wait4(p.pid, 0)  # ru_maxrss of the command's own process
        elapsed = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    assert p.returncode == 0 and f"{n:,} created" in text, text[-2000:]
    own = float(re.search(r"lines, ([0-9.]+) s\)", text).group(1))  # the command's own timing of the import
    return elapsed, own, usage.ru_maxrss / 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_pid(master):
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            return int(stat.parent.name)
    return None


def run_api(n, batch, token):
    port = free_port()
    server = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "gunicorn"),
            "claimaudit.wsgi",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            "1",
            "--timeout",
            "600",
            "--log-level",
            "warning",
        ],
        env=ENV,
        cwd=ROOT,
    )
    try:
        conn = _connect(port)
        lines = DATA.read_bytes().splitlines(keepends=True)
        t0, created = time.perf_counter(), 0
        for i in range(0, len(lines), batch):
            body = b"".join(lines[i : i + batch])
            conn.request(
                "POST",
                "/api/v1/datasets/api/answers",
                body=body,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"},
            )
            r = conn.getresponse()
            text = r.read().decode()
            assert r.status == 200, text[:2000]
            created += int(re.search(r'"created":\s*(\d+)', text).group(1))
        elapsed = time.perf_counter() - t0
        assert created == n, created
        return elapsed, peak_mb(worker_pid(server.pid))
    finally:
        server.terminate()
        server.wait()


def _connect(port):
    deadline = time.monotonic() + 60
    while True:  # wait for the server to listen: a connection refused means not yet
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            conn.request("GET", "/api/v1/openapi.json")
            conn.getresponse().read()
            return conn
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=500)
    args = ap.parse_args()
    generate(args.n, 0, False, DATA)
    size = DATA.stat().st_size
    for p in (DB, Path(f"{DB}-wal"), Path(f"{DB}-shm")):
        p.unlink(missing_ok=True)
    manage("migrate", "--run-syncdb", "--verbosity", "0")
    manage("create_user", "bench", "--password", secrets.token_urlsafe(16), "--roles", "lead")
    token = manage("create_token", "bench", "--name", "bench").stdout.strip()
    print(f"{args.n:,} answers, 5 passages of ~150 words each: {size / 1e6:,.1f} MB of JSON lines")

    cmd_s, cmd_own, cmd_mb = run_command(args.n)
    api_s, api_mb = run_api(args.n, args.batch, token)
    print(f"{'':34} {'seconds':>8} {'answers/s':>10} {'peak MB':>8}")
    print(f"{'manage.py import_answers (process)':34} {cmd_s:8.1f} {args.n / cmd_s:10,.0f} {cmd_mb:8.0f}")
    print(f"{'  of which the import itself':34} {cmd_own:8.1f} {args.n / cmd_own:10,.0f}")
    print(f"{f'API, batches of {args.batch}':34} {api_s:8.1f} {args.n / api_s:10,.0f} {api_mb:8.0f}  (server worker)")
    print(
        f"API rate / command's import rate: {cmd_own / api_s:.2f} (target at least 0.5); "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    DATA.unlink()


if __name__ == "__main__":
    main()
