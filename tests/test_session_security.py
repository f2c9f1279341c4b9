"""No-store on logged-in pages, HttpOnly cookies, absolute and idle session limits, the wider CSV
neutralisation and the refusal of a short SECRET_KEY."""

import csv
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection
from django.test import TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from annotations.adjudication import export
from audit.models import Claim
from tests.factories import PASSWORD, make_gold, make_labelled_audit, make_user

ROOT = Path(__file__).resolve().parent.parent


class CacheAndCookieTests(TestCase):
    def setUp(self):
        self.user = make_user("lead", "lead")

    def test_it_sends_no_store_on_authenticated_pages(self):
        self.client.force_login(self.user)
        for url in ("/", "/audits/", "/answers/", "/password/", "/import/"):
            r = self.client.get(url)
            self.assertEqual(r.status_code, 200, url)
            self.assertIn("no-store", r["Cache-Control"], url)

    def test_it_sets_the_csrf_and_session_cookies_httponly(self):
        self.client.get("/login/")
        self.assertTrue(self.client.cookies["csrftoken"]["httponly"])
        r = self.client.post("/login/", {"username": "lead", "password": PASSWORD})
        self.assertTrue(r.cookies["sessionid"]["httponly"])
        self.assertEqual(r.cookies["sessionid"]["max-age"], 12 * 3600)

    def test_it_has_no_script_that_reads_cookies(self):
        # The CSRF cookie is HttpOnly: scripts take the token from hx-headers on <body> instead.
        scripts = sorted((ROOT / "static").glob("*.js"))
        self.assertTrue(scripts)
        for js in scripts:
            self.assertNotIn("document.cookie", js.read_text(), js.name)
        self.client.force_login(self.user)
        self.assertIn('hx-headers=\'{"x-csrftoken": "', self.client.get("/").content.decode())


class SessionLimitTests(TestCase):
    def setUp(self):
        self.user = make_user("ann1", "annotator")
        r = self.client.post("/login/", {"username": "ann1", "password": PASSWORD})
        self.assertEqual(r.status_code, 302)

    def age(self, **shift):
        """Move the session's clocks back by the given seconds (no waiting)."""
        session = self.client.session
        for key, seconds in shift.items():
            session[key] -= seconds
        session.save()

    def test_it_keeps_an_active_session(self):
        self.age(seen_at=2 * 3600 - 30)
        self.assertEqual(self.client.get("/").status_code, 200)
        self.assertGreaterEqual(self.client.session["seen_at"], int(time.time()) - 5)  # activity refreshed
        self.age(seen_at=2 * 3600 - 30)
        self.assertEqual(self.client.get("/").status_code, 200)

    def test_it_does_not_count_htmx_polling_as_activity(self):
        self.age(seen_at=2 * 3600 - 30)
        self.assertEqual(self.client.get("/", headers={"HX-Request": "true"}).status_code, 200)
        self.age(seen_at=31)
        self.assertEqual(self.client.get("/").status_code, 302)  # idle: only polling since

    def test_it_logs_out_after_the_idle_timeout(self):
        self.age(seen_at=2 * 3600 + 1)
        r = self.client.get("/")
        self.assertEqual((r.status_code, r["Location"]), (302, "/login/?next=/"))
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_it_logs_out_after_the_absolute_age_even_when_active(self):
        self.age(login_at=12 * 3600 + 1)
        self.assertEqual(self.client.get("/").status_code, 302)

    @override_settings(SESSION_IDLE_TIMEOUT=600)
    def test_it_reads_the_idle_timeout_from_settings(self):
        self.age(seen_at=601)
        self.assertEqual(self.client.get("/").status_code, 302)

    def test_it_writes_the_session_at_most_once_a_minute(self):
        self.client.get("/")
        with CaptureQueriesContext(connection) as ctx:
            self.client.get("/")
        session_sql = [q["sql"] for q in ctx.captured_queries if "django_session" in q["sql"]]
        self.assertEqual(len(session_sql), 1)  # read only: no write while the stamp is recent
        self.assertTrue(session_sql[0].startswith("SELECT"))


class CsvNeutralisationTests(TestCase):
    def test_it_neutralises_whitespace_then_formula_line_breaks_and_fullwidth_signs(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        audit = make_labelled_audit(a, b, n_answers=3, n_claims=4)
        make_gold(audit)
        texts = [" =1+1", "\t=cmd", "\n@SUM(A1)", "\r+1", "＝HYPERLINK(1)", "＋1", "－1", "＠x", "\u3000=1", "  -x"]
        safe = ["fine", "a = b"]
        claims = list(Claim.objects.order_by("id"))
        for claim, text in zip(claims, texts + safe, strict=True):
            Claim.objects.filter(pk=claim.pk).update(text=text)
        cells = list(csv.reader(io.StringIO(export.export_bytes(audit).decode(), newline="")))
        col = cells[0].index("claim_text")
        self.assertEqual([row[col] for row in cells[1:]], ["'" + t for t in texts] + safe)


def _settings_import(env):
    code = "import claimaudit.settings"
    full = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")} | env
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=full, capture_output=True, text=True)


def test_it_refuses_a_short_secret_key_when_debug_is_off():
    short = _settings_import({"SECRET_KEY": "x" * 49, "DEBUG": "false"})
    assert short.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY has 49 characters" in short.stderr
    assert _settings_import({"SECRET_KEY": "x" * 50, "DEBUG": "false"}).returncode == 0
    assert _settings_import({"SECRET_KEY": "x" * 5, "DEBUG": "true"}).returncode == 0  # development
    assert len(os.environ["SECRET_KEY"]) >= 50  # the key the test environment runs with


class RolesPerRequestTests(TestCase):
    """The login backend reads a user's roles with the user, on every request: a change acts at once."""

    def test_it_acts_on_a_role_taken_away_at_the_next_request(self):
        user = make_user("lead", "lead", "annotator")
        self.client.force_login(user)
        self.assertEqual(self.client.get("/audits/new/").status_code, 200)
        user.groups.remove(user.groups.get(name="audit leads"))
        self.assertEqual(self.client.get("/audits/new/").status_code, 403)

    def test_it_logs_out_a_deactivated_user_at_the_next_request(self):
        user = make_user("lead", "lead")
        self.client.force_login(user)
        type(user).objects.filter(pk=user.pk).update(is_active=False)
        self.assertEqual(self.client.get("/audits/").status_code, 302)  # to the login page

    def test_it_gives_a_user_without_roles_none(self):
        self.client.force_login(make_user("nobody"))
        self.assertEqual(self.client.get("/audits/new/").status_code, 403)
