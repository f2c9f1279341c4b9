"""The adjudicator's home page: per audit with work, disputes left, progress, where to continue, judge review."""

from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from annotations.adjudication import services
from audit.models import AuditAnswer, Claim
from tests.factories import judge_audit, make_gold, make_labelled_audit, make_user


class AdjudicatorHomeTests(TestCase):
    def setUp(self):
        self.a, self.b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj = make_user("adj", "adjudicator")
        self.client.force_login(self.adj)

    def audit(self, name, n_answers=3):
        audit = make_labelled_audit(self.a, self.b, n_answers=n_answers, name=name)  # claim 0 of each answer disputed
        make_gold(audit)
        return audit, list(AuditAnswer.objects.filter(audit=audit).order_by("position"))

    def settle(self, audit, item):
        claim = Claim.objects.get(answer=item.answer, position=0)
        services.gold_adjudicate(audit, claim, user=self.adj, verdict="supported", reason="A", expected_version=0)

    def test_it_shows_disputes_left_progress_and_where_to_continue(self):
        audit, items = self.audit("W1")
        self.settle(audit, items[0])
        judge_audit(audit, lambda c: "contradicted" if c.position == 1 else "supported")
        r = self.client.get("/")
        self.assertContains(r, "<strong>2</strong> of 3 disputed claims left.", html=False)
        self.assertContains(r, '<progress max="3" value="1">1 of 3</progress>', html=True)
        claim = Claim.objects.get(answer=items[1].answer, position=0)
        self.assertContains(
            r, f'href="/adjudicate/{audit.id}/answers/{items[1].id}/?claim={claim.id}">Continue adjudicating</a>'
        )
        self.assertContains(r, "3 claims for judge-error review.")

    def test_it_leaves_out_audits_without_work_and_says_when_all_is_settled(self):
        audit, items = self.audit("settled-audit", n_answers=1)
        self.assertContains(self.client.get("/"), "Continue adjudicating")
        self.settle(audit, items[0])
        r = self.client.get("/")
        self.assertNotContains(r, "settled-audit")  # not "W1": a CSRF token or nonce may contain it
        self.assertContains(r, "No disputed claims waiting for you.")
        judge_audit(audit, lambda c: "contradicted")
        r = self.client.get("/")  # judge review alone is work too
        self.assertContains(r, "All disputes settled.")
        self.assertContains(r, "2 claims for judge-error review.")

    def test_it_keeps_home_queries_constant_for_one_or_several_audits(self):
        self.audit("W1")
        self.client.get("/")
        with CaptureQueriesContext(connection) as one:
            self.assertContains(self.client.get("/"), "Continue adjudicating", count=1)
        for name in ("W2", "W3", "W4"):
            self.audit(name, n_answers=4)
        with self.assertNumQueries(len(one)):
            self.assertContains(self.client.get("/"), "Continue adjudicating", count=4)
