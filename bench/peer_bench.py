"""Claim Audit beside Label Studio on the same synthetic work, both served on 127.0.0.1 only.

    .venv/bin/python bench/peer_bench.py [--rounds 3] [--bulk 10000] [--only ca]

Label Studio is installed from PyPI into its own virtualenv, bench/.peer-venv (git-ignored; created on the
first run, LABEL_STUDIO_VERSION below), with its data in a throwaway directory. Claim Audit runs from this
tree under gunicorn (one worker, 8 threads), on a throwaway SQLite database; Label Studio as `label-studio start`
serves it (Django's threaded server, one process), on its default SQLite database.

Same tasks on both sides: answers of 5 and of 20 claims, each with 3 passages of about 120 words. Every request
opens a fresh connection. Rounds are interleaved (Claim Audit, Label Studio, Claim Audit, ...) and the
median of the rounds is printed. Server CPU per request is the server process's CPU time over a batch of
requests (/proc/<pid>/stat, utime + stime), divided by the batch size: the stable figure on a shared machine.

What each row measures:
- page read: the labelling page of one answer. Claim Audit: its one HTML response. Label Studio: the page's
  HTML shell plus the two API reads the labelling interface makes for the task and its project.
- verdict save: labelling every claim of one answer. Claim Audit posts once per verdict (5 or 20 posts);
  Label Studio posts the whole annotation once.
- 8 annotators: 8 client threads reading labelling pages for a fixed number of requests: pages per second.
- import: the bulk answers through each HTTP API in one body. export: all answers with their labels.
- first visit: bytes over the wire and requests of a cold Chromium visit to the labelling page, and the time
  until its first verdict control can be clicked.
- RSS: the server process idle after start, and its peak (VmHWM) at the end.
"""

import argparse
import http.client
import json
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv" / "bin" / "python")
PEER_VENV = ROOT / "bench" / ".peer-venv"
LABEL_STUDIO_VERSION = "1.23.2"
PASSWORD = "peer-bench-password-1"
VERDICTS = ["supported", "contradicted", "unsupported", "non_assertive"]
EXPORTS = 10  # warm exports per timed batch
WORDS = [
    "the",
    "service",
    "limit",
    "request",
    "minute",
    "quota",
    "region",
    "token",
    "model",
    "answer",
    "source",
    "passage",
    "claim",
    "value",
]
CHROMIUM = "/usr/bin/chromium"


# -- the shared synthetic work
def sentence(rng, tag):
    return f"{tag.capitalize()} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))) + "."


def make_tasks(n, claims, seed, prefix):
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        cl = [sentence(rng, f"claim {j}") for j in range(claims)]
        passages = [{"id": f"p{p}", "text": " ".join(sentence(rng, "fact") for _ in range(10))} for p in range(3)]
        tasks.append(
            {
                "id": f"{prefix}-{i}",
                "question": sentence(rng, "why"),
                "answer": " ".join(cl),
                "claims": cl,
                "passages": passages,
            }
        )
    return tasks


# -- HTTP with a fresh connection per request
class Session:
    def __init__(self, port):
        self.port, self.cookies, self.headers = port, {}, {}

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        h = {"Host": f"127.0.0.1:{self.port}", **self.headers, **(headers or {})}
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if isinstance(body, dict):
            body, h["Content-Type"] = urlencode(body), "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        for k, v in r.getheaders():
            if k.lower() == "set-cookie":
                name, _, rest = v.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        conn.close()
        return r.status, data, dict(r.getheaders())

    def get(self, path, **kw):
        return self.request("GET", path, **kw)


# -- /proc
def cpu_seconds(pid):
    """User + system CPU of the whole process, threads that already ended included (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid, field="VmRSS"):
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", text).group(1)) / 1024


def server_pid(proc):
    """The process answering requests: gunicorn's single worker, or the process itself."""
    kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    return int(kids[0]) if kids else proc.pid


def wait_up(port, path="/", limit=180):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            Session(port).get(path)
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server on port {port} did not start")


def per_request_cpu(pid, n, fn):
    """(server CPU ms per call, wall ms per call) of n calls of fn(i)."""
    c0, t0 = cpu_seconds(pid), time.perf_counter()
    for i in range(n):
        fn(i)
    return (cpu_seconds(pid) - c0) * 1000 / n, (time.perf_counter() - t0) * 1000 / n


