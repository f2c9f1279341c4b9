import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from audit.models import JudgeRun, JudgeVerdict
from tests.factories import PASSWORD, make_answer, make_audit, make_dataset, make_judge_version, make_user


class AuthTests(TestCase):
    def test_it_requires_login_everywhere(self):
        for url in ["/", "/answers/", "/import/", "/audits/", "/judge/runs/"]:
            r = self.client.get(url)
            self.assertEqual(r.status_code, 302, url)
            self.assertTrue(r["Location"].startswith("/login/"), url)

    def test_it_logs_in_and_out(self):
        make_user("lead", "lead")
        r = self.client.post("/login/", {"username": "lead", "password": PASSWORD})
        self.assertRedirects(r, "/")
        self.assertEqual(self.client.get("/logout/").status_code, 405)  # logout is POST only
        r = self.client.post("/logout/")
        self.assertEqual(self.client.get("/").status_code, 302)

    def test_it_rate_limits_failed_logins(self):
        make_user("lead", "lead")
        for _ in range(4):
            r = self.client.post("/login/", {"username": "lead", "password": "wrong"})
            self.assertEqual(r.status_code, 200)
        r = self.client.post("/login/", {"username": "lead", "password": "wrong"})
        self.assertEqual(r.status_code, 429)  # the 5th failure locks out
        r = self.client.post("/login/", {"username": "lead", "password": PASSWORD})
        self.assertEqual(r.status_code, 429)
        self.assertContains(r, "Too many failed logins", status_code=429)

    def test_it_creates_users_with_roles(self):
        call_command("create_user", "maria", "--password", "a-long-password", "--roles", "lead,adjudicator")
        r = self.client.post("/login/", {"username": "maria", "password": "a-long-password"})
        self.assertRedirects(r, "/", fetch_redirect_response=False)

        names = set(User.objects.get(username="maria").groups.values_list("name", flat=True))
        self.assertEqual(names, {"audit leads", "adjudicators"})


class BrowseTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)

    def test_it_forbids_annotators_the_answers_pages(self):
        ann = make_user("ann", "annotator")
        answer = make_answer()
        self.client.force_login(ann)
        self.assertEqual(self.client.get("/answers/").status_code, 403)
        self.assertEqual(self.client.get(f"/answers/{answer.id}/").status_code, 403)

    def test_it_searches_and_filters_answers(self):
        ds = make_dataset("one")
        make_answer(ds, external_id="ans.lyon", question="Where is Lyon?", meta={"model": "m1"})
        make_answer(ds, external_id="ans.nice", question="Where is Nice?", meta={"model": "m2"})
        r = self.client.get("/answers/", {"q": "Lyon"})
        self.assertContains(r, "ans.lyon")
        self.assertNotContains(r, "ans.nice")
        r = self.client.get("/answers/", {"meta_key": "model", "meta_value": "m2"})
        self.assertContains(r, "ans.nice")
        self.assertNotContains(r, "ans.lyon")

    def test_it_filters_answers_by_a_nested_metadata_path_compared_as_text(self):
        ds = make_dataset("nested")
        make_answer(ds, external_id="ans.v1", meta={"run": {"pipeline": "v1", "shard": 7}})
        make_answer(ds, external_id="ans.v2", meta={"run": {"pipeline": "v2", "shard": 8}})
        for key, value, found in (("run.pipeline", "v2", "ans.v2"), ("run.shard", "7", "ans.v1")):
            r = self.client.get("/answers/", {"meta_key": key, "meta_value": value})
            self.assertContains(r, found)
            self.assertNotContains(r, ({"ans.v1", "ans.v2"} - {found}).pop())

    def test_it_serves_the_results_partial_to_htmx(self):
        make_answer(external_id="x1")
        r = self.client.get("/answers/", headers={"HX-Request": "true"})
        self.assertContains(r, 'id="results"')
        self.assertNotContains(r, "<html")

    def test_it_escapes_user_text(self):
        answer = make_answer(question="<script>alert(1)</script>", text="<b>bold</b>", n_claims=0)
        r = self.client.get(f"/answers/{answer.id}/")
        self.assertNotContains(r, "<script>alert(1)</script>")
        self.assertContains(r, "&lt;script&gt;alert(1)&lt;/script&gt;")

    def test_it_keeps_answer_page_queries_constant(self):
        small = make_answer(n_claims=2, n_passages=3)
        big = make_answer(n_claims=40, n_passages=20)
        counts = []
        for a in (small, big):
            with CaptureQueriesContext(connection) as ctx:
                self.assertEqual(self.client.get(f"/answers/{a.id}/").status_code, 200)
            counts.append(len(ctx))
        self.assertEqual(counts[0], counts[1])
        with self.assertNumQueries(counts[0]):
            self.client.get(f"/answers/{big.id}/")

    def test_it_keeps_answers_list_queries_constant(self):
        for i in range(3):
            make_answer(external_id=f"s{i}")
        with self.assertNumQueries(5):
            self.client.get("/answers/")
        for i in range(30):
            make_answer(external_id=f"t{i}")
        with self.assertNumQueries(5):
            self.client.get("/answers/")


