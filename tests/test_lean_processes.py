"""Lean processes: the URLconf, the WSGI handler and the task worker start without the scientific stack
(it loads with the first report, lab page or Parquet export), and responses are gzipped, BREACH-aware."""

import gzip
import json
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory
from django.views.decorators.csrf import csrf_exempt

from audit.lazy import lazy_view
from tests.factories import make_user

HEAVY = ["krippendorff", "numpy", "pandas", "pyarrow", "scipy", "statsmodels"]

WEB = """
import django
django.setup()
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

def walk(resolver):
    for p in resolver.url_patterns:
        walk(p) if hasattr(p, "url_patterns") else p.callback
walk(get_resolver())
get_resolver().reverse_dict  # every name reversible
get_wsgi_application()
"""
# A real worker: starts, finds the queue empty (--batch) and exits; what it imported is printed after.
WORKER = """
import django
django.setup()
from django.core.management import call_command
call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay")
"""
REPORT = "import annotations.report.build, annotations.adjudication.parquet\n"
SHOW = f"""
import json, sys
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))))
"""


def probe(code, tmp_path=None):
    env = {"DJANGO_SETTINGS_MODULE": "claimaudit.settings", "DEBUG": "1", "PATH": "/usr/bin:/bin"}
    if tmp_path is not None:
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'worker.sqlite3'}"
        schema = {**env, "DJANGO_SETTINGS_MODULE": "tests.schema_settings"}
        run([sys.executable, "manage.py", "migrate", "--run-syncdb", "-v0"], schema)
    out = run([sys.executable, "-c", code + SHOW], env)
    return json.loads(out.strip().splitlines()[-1])


def run(cmd, env):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_it_starts_a_web_process_without_the_scientific_stack():
    assert probe(WEB) == []


def test_it_runs_an_idle_task_worker_without_the_scientific_stack(tmp_path):
    assert probe(WORKER, tmp_path) == []


def test_it_loads_the_stack_once_a_report_module_is_used():
    """The probe can see the modules: importing the report's builder brings them in."""
    assert probe(WEB + REPORT) == HEAVY


def test_it_keeps_lazy_views_behind_login_and_csrf(client, db):
    assert client.get("/reports/1/").status_code == 302  # to the login page
    lead = make_user("lead", "lead")
    csrf_client = type(client)(enforce_csrf_checks=True)
    csrf_client.force_login(lead)
    assert csrf_client.post("/lab/run/", {}).status_code == 403


@csrf_exempt
def exempt(request):
    return None


def test_it_refuses_to_make_an_exempt_view_lazy():
    view = lazy_view(f"{__name__}.exempt")
    with pytest.raises(ImproperlyConfigured):
        view(RequestFactory().get("/"))


@pytest.mark.django_db
def test_it_gzips_pages_but_not_those_showing_a_one_time_secret(client):
    client.force_login(make_user("lead", "lead"))
    page = client.get("/judge/runs/", HTTP_ACCEPT_ENCODING="gzip")
    assert page["Content-Encoding"] == "gzip" and b"Judge runs" in gzip.decompress(page.content)
    created = client.post("/tokens/", {"name": "nightly"}, HTTP_ACCEPT_ENCODING="gzip")
    assert created.status_code == 201 and not created.has_header("Content-Encoding")
    assert b"nightly" in created.content
