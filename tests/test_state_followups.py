"""Follow-ups of the walk through every state (tests/state_helpers.py): what a report said that misled, and the
405 that said nothing. Expected texts and counts are computed here from the rows, never by the app's code."""

import json
import re

from django.test import Client

from annotations.models import Assignment, GoldLabel
from audit.models import HistoryEvent, JudgeRun, JudgeVerdict
from claimaudit.services import api_token_create
from tests.factories import make_judge_version
from tests.state_helpers import StatesCase
from tests.test_report_page import section, text


def plural(n, one, many):
    return f"{n} {one if n == 1 else many}"


def pending(audit):
    """(open disputes, reopened answers waiting, other answers not labelled by both) from the rows."""
    open_disputes, reopened, waiting = 0, 0, 0
    reopenings = {
        e.new["assignment"] for e in HistoryEvent.objects.filter(audit=audit, action="reopen", kind="assignment")
    }
    for item in audit.items.all():
        asg = list(Assignment.objects.filter(audit_answer=item))
        if len(asg) == 2 and all(a.status == "submitted" for a in asg):
            claims = audit.claims().filter(answer=item.answer)
            open_disputes += claims.exclude(gold_labels__audit=audit).count()
        elif any(a.pk in reopenings and a.status != "submitted" for a in asg):
            reopened += 1
        else:
            waiting += 1
    return open_disputes, reopened, waiting


class Followups(StatesCase):
    def setUp(self):
        self.client.force_login(self.p["lead"])

    def page(self, state, **headers):
        r = self.client.get(f"/reports/{self.s[state].pk}/", headers=headers)
        self.assertEqual(r.status_code, 200)
        return r.content.decode()

    def data(self, state):
        return json.loads(self.client.get(f"/reports/{self.s[state].pk}/report.json").content)

    def test_it_shows_no_answer_level_fail_rate_for_a_calibration_sample(self):
        html, r = self.page("calibration"), self.data("calibration")
        f = section(html, "faithfulness")
        self.assertIn("Not shown for a calibration sample: it draws claims", text(f))
        for figure in ("Population-weighted", "Answers failing", 'id="strata"', "Claim ratio", "Bad claims"):
            self.assertNotIn(figure, f)
        self.assertNotIn('<section id="policies">', html)
        self.assertIn('<section id="calibration">', html)  # the claim-level figures it does support
        self.assertEqual(r["policies"], [])
        self.assertEqual({"fail_rate", "weighted", "claim_ratio_mean", "counts"} & set(r["faithfulness"]), set())
        # Nothing is labelled yet: every answer holding a sampled claim waits for both annotators.
        n = self.s["calibration"].items.count()
        self.assertEqual(
            r["faithfulness"]["provisional"]["label"], f"provisional: {n} answers not labelled by both yet"
        )
        closed = self.page("closed")  # an answer audit keeps every figure
        self.assertIn('<section id="policies">', closed)
        self.assertIn("Population-weighted fail rate", section(closed, "faithfulness"))

    def partial_note(self, html):
        m = re.search(r'<p class="reading" id="judge-run-unfinished">(.*?)</p>', html, re.S)
        return text(m.group(1)).strip() if m else None

    def expected_note(self, audit, run, tail):
        claims = audit.claims()
        judged = JudgeVerdict.objects.filter(judge_version=run.judge_version, claim__in=claims).count()
        message = f" ({run.message})" if run.message else ""
        return (
            f"Partial: the latest run of this version over these answers, run {run.pk}, is not done: "
            f"{run.get_status_display()}, {run.answers_done} of {run.answers_total} answers done, "
            f"{plural(run.claims_done, 'claim', 'claims')} judged{message}. "
            f"{judged} of {claims.count()} claims of this audit have a verdict of this version: "
            f"the figures below cover those only{tail}."
        )

    def test_it_says_the_judge_figures_are_partial_while_the_versions_run_is_not_done(self):
        for state, status, tail in (
            ("judge_running", "Running", " until the run is done"),
            ("judge_failed", "Failed", "; resume the run to complete them"),
        ):
            with self.subTest(state=state):
                audit = self.s[state]
                run = JudgeRun.objects.get(audit=audit)
                html = self.page(state)
                self.assertEqual(self.partial_note(html), self.expected_note(audit, run, tail))
                self.assertIn(f'<a href="/judge/runs/{run.pk}/">run {run.pk}</a>', html)
                self.assertIn(status, self.partial_note(html))  # the status as written here, not the model's display
                fragment = self.page(state, **{"HX-Request": "true"})  # the judge-version switch keeps it
                self.assertEqual(self.partial_note(fragment), self.expected_note(audit, run, tail))
                self.assertEqual(self.data(state)["judge"]["unfinished_run"]["url"], f"/judge/runs/{run.pk}/")
        self.assertIsNone(self.partial_note(self.page("judge_done")))

    def test_it_takes_the_latest_run_over_any_of_the_audits_answers_and_only_of_that_version(self):
        audit = self.s["judge_failed"]
        failed = JudgeRun.objects.get(audit=audit)
        version = failed.judge_version
        other = make_judge_version("other", kind="anthropic", content_hash="o" * 64)
        JudgeRun.objects.create(judge_version=other, backend="anthropic", audit=audit, status="running")
        JudgeRun.objects.create(  # `elsewhere`: explicit answers, none of them in this audit
            judge_version=version, backend="anthropic", answer_ids=[self.s["closed"].items.first().answer_id]
        )
        # `elsewhere` is newer than `failed`: the note naming `failed` shows a run over other answers is not taken
        self.assertIn(f"run {failed.pk}, is not done: Failed", self.partial_note(self.page("judge_failed")))
        JudgeRun.objects.create(judge_version=version, backend="anthropic", audit=audit, status="done")
        self.assertIsNone(self.partial_note(self.page("judge_failed")))  # a later finished run completes it
        dataset = JudgeRun.objects.create(  # queued over the whole dataset: these answers too
            judge_version=version, backend="anthropic", dataset=audit.dataset, answers_total=7
        )
        self.assertIn(f"run {dataset.pk}, is not done: Queued, 0 of 7", self.partial_note(self.page("judge_failed")))

    def test_it_names_what_keeps_the_headline_provisional_instead_of_zero_open_disputes(self):
        for state, want in (
            ("reopened", (0, 1, 0)),  # B's answer 0 reopened, waiting for bob-b; nothing disputed
            ("one_done", (0, 0, 3)),  # B has started nothing
            ("half", (1, 0, 2)),  # answer 0 by both with claim 0 disputed; answers 1 and 2 unfinished
        ):
            with self.subTest(state=state):
                counts = pending(self.s[state])
                self.assertEqual(counts, want)
                disputes, reopened, waiting = counts
                said = [
                    (disputes, "dispute open", "disputes open"),
                    (
                        reopened,
                        "answer reopened, waiting for its annotator",
                        "answers reopened, waiting for their annotators",
                    ),
                    (waiting, "answer not labelled by both yet", "answers not labelled by both yet"),
                ]
                parts = [plural(n, one, many) for n, one, many in said if n]
                label = "provisional: " + "; ".join(parts)
                html = self.page(state)
                self.assertIn(f'id="provisional-tag">{label}</span>', html)
                self.assertNotIn("0 disputes open", html)
                self.assertNotIn("0 open disputes", text(html))
                if reopened:  # the provisional card says it too
                    card = text(section(html, "faithfulness"))
                    self.assertIn(
                        f"answer not labelled by both yet ({reopened} reopened, waiting for its annotator).", card
                    )
                trend = [p for p in self.data(state)["trend"]["points"] if p["current"]]
                self.assertEqual(trend[0]["provisional"]["label"], label)  # the trend table's tag says the same

    def test_it_carries_the_provisional_warning_and_n_of_n_on_the_policy_table(self):
        audit = self.s["adj_half"]  # answer 0 adjudicated; answers 1 and 2 each with claim 0 open
        gold = {i.pk: GoldLabel.objects.filter(audit=audit, claim__answer=i.answer).count() for i in audit.items.all()}
        complete = sum(gold[i.pk] == audit.claims().filter(answer=i.answer).count() for i in audit.items.all())
        sampled = audit.items.count()
        self.assertEqual((complete, sampled), (1, 3))
        policies = section(self.page("adj_half"), "policies")
        self.assertIn('<span class="tag provisional">provisional: 2 disputes open</span>', policies)
        self.assertIn(f"Answers with complete gold only: {complete} of {sampled} sampled answers.", text(policies))
        self.assertIn("a passing-heavy subset", policies)
        self.assertEqual([p["sampled"] for p in self.data("adj_half")["policies"]], [sampled, sampled])
        self.assertNotIn("provisional", section(self.page("closed"), "policies"))