def test_it_has_no_missing_migrations(db):
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_it_passes_check_deploy_under_production_settings():
    env = {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": "k" * 20 + "production-like-secret-9f8e7d6c5b4a3210zyx",
        "ALLOWED_HOSTS": "audit.example.org",
        "SECURE_SSL_REDIRECT": "true",
        "SECURE_COOKIES": "true",
        "PLAIN_STATIC": "false",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    r = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.browser
def test_it_logs_in_and_opens_answers_in_chromium(live_server, page, login, transactional_db):
    lead = make_user("lead", "lead")
    make_answer(external_id="visible-answer")
    login(page, lead)
    page.goto(f"{live_server.url}/answers/")
    assert page.locator("text=visible-answer").is_visible()
    assert page.js_errors == []


class AnswerPageJudgeTests(TestCase):
    def test_it_highlights_verified_judge_evidence_in_its_passage(self):
        lead = make_user("lead", "lead")
        answer = make_answer(n_claims=2, n_passages=2)
        version = make_judge_version("t", content_hash="h1")
        c0, c1 = answer.claims.order_by("position")
        JudgeVerdict.objects.create(
            claim=c0,
            judge_version=version,
            raw_verdict="supported",
            verdict="supported",
            evidence="Paris is the capital of France.",
            passage_external_id="passage 2",
            guard_passed=True,
        )
        JudgeVerdict.objects.create(
            claim=c1,
            judge_version=version,
            raw_verdict="supported",
            verdict="unsupported",
            evidence="Lyon is the capital.",
            passage_external_id="passage 1",
            guard_passed=False,
        )
        self.client.force_login(lead)
        r = self.client.get(f"/answers/{answer.id}/")
        self.assertContains(r, 'title="judge evidence for claim 1">Paris is the capital of France.</mark>', count=1)
        self.assertContains(r, "failed evidence guard")
        self.assertContains(r, "[offline baseline]")


class HomeTests(TestCase):
    def test_it_shows_a_lead_their_audits_and_runs_in_constant_queries(self):
        lead = make_user("lead", "lead")
        self.client.force_login(lead)
        version = make_judge_version("offline-x", content_hash="hx")

        def add(i):
            audit = make_audit([make_answer(external_id=f"h{i}")], name=f"2026-W{i:02d}")
            JudgeRun.objects.create(judge_version=version, backend="offline", audit=audit, status="done")

        add(1)
        with self.assertNumQueries(4) as ctx:
            r = self.client.get("/")
        self.assertContains(r, "2026-W01")
        self.assertContains(r, "offline-x [offline baseline]")
        for i in range(2, 8):
            add(i)
        with self.assertNumQueries(len(ctx.captured_queries)):
            self.client.get("/")

    def test_it_hides_lead_sections_from_annotators(self):
        make_audit([make_answer()], name="secret-audit")
        self.client.force_login(make_user("ann", "annotator"))
        r = self.client.get("/")
        self.assertNotContains(r, "secret-audit")
        self.assertNotContains(r, "Judge runs")


def test_it_has_a_migration_for_every_model_change(tmp_path):
    # In a process of its own: the test run disables migrations (--nomigrations), so it cannot see them.
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'm.sqlite3'}"}
    r = subprocess.run(
        [sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert r.returncode == 0 and "No changes detected" in r.stdout, r.stdout + r.stderr


def test_it_closes_every_template_comment_on_its_line():
    """Django's {# #} comment is one line: one left open is printed on the page, as the workspace once printed one."""
    root = Path(__file__).resolve().parent.parent / "templates"
    open_comments = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.html"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "{#" in line and "#}" not in line.split("{#", 1)[1]
    ]
    assert open_comments == []
