"""The judge run pages: lead only, start and enqueue, live progress that stops polling, failures, resume."""

from django.test import TestCase
from django_tasks_db.models import DBTaskResult

from audit.judge.services import judge_run_create, judge_run_execute
from audit.models import JudgeFailure, JudgeRun
from tests.factories import make_audit, make_dataset, make_user
from tests.judge_helpers import make_judged_answer


class JudgePagesTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)
        self.ds = make_dataset("RAGTruth")
        make_judged_answer(self.ds)

    def test_it_is_for_audit_leads_only(self):
        run = judge_run_create(backend="offline", dataset=self.ds)
        self.client.force_login(make_user("ann", "annotator"))
        for url in ["/judge/runs/", f"/judge/runs/{run.pk}/"]:
            self.assertEqual(self.client.get(url).status_code, 403, url)
        self.assertEqual(self.client.post(f"/judge/runs/{run.pk}/resume/").status_code, 403)

    def test_it_starts_a_run_and_hands_it_to_the_worker(self):
        r = self.client.post("/judge/runs/", {"dataset": self.ds.pk, "backend": "offline", "budget_usd": ""})
        run = JudgeRun.objects.get()
        self.assertRedirects(r, f"/judge/runs/{run.pk}/")
        self.assertEqual(
            (run.status, run.backend, run.created_by, run.answers_total), ("queued", "offline", self.lead, 1)
        )
        task = DBTaskResult.objects.get()
        self.assertEqual(
            (task.task_path, task.args_kwargs["args"]), ("audit.judge.tasks.judge_run_task", [run.pk, False])
        )

    def test_it_explains_a_refused_start(self):
        r = self.client.post("/judge/runs/", {"dataset": self.ds.pk, "backend": "offline", "budget_tokens": "-5"})
        self.assertContains(r, "greater than or equal to 1", status_code=400)
        with self.settings(ANTHROPIC_API_KEY=""):
            r = self.client.post("/judge/runs/", {"dataset": self.ds.pk, "backend": "anthropic"})
        self.assertContains(r, "ANTHROPIC_API_KEY is not set", status_code=400)
        self.assertFalse(JudgeRun.objects.exists())

    def test_it_defaults_to_the_offline_baseline_without_an_api_key(self):
        with self.settings(ANTHROPIC_API_KEY=""):
            r = self.client.get("/judge/runs/")
        self.assertContains(r, '<option value="offline" selected>', html=False)
        self.assertContains(r, "The LLM judge needs ANTHROPIC_API_KEY, which is not set on this server.")
        with self.settings(ANTHROPIC_API_KEY="sk-test"):
            r = self.client.get("/judge/runs/")
        self.assertContains(r, '<option value="anthropic" selected>', html=False)
        self.assertContains(r, "The LLM judge needs ANTHROPIC_API_KEY.")
        self.assertContains(r, 'aria-describedby="backend-help"')

    def test_it_lists_runs_in_constant_queries(self):
        judge_run_execute(judge_run_create(backend="offline", dataset=self.ds, user=self.lead).pk)
        # session, user with roles, count, datasets (twice: the select widget reads its first choice), runs
        with self.assertNumQueries(6):
            r = self.client.get("/judge/runs/")
        self.assertContains(r, "offline-lexical-v3 [offline baseline]")
        for _ in range(4):
            judge_run_create(backend="offline", dataset=self.ds, user=self.lead)
        with self.assertNumQueries(6):
            self.client.get("/judge/runs/")

    def test_it_polls_while_active_and_stops_when_done(self):
        run = judge_run_create(backend="offline", dataset=self.ds)
        r = self.client.get(f"/judge/runs/{run.pk}/", headers={"HX-Request": "true"})
        self.assertEqual(r.status_code, 200)
        self.assertContains(r, 'hx-trigger="every 1s"')
        self.assertNotContains(r, "<html")
        judge_run_execute(run.pk)
        r = self.client.get(f"/judge/runs/{run.pk}/", headers={"HX-Request": "true"})
        self.assertEqual(r.status_code, 286)
        self.assertNotContains(r, "hx-trigger", status_code=286)
        self.assertContains(r, "3 claims judged", status_code=286)

    def test_it_shows_failures_escaped_in_constant_queries_and_retries_them(self):
        run = judge_run_execute(judge_run_create(backend="offline", dataset=self.ds).pk)
        answer = run.dataset.answers.get()
        JudgeFailure.objects.create(
            run=run, answer=answer, stage="decompose", error="unusable output", raw="<script>alert(1)</script>"
        )
        JudgeRun.objects.filter(pk=run.pk).update(items_failed=1)
        with self.assertNumQueries(4):  # session, user with roles, run, failures
            r = self.client.get(f"/judge/runs/{run.pk}/")
        self.assertContains(r, "&lt;script&gt;alert(1)&lt;/script&gt;")
        self.assertNotContains(r, "<script>alert(1)")
        self.assertContains(r, "Retry 1 failed item")
        for claim in answer.claims.all():
            JudgeFailure.objects.create(run=run, answer=answer, claim=claim, stage="verify", error="overloaded")
        with self.assertNumQueries(4):
            self.client.get(f"/judge/runs/{run.pk}/")
        r = self.client.post(f"/judge/runs/{run.pk}/resume/", {"retry_failed": "1", "budget_usd": "2.5"})
        self.assertRedirects(r, f"/judge/runs/{run.pk}/")
        run.refresh_from_db()
        self.assertEqual((run.status, run.budget_usd), ("queued", 2.5))
        self.assertEqual(DBTaskResult.objects.get().args_kwargs["args"], [run.pk, True])

    def test_it_refuses_a_token_budget_beyond_64_bits_naming_the_field(self):
        huge = str(2**63)  # SQLite's driver overflowed on it (a 500); PostgreSQL's bigint ends one below
        r = self.client.post("/judge/runs/", {"dataset": self.ds.pk, "backend": "offline", "budget_tokens": huge})
        self.assertContains(r, "less than or equal to", status_code=400)
        self.assertContains(r, 'id="id_budget_tokens_error"', status_code=400)
        run = judge_run_execute(judge_run_create(backend="offline", dataset=self.ds).pk)
        r = self.client.post(f"/judge/runs/{run.pk}/resume/", {"budget_tokens": huge}, follow=True)
        self.assertContains(r, "Not resumed: budget_tokens: Ensure this value is less than or equal to")
        run.refresh_from_db()
        self.assertIsNone(run.budget_tokens)

    def test_it_refuses_to_resume_an_active_run(self):
        run = judge_run_create(backend="offline", dataset=self.ds)
        r = self.client.post(f"/judge/runs/{run.pk}/resume/", follow=True)
        self.assertContains(r, "wait for it to stop")
        self.assertFalse(DBTaskResult.objects.exists())

    def test_it_404s_an_unknown_run(self):
        self.assertEqual(self.client.get("/judge/runs/999/").status_code, 404)

    def test_it_links_an_audit_run_back_to_its_audit_and_says_a_finished_run_has_nothing_left(self):
        audit = make_audit(list(self.ds.answers.all()), dataset=self.ds)
        run = judge_run_create(backend="offline", audit=audit)
        r = self.client.get(f"/judge/runs/{run.pk}/")
        self.assertContains(r, f'audit <a href="/audits/{audit.pk}/">{audit.name}</a>')
        self.assertNotContains(r, "cache read. .")  # not started: no dangling "Started" sentence
        self.assertNotContains(r, "Nothing left to do")
        judge_run_execute(run.pk)
        r = self.client.get(f"/judge/runs/{run.pk}/")
        self.assertContains(r, "Nothing left to do")
        self.assertContains(r, "Resume</button>")
