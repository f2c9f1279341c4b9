"""The processes `make demo` runs (honcho with Procfile.dev: runserver and the task worker), on a temporary
SQLite database and a free port: a background import and an offline judge run started from the pages finish
on the open pages, without a reload; Ctrl+C (SIGINT to honcho) stops both processes."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.test_import import jsonl, rec

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
PASSWORD = "browser-test-password"
TIMEOUT = 120  # seconds: generous, the machine is shared
pytestmark = pytest.mark.browser


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dev_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DJANGO_SETTINGS_MODULE")}
    env.update(
        # What the Makefile's DEV_ENV sets, plus a private database, spool and a small inline limit.
        DEBUG="true",
        WORKER_COMMAND="make worker",
        PATH=f"{VENV_BIN}{os.pathsep}{env['PATH']}",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        IMPORT_SPOOL_DIR=str(tmp_path / "spool"),
        IMPORT_INLINE_BYTES="2000",
        ANTHROPIC_API_KEY="",
        PYTHONUNBUFFERED="1",
    )
    return env


class Procs:
    """honcho's output, read on a thread; wait_for(pattern) waits on an Event, never sleeps."""

    def __init__(self, proc):
        self.proc, self.lines, self.cond = proc, [], threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)  # end of output
            self.cond.notify_all()

    def wait_for(self, pattern):
        rx = re.compile(pattern)
        with self.cond:
            ok = self.cond.wait_for(
                lambda: any(line and rx.search(line) for line in self.lines) or None in self.lines, TIMEOUT
            )
            found = [m for line in self.lines if line and (m := rx.search(line))]
        assert ok and found, f"{pattern!r} not in the output:\n{''.join(x for x in self.lines if x)}"
        return found[0]


@pytest.fixture
def demo_procs(tmp_path):
    env, port = dev_env(tmp_path), free_port()
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    subprocess.run(
        [*manage, "create_user", "lead", "--password", PASSWORD, "--roles", "lead"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    proc = subprocess.Popen(
        [str(VENV_BIN / "honcho"), "-f", "Procfile.dev", "start", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    procs = Procs(proc)
    try:
        procs.wait_for(r"Quit the server with")
        procs.wait_for(r"Starting worker")
        procs.port, procs.url = port, f"http://127.0.0.1:{port}"
        yield procs
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # what Ctrl+C sends
            try:
                proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_it_runs_web_and_worker_together_and_background_jobs_finish_on_the_open_pages(demo_procs, page, tmp_path):
    pids = {name: int(demo_procs.wait_for(rf"{name}\.1 started \(pid=(\d+)\)").group(1)) for name in ("web", "worker")}
    url = demo_procs.url
    page.set_default_timeout(TIMEOUT * 1000)
    page.goto(f"{url}/login/")
    page.fill("input[name=username]", "lead")
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{url}/")

    records = [rec(i, answer=f"Paris is the capital. It has {i} million people.") for i in range(1, 21)]
    data = tmp_path / "week.jsonl"
    data.write_bytes(jsonl(*records))
    assert data.stat().st_size > 2000  # over the inline limit: the worker imports it
    page.goto(f"{url}/import/")
    assert "make worker" in page.content()  # the command that starts the worker in this setup
    page.set_input_files("input[name=file]", str(data))
    page.fill("input[name=new_dataset]", "weekly")
    page.click("form.import-form button[type=submit]")
    page.wait_for_selector("#import_result")  # the queued or running section, polling
    page.wait_for_selector("#import_result h2:has-text('Imported week.jsonl into weekly')")
    assert page.inner_text("#import_result .import-counts").split()[0] == "20"

    page.goto(f"{url}/judge/runs/")
    page.select_option("select[name=dataset]", label="weekly")
    page.select_option("select[name=backend]", "offline")
    assert not page.is_visible("input[name=budget_usd]") and not page.is_visible("input[name=use_batch]")
    page.click("form.judge-start button[type=submit]")
    page.wait_for_url(re.compile(r"/judge/runs/\d+/$"))
    page.wait_for_selector("#progress .tag.ok:has-text('Done')")
    assert "20/20" in page.inner_text("#progress")
    assert not page.js_errors

    demo_procs.proc.send_signal(signal.SIGINT)  # Ctrl+C: honcho stops web and worker
    assert demo_procs.proc.wait(TIMEOUT) is not None
    assert not any(alive(pid) for pid in pids.values()), json.dumps(pids)
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", demo_procs.port)):
        pass  # nothing serves the port any more (the reloader's child server went too)