class MethodNotAllowed(StatesCase):
    def test_it_says_which_methods_a_post_only_url_takes(self):
        c = Client()
        c.force_login(self.p["lead"])
        url = f"/adjudicate/{self.s['closed'].pk}/close/"
        r = c.get(url)
        self.assertEqual((r.status_code, r["Allow"], r["Content-Type"]), (405, "POST", "text/html; charset=utf-8"))
        html = r.content.decode()
        said = re.search(r'role="alert">([^<]+)<', html).group(1)
        self.assertEqual(said, "This address takes POST requests, not GET: it is where a form or a button sends "
                         "its data, not a page to open.")  # fmt: skip
        self.assertIn('<a class="brand" href="/">Claim Audit</a>', html)  # the site's layout, its menu
        r = c.get(url, headers={"Accept": "application/json"})
        self.assertEqual((r.status_code, r["Allow"]), (405, "POST"))
        self.assertEqual(r.content.decode(), "GET is not allowed here; allowed: POST.\n")
        self.assertTrue(r["Content-Type"].startswith("text/plain"))

    def test_it_keeps_api_405s_in_the_apis_json_error_shape(self):
        token = api_token_create(self.p["lead"], "t")[1]
        r = Client().get("/api/v1/judge-runs", headers={"Authorization": f"Bearer {token}"})
        self.assertEqual((r.status_code, r["Allow"]), (405, "POST"))
        self.assertEqual(r.json(), {"message": "method GET not allowed: this endpoint accepts POST", "errors": []})