# -- Claim Audit
class ClaimAudit:
    name = "Claim Audit"

    def __init__(self, port, tmp):
        self.port, self.tmp = port, tmp
        self.env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp / 'ca.sqlite3'}",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_COOKIES": "0",
            "ALLOWED_HOSTS": "127.0.0.1",  # static files as deployed: hashed names, gzip made by collectstatic
            "FAST_PASSWORD_HASHER": "0",
            "DJANGO_SETTINGS_MODULE": "claimaudit.settings",
            "PYTHONPATH": str(ROOT),
        }

    def manage(self, *args, settings_module=None):
        env = {**self.env, **({"DJANGO_SETTINGS_MODULE": settings_module} if settings_module else {})}
        out = subprocess.run([PY, "manage.py", *args], env=env, cwd=ROOT, check=True, capture_output=True, text=True)
        return out.stdout

    def start(self, tasks5, tasks20):
        self.manage("migrate", "--run-syncdb", "-v0", settings_module="tests.schema_settings")
        self.manage("collectstatic", "--noinput", "-v0")
        self.manage("create_user", "lead", "--password", PASSWORD, "--roles", "lead,adjudicator")
        for i in range(8):
            self.manage("create_user", f"ann{i}", "--password", PASSWORD, "--roles", "annotator")
        self.token = self.manage("create_token", "lead", "--name", "bench").strip().splitlines()[-1]
        self.proc = subprocess.Popen(
            [
                PY,
                "-m",
                "gunicorn",
                "claimaudit.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "1",
                "--threads",
                "8",
            ],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_up(self.port, "/login/")
        self.pid = server_pid(self.proc)
        self.rss_idle = rss_mib(self.pid)
        for name, tasks in (("peer5", tasks5), ("peer20", tasks20)):
            self.api_import(name, tasks)
            annotators = ",".join(f"ann{i}" for i in range(8))
            self.manage(
                "create_audit",
                f"{name}-audit",
                "--dataset",
                name,
                "--size",
                str(len(tasks)),
                "--annotators",
                annotators,
                "--seed",
                "1",
            )
        self.sessions = [self.login(f"ann{i}") for i in range(8)]
        self.work = {5: self.assignments(5), 20: self.assignments(20)}
        # The audit to export, found now: the lead's login (a password hash) is no part of an export's cost.
        html = self.login("lead").get("/audits/")[1]  # the 5-claim audit, as Label Studio's 5-claim project
        self.export_audit = re.search(rb'href="/audits/(\d+)/">peer5-audit<', html).group(1).decode()

    def api_import(self, name, tasks):
        body = "".join(
            json.dumps(
                {k: t[k] for k in ("id", "question", "answer", "passages")}
                | {"claims": [{"text": c} for c in t["claims"]]}
            )
            + "\n"
            for t in tasks
        )
        s = Session(self.port)
        status, data, _ = s.request(
            "POST",
            f"/api/v1/datasets/{name}/answers",
            body=body.encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/x-ndjson"},
        )
        assert status == 200 and json.loads(data)["created"] == len(tasks), data[:500]

    def login(self, username):
        s = Session(self.port)
        s.get("/login/")
        status, _, _ = s.request(
            "POST",
            "/login/",
            {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": s.cookies["csrftoken"]},
            headers={"Referer": f"http://127.0.0.1:{self.port}/login/"},
        )
        assert status == 302, status
        s.headers = {
            "X-CSRFToken": s.cookies["csrftoken"],
            "HX-Request": "true",
            "Referer": f"http://127.0.0.1:{self.port}/",
        }
        s.username = username
        return s

    def assignments(self, k):
        """[(session, page path, [claim save paths])] for every assignment of an answer with k claims."""
        out = []
        for s in self.sessions:
            _, html, _ = s.get("/", headers={"HX-Request": ""})
            for asg in sorted(set(re.findall(rb'href="/label/(\d+)/"', html))):
                _, page, _ = s.get(f"/label/{asg.decode()}/", headers={"HX-Request": ""})
                claims = list(dict.fromkeys(re.findall(rb'hx-post="(/label/\d+/claim/\d+/)"', page)))  # row order
                if len(claims) == k:
                    out.append((s, f"/label/{asg.decode()}/", [c.decode() for c in claims]))
        assert out, f"no assignments of {k} claims"
        return out

    def page_read(self, i, k=5):
        s, page, _ = self.work[k][i % len(self.work[k])]
        status, _, _ = s.get(page, headers={"HX-Request": ""})
        assert status == 200, status

    def save_answer(self, i, k):
        s, _, claims = self.work[k][i % len(self.work[k])]
        verdict = VERDICTS[i % 4]
        for url in claims:
            status, data, _ = s.request("POST", url, {"verdict": verdict})
            assert status == 200, (status, data[:300])

    def export(self):
        s = Session(self.port)
        status, data, _ = s.get(
            f"/api/v1/audits/{self.export_audit}/gold?format=jsonl", headers={"Authorization": f"Bearer {self.token}"}
        )
        assert status == 200, data[:300]
        return len(data)

    def first_visit(self):
        s, page, _ = self.work[5][0]
        return self.port, page, s.cookies, 'button[name="verdict"]'

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


# -- Label Studio
def label_config(k):
    claims = "".join(
        f'<Header value="$claim_{j}"/><Choices name="c{j}" toName="answer" choice="single" showInLine="true">'
        + "".join(f'<Choice value="{v}"/>' for v in VERDICTS)
        + "</Choices>"
        for j in range(k)
    )
    return (
        f'<View><Header value="$question"/><Text name="answer" value="$answer"/>'
        f'<Text name="passages" value="$passages"/>{claims}</View>'
    )


def ls_data(t):
    return {
        "question": t["question"],
        "answer": t["answer"],
        "passages": "\n\n".join(f"[{p['id']}] {p['text']}" for p in t["passages"]),
    } | {f"claim_{j}": c for j, c in enumerate(t["claims"])}


class LabelStudio:
    name = "Label Studio"

    def __init__(self, port, tmp):
        self.port, self.tmp = port, tmp
        self.token = secrets.token_hex(20)
        self.env = {
            **os.environ,
            "LABEL_STUDIO_BASE_DATA_DIR": str(tmp / "ls-data"),
            "DEBUG": "false",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "COLLECT_ANALYTICS": "false",
            "LOG_LEVEL": "ERROR",
            "LABEL_STUDIO_USERNAME": "lead@example.org",
            "LABEL_STUDIO_PASSWORD": PASSWORD,
            "LABEL_STUDIO_USER_TOKEN": self.token,
        }
        self.env.pop("DJANGO_SETTINGS_MODULE", None)
        self.env.pop("DATABASE_URL", None)

    @staticmethod
    def install():
        exe = PEER_VENV / "bin" / "label-studio"
        if exe.exists():
            return exe
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run(
            [str(PEER_VENV / "bin" / "pip"), "install", "-q", f"label-studio=={LABEL_STUDIO_VERSION}"], check=True
        )
        return exe

    def start(self, tasks5, tasks20):
        exe = self.install()
        self.log = open(self.tmp / "ls.log", "w")  # noqa: SIM115 (the server's output, open while it runs)
        self.proc = subprocess.Popen(
            [
                str(exe),
                "start",
                "--no-browser",
                "--internal-host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--username",
                "lead@example.org",
                "--password",
                PASSWORD,
                "--user-token",
                self.token,
                "--enable-legacy-api-token",
                "--data-dir",
                str(self.tmp / "ls-data"),
            ],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_up(self.port, "/user/login/", limit=600)
        self.pid = self.proc.pid  # Django's threaded runserver, in the process label-studio start runs
        self.rss_idle = rss_mib(self.pid)
        self.api = Session(self.port)
        self.api.headers = {"Authorization": f"Token {self.token}", "Content-Type": "application/json"}
        self.projects = {5: self.project(5, tasks5), 20: self.project(20, tasks20)}
        self.session = self.login()
        self.sessions = [self.session] * 8

    def call(self, method, path, payload=None, session=None):
        s = session or self.api
        status, data, _ = s.request(
            method,
            path,
            body=json.dumps(payload).encode() if payload is not None else None,
            headers={"Content-Type": "application/json"},
        )
        assert status < 300, (method, path, status, data[:300])
        return json.loads(data) if data else None

    def project(self, k, tasks):
        p = self.call("POST", "/api/projects", {"title": f"peer{k}", "label_config": label_config(k)})
        self.import_tasks(p["id"], tasks)
        ids = [t["id"] for t in self.call("GET", f"/api/tasks?project={p['id']}&page_size=100000")["tasks"]]
        return p["id"], ids

    def import_tasks(self, project_id, tasks):
        done = self.call("POST", f"/api/projects/{project_id}/import", [ls_data(t) for t in tasks])
        assert done["task_count"] == len(tasks), done

    def api_import(self, name, tasks):
        p = self.call("POST", "/api/projects", {"title": name, "label_config": label_config(5)})
        self.import_tasks(p["id"], tasks)

    def login(self):
        s = Session(self.port)
        _, html, _ = s.get("/user/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1).decode()
        status, _, _ = s.request(
            "POST",
            "/user/login/",
            {"email": "lead@example.org", "password": PASSWORD, "csrfmiddlewaretoken": token},
            headers={"Referer": f"http://127.0.0.1:{self.port}/user/login/"},
        )
        assert status in (200, 302), status
        s.headers = {"X-CSRFToken": s.cookies.get("csrftoken", ""), "Referer": f"http://127.0.0.1:{self.port}/"}
        return s

    def page_read(self, i, k=5, session=None):
        s = session or self.session
        pid, ids = self.projects[k]
        t = ids[i % len(ids)]
        for path in (f"/projects/{pid}/data?task={t}", f"/api/tasks/{t}?project={pid}", f"/api/projects/{pid}"):
            status, _, _ = s.get(path)
            assert status == 200, (path, status)

    def save_answer(self, i, k):
        pid, ids = self.projects[k]
        result = [
            {
                "from_name": f"c{j}",
                "to_name": "answer",
                "type": "choices",
                "value": {"choices": [VERDICTS[(i + j) % 4]]},
            }
            for j in range(k)
        ]
        self.call(
            "POST",
            f"/api/tasks/{ids[i % len(ids)]}/annotations?project={pid}",
            {"result": result, "lead_time": 1.0, "project": pid},
            session=self.session,
        )

    def export(self):
        pid, _ = self.projects[5]
        status, data, _ = self.api.get(f"/api/projects/{pid}/export?exportType=JSON&download_all_tasks=true")
        assert status == 200, status
        return len(data)

    def first_visit(self):
        pid, ids = self.projects[5]
        return (
            self.port,
            f"/projects/{pid}/data?task={ids[0]}",
            self.session.cookies,
            ".lsf-choices input, .ant-checkbox-input, input[type=checkbox]",
        )

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# -- measurements
def concurrent_pages(side, k=5, clients=8, per_client=15):
    errors = []

    def client(c):
        try:
            for i in range(per_client):
                if isinstance(side, ClaimAudit):
                    s, page, _ = side.work[k][(c * per_client + i) % len(side.work[k])]
                    s.get(page, headers={"HX-Request": ""})
                else:
                    side.page_read(c * per_client + i, k)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return clients * per_client / (time.perf_counter() - t0)


def first_visit(side):
    from playwright.sync_api import sync_playwright

    port, path, cookies, selector = side.first_visit()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        ctx = browser.new_context()
        ctx.add_cookies([{"name": k, "value": v, "domain": "127.0.0.1", "path": "/"} for k, v in cookies.items()])
        page = ctx.new_page()
        responses = []
        page.on("requestfinished", lambda r: responses.append(r))
        t0 = time.perf_counter()
        page.goto(f"http://127.0.0.1:{port}{path}")
        page.locator(selector).first.wait_for(state="visible", timeout=120_000)
        usable = time.perf_counter() - t0
        page.wait_for_load_state("networkidle")
        sizes = [r.sizes() for r in responses]
        wire = sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes)
        browser.close()
    return {"bytes": wire, "requests": len(sizes), "usable_s": usable}


def measure_round(side, n=30):
    out = {}
    out["page read"] = per_request_cpu(side.pid, n, side.page_read)
    for k in (5, 20):
        out[f"save, {k} claims"] = per_request_cpu(side.pid, max(4, n // 4), lambda i, k=k: side.save_answer(i, k))
    out["8 annotators (pages/s)"] = concurrent_pages(side)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bulk", type=int, default=10_000)
    ap.add_argument("--answers", type=int, default=40, help="answers of each size (5 and 20 claims)")
    ap.add_argument("--only", choices=["ca", "ls"], help="measure one side only")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="peer_bench_"))
    tasks5, tasks20 = make_tasks(args.answers, 5, 1, "a5"), make_tasks(args.answers, 20, 2, "a20")
    sides = []
    if args.only != "ls":
        sides.append(ClaimAudit(8801, tmp))
    if args.only != "ca":
        sides.append(LabelStudio(8802, tmp))
    results = {s.name: [] for s in sides}
    extra = {s.name: {} for s in sides}
    try:
        for s in sides:
            print(f"starting {s.name} ...", flush=True)
            s.start(tasks5, tasks20)
        for r in range(args.rounds):
            for s in sides:
                results[s.name].append(measure_round(s))
                print(f"round {r + 1} {s.name}: {results[s.name][-1]}", flush=True)
        bulk = make_tasks(args.bulk, 5, 3, "bulk")
        for s in sides:
            c0, t0 = cpu_seconds(s.pid), time.perf_counter()
            s.api_import("bulk", bulk)
            extra[s.name]["import (s wall, s CPU)"] = (time.perf_counter() - t0, cpu_seconds(s.pid) - c0)
            # The first export of a process also imports its code: shown apart from the warm ones, which are
            # timed in batches of EXPORTS (the process CPU clock ticks in 10 ms, about one export).
            c0, t0 = cpu_seconds(s.pid), time.perf_counter()
            size = s.export()
            extra[s.name]["export cold (ms CPU, ms wall)"] = (
                (cpu_seconds(s.pid) - c0) * 1000,
                (time.perf_counter() - t0) * 1000,
            )
            runs = []
            for _ in range(3):
                c0, t0 = cpu_seconds(s.pid), time.perf_counter()
                for _ in range(EXPORTS):
                    s.export()
                runs.append(((cpu_seconds(s.pid) - c0) * 1000 / EXPORTS, (time.perf_counter() - t0) * 1000 / EXPORTS))
            warm = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            extra[s.name]["export warm (ms CPU, ms wall)"] = warm
            extra[s.name]["export bytes"] = size
            extra[s.name]["first visit"] = first_visit(s)
            extra[s.name]["RSS idle / peak (MiB)"] = (s.rss_idle, rss_mib(s.pid, "VmHWM"))
    finally:
        for s in sides:
            if hasattr(s, "proc"):
                s.stop()
    report(sides, results, extra)


def report(sides, results, extra):
    names = [s.name for s in sides]
    print("\nLS / CA above 1: Label Studio costs more (CPU rows) or serves more (pages/s).")
    print(" | ".join([f"{'figure':34}"] + [f"{n:>22}" for n in names] + (["LS / CA"] if len(names) == 2 else [])))
    keys = list(results[names[0]][0])
    for key in keys:
        cells, values = [], []
        for n in names:
            rows = [r[key] for r in results[n]]
            if isinstance(rows[0], tuple):
                cpu = statistics.median(x[0] for x in rows)
                values.append(cpu)
                cells.append(f"{cpu:7.1f} ms CPU {statistics.median(x[1] for x in rows):6.1f} wall")
            else:
                v = statistics.median(rows)
                values.append(v)
                cells.append(f"{v:18.1f}")
        ratio = [f"{values[1] / values[0]:6.2f}x"] if len(values) == 2 and values[0] else []
        print(" | ".join([f"{key:34}"] + [f"{c:>22}" for c in cells] + ratio))
    for key in extra[names[0]]:
        cells = [str(_fmt(extra[n].get(key))) for n in names]
        print(" | ".join([f"{key:34}"] + [f"{c:>22}" for c in cells]))


def _fmt(v):
    if isinstance(v, tuple):
        return " / ".join(f"{x:,.1f}" for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k} {x:,.2f}" if isinstance(x, float) else f"{k} {x:,}" for k, x in v.items())
    return f"{v:,}" if isinstance(v, int) else v


if __name__ == "__main__":
    main()
