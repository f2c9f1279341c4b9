"""Every page and API endpoint, as every role, in every state of an audit's week (tests/state_helpers.py):
never a 500; each refusal a 403/404/405 (401 from the API) saying why; an annotator never sees the other's
labels, name or the judge; the report's numbers state what they cover; exports give the data with its status."""

import csv
import io
import json
import logging
import re

from django.test import Client

from annotations.models import Assignment, GoldLabel
from audit.models import AuditAnswer, JudgeRun, JudgeVersion
from claimaudit.services import api_token_create
from tests.loop_helpers import text_of
from tests.state_helpers import MARK, StatesCase

ROLES = ("lead", "A", "B", "adj", "outsider", "anon")
DRILLED = ("half", "reopened", "judge_done", "strata", "calibration", "simple")
LEAD, OWN, READ, MINE, ADJ, PROGRESS, POST = "lead", "own", "read", "mine", "adj", "progress", "post"
URLS = [  # (url, who may read it); POST: a form's target, which a GET must refuse
    *((u, LEAD) for u in ("/audits/{a}/", "/audits/{a}/assignments/", "/audits/{a}/guidelines/", "/audits/{a}/like/",
                          "/reports/{a}/", "/reports/{a}/report.json", "/reports/{a}/claims/", "/reports/{a}/answers/",
                          "/adjudicate/export/{a}/", "/adjudicate/export/{a}/?level=answer&format=jsonl",
                          "/adjudicate/export/{a}/?format=parquet", "/adjudicate/{a}/answers/{item}/history/",
                          "/answers/{answer}/", "/judge/runs/{run}/", "/judge/versions/{version}/",
                          "/api/v1/audits/{a}/report", "/api/v1/audits/{a}/gold",
                          "/api/v1/audits/{a}/gold?level=answer&format=parquet", "/api/v1/datasets/{ds}/answers",
                          "/api/v1/judge-runs/{run}", "/lab/?dataset={dsid}")),
    ("/label/{asgA}/", OWN), ("/label/{asgB}/", OWN), ("/label/queue/{a}/", OWN), ("/label/guidelines/{a}/", READ),
    ("/reports/{a}/mine/", MINE), ("/adjudicate/{a}/answers/{item}/", ADJ), ("/api/v1/audits/{a}", PROGRESS),
    *((u, POST) for u in ("/audits/{a}/assign/", "/audits/{a}/add-annotator/", "/audits/{a}/judge/",
                          "/audits/assignments/{asgA}/reassign/", "/notifications/audits/{a}/webhook/",
                          "/label/{asgA}/claim/{claim}/", "/label/{asgA}/submit/", "/label/{asgA}/reopen/",
                          "/adjudicate/{a}/answers/{item}/claims/{claim}/", "/adjudicate/{a}/answers/{item}/take-all/",
                          "/adjudicate/{a}/close/", "/adjudicate/{a}/reopen/", "/judge/runs/{run}/resume/",
                          "/jobs/judge-runs/{run}/cancel/")),
]  # fmt: skip
SITE = [  # pages of no one audit, which list audits in every state; None: every signed-in person
    *((u, None) for u in ("/", "/password/", "/tokens/", "/notifications/email/", "/api/v1/openapi.json")),
    ("/adjudicate/", "adj"), ("/adjudicate/?status=open", "adj"), ("/adjudicate/?status=resolved", "adj"),
    *((u, "lead") for u in ("/people/", "/answers/", "/import/", "/judge/runs/", "/judge/definitions/", "/lab/",
                            "/lab/guardrail/", "/audits/", "/audits/new/", "/audits/new/calibration/",
                            "/api/v1/datasets")),
]  # fmt: skip


class EveryState(StatesCase):
    @classmethod
    def setUpTestData(cls):
        super().setUpTestData()
        cls.tokens = {k: api_token_create(u, "t")[1] for k, u in cls.p.items()}

    def ids(self, audit):
        item = AuditAnswer.objects.filter(audit=audit).order_by("position").first()
        asg = {a.slot: a for a in Assignment.objects.filter(audit_answer=item)}
        run = JudgeRun.objects.filter(audit=audit).first()
        version = JudgeVersion.objects.filter(verdicts__claim__in=audit.claims()).first()
        first = {"answer": item.answer_id, "claim": audit.claims().first().pk, "asg": asg}
        first |= {"asgA": asg["A"].pk if asg else 0, "asgB": asg["B"].pk if asg else 0}
        ds = {"ds": audit.dataset.name, "dsid": audit.dataset_id}
        return {
            "a": audit.pk,
            "item": item.pk,
            **first,
            **ds,
            "run": run.pk if run else 0,
            "version": version.pk if version else 0,
        }

    def setUp(self):
        self.clients = {role: Client(raise_request_exception=False) for role in ROLES}
        for role, c in self.clients.items():
            if role != "anon":
                c.force_login(self.p[role])
        quiet = logging.getLogger("django.request")  # refusals are expected here; a 500 fails its status check
        self.addCleanup(quiet.setLevel, quiet.level)
        quiet.setLevel(logging.ERROR)

    def get(self, role, url):
        c = self.clients[role]
        auth = (
            {"HTTP_AUTHORIZATION": f"Bearer {self.tokens[role]}"} if url.startswith("/api/") and role != "anon" else {}
        )
        return c.get(url, **auth)

    def expected(self, role, rule, url, ctx, state):
        """The status a role should get: 200 where it may read and the thing exists, else the refusal."""
        if role == "anon":
            return 401 if url.startswith("/api/") else 302
        mine = role in ("A", "B") and bool(ctx["asg"])
        if rule == POST:  # the role check (403) or the assignment's owner check (404) comes before the method's
            if url.startswith("/label/{asgA}/reopen/"):
                return 405
            if url.startswith("/label/"):
                return {"A": 405 if mine else 404, "B": 404}.get(role, 403)
            need = "adj" if "/claims/" in url or "take-all" in url else "lead"
            return 405 if role == need else 403
        exists = not ("{run}" in url and not ctx["run"]) and not ("{version}" in url and not ctx["version"])
        ready = bool(ctx["asg"]) and all(a.status == "submitted" for a in ctx["asg"].values())
        own_slot = {"/label/{asgA}/": "A", "/label/{asgB}/": "B"}.get(url, role)
        if rule == LEAD and role == "lead" and url.endswith("/like/") and state in ("strata", "calibration"):
            return 400  # no next week like this one: the page says why (see test_state_numbers)
        return {
            LEAD: (200 if exists else 404) if role == "lead" else 403,
            OWN: (200 if mine and own_slot == role else 404) if role in ("A", "B") else 403,
            READ: 200 if role in ("lead", "adj") or mine else 404,
            MINE: 200 if mine else 404,
            ADJ: (200 if ready else 404) if role == "adj" else 403,
            PROGRESS: 200 if role == "lead" or mine else (404 if role in ("A", "B") else 403),
        }[rule]

    def test_it_answers_every_url_in_every_state_as_every_role_with_a_reason_for_each_refusal(self):
        for state, audit in self.s.items():
            ctx = self.ids(audit)
            for url, rule in URLS:
                for role in ROLES:
                    with self.subTest(state=state, url=url, role=role):
                        r = self.get(role, url.format(**ctx))
                        self.assertEqual(r.status_code, self.expected(role, rule, url, ctx, state))
                        self.assertReason(r)

    def test_it_answers_every_site_wide_page_with_audits_in_every_state(self):
        for url, who in SITE:
            for role in ROLES:
                with self.subTest(url=url, role=role):
                    r = self.get(role, url)
                    if role == "anon":
                        want = 401 if url == "/api/v1/datasets" else 302
                    else:
                        want = 200 if who is None or who == role else 403
                    self.assertEqual(r.status_code, want)
                    self.assertReason(r)

    def assertReason(self, r):
        if r.status_code in (403, 404) and r["Content-Type"].startswith("application/json"):
            self.assertTrue(r.json()["message"])
        elif r.status_code in (403, 404):
            said = re.search(r'role="alert">([^<]+)<', r.content.decode())
            self.assertTrue(said and said.group(1).strip(), r.content[:300])

    def test_it_keeps_each_annotator_blind_to_the_other_and_to_the_judge_in_every_state(self):
        other = {"A": ("B", "bob-b"), "B": ("A", "alice-a")}
        for state, audit in self.s.items():
            ctx = self.ids(audit)
            for role, (slot, name) in other.items():
                for url, _ in [*URLS, ("/", None)]:
                    r = self.get(role, url.format(**ctx))
                    if r.status_code == 200:
                        body = r.content.decode(errors="replace")
                        for secret in (MARK[slot], name, MARK["judge"]):
                            self.assertNotIn(secret, body, (state, role, url))
        ws = self.get("A", f"/label/{self.ids(self.s['disputes'])['asgA']}/").content.decode()
        self.assertIn(MARK["A"], ws)  # the check above reads pages that carry labels
        adj = self.get("adj", "/adjudicate/{a}/answers/{item}/".format(**self.ids(self.s["judge_done"]))).content
        self.assertEqual([m for m in MARK.values() if m not in adj.decode()], [])  # both labels and the judge

    def test_it_states_what_each_report_number_covers_in_every_state(self):
        for state, audit in self.s.items():
            with self.subTest(state=state):
                r = json.loads(self.get("lead", f"/reports/{audit.pk}/report.json").content)
                cov, f = r["coverage"], r["faithfulness"]
                claims, gold = audit.claims().count(), GoldLabel.objects.filter(audit=audit).count()
                twice = audit.claims().filter(answer__audit_items__in=self.twice(audit)).count()
                self.assertEqual((cov["claims"], cov["claims_with_gold"]), (claims, gold))
                self.assertEqual(r["agreement"]["claims"]["n"], twice)  # only claims both annotators labelled
                self.assertEqual(
                    f["headline"], "gold" if cov["answers_complete_gold"] == cov["answers"] else "provisional"
                )
                if f["headline"] == "provisional":  # an open dispute is no gold: both bounds, over n of N answers
                    self.assertEqual(f["provisional"]["open_disputes"], twice - GoldLabel.objects.filter(
                        audit=audit, claim__answer__audit_items__in=self.twice(audit)).count())  # fmt: skip
                    both, items = self.twice(audit).count(), audit.items.count()  # counted from the rows
                    self.assertEqual(
                        (f["provisional"]["answers"], f["provisional"]["not_labelled"]), (both, items - both)
                    )
                for row in f["strata"]:  # a stratum's rate over its answers with complete gold, never [x, x]
                    self.assertLessEqual(row["answers"], row["sampled"])
                    if row["fail_rate"]["value"] is not None:
                        self.assertLess(row["fail_rate"]["ci"][0], row["fail_rate"]["ci"][1], row)
                page = text_of(self.get("lead", f"/reports/{audit.pk}/").content.decode())
                self.assertIn(f"{gold} of {claims} claims have gold", page)
                self.assertIsNone(re.search(r"\b(None|nan|NaN|inf)\b", page))
                if state in DRILLED:  # every count links to the list behind it
                    for link in sorted(set(re.findall(r'"[a-z_]*url": "(/reports/[^"]+)"', json.dumps(r)))):
                        self.assertEqual(self.get("lead", link).status_code, 200, link)

    def twice(self, audit):
        """The audit's answers whose two assignments are both submitted."""
        done = [i.pk for i in audit.items.all() if [a.status for a in i.assignments.all()] == ["submitted"] * 2]
        return AuditAnswer.objects.filter(pk__in=done)

    def test_it_exports_every_state_with_its_status(self):
        for state, audit in self.s.items():
            with self.subTest(state=state):
                r = self.get("lead", f"/adjudicate/export/{audit.pk}/")
                rows = list(csv.DictReader(io.StringIO(r.content.decode())))
                self.assertEqual(len(rows), audit.claims().count())
                self.assertEqual({x["provisional"] for x in rows}, {"false" if audit.is_closed else "true"})
                self.assertEqual("provisional" in r["Content-Disposition"], not audit.is_closed)
                api = self.get("lead", f"/api/v1/audits/{audit.pk}/gold?level=answer&format=jsonl")
                self.assertEqual(len(api.content.decode().splitlines()), audit.items.count())
