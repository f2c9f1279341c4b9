"""A claim cut from an answer after both annotators submitted it (a judge run decomposing it later, a
re-decompose) has no label and no gold: the report counts it as an open dispute and the close refuses, so the
adjudication queue must list it too (as unlabelled: it needs labels or a gold verdict), or nothing could settle it."""

from django.test import TestCase

from annotations.adjudication import services
from audit.models import AuditAnswer, Claim, ClaimOrigin
from tests.factories import make_gold, make_labelled_audit, make_user

NOTE = "unlabelled: cut after both annotators submitted; needs labels (reopen the answer) or a gold verdict"


class UnlabelledClaimTests(TestCase):
    def setUp(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.audit = make_labelled_audit(a, b, n_answers=2, n_claims=2, verdicts=lambda i, p, s: "supported")
        make_gold(self.audit)  # both agree everywhere: every claim has gold, nothing to adjudicate
        self.item = AuditAnswer.objects.get(audit=self.audit, position=1)
        self.late = Claim.objects.create(
            answer=self.item.answer, position=2, text="A claim the judge cut later.", origin=ClaimOrigin.JUDGE
        )
        self.adj, self.lead = make_user("adj", "adjudicator"), make_user("lead", "lead")

    def report(self):
        self.client.force_login(self.lead)
        return self.client.get(f"/reports/{self.audit.pk}/report.json").json()["faithfulness"]

    def test_it_lists_the_claim_in_the_queue_the_report_counts_as_an_open_dispute(self):
        f = self.report()
        self.assertEqual((f["headline"], f["provisional"]["open_disputes"]), ("provisional", 1))
        with self.assertRaisesMessage(services.AdjudicationError, "1 claim still has no gold label"):
            services.audit_close(self.audit, self.lead)
        self.client.force_login(self.adj)
        queue = self.client.get("/adjudicate/")
        self.assertContains(queue, self.late.text)
        self.assertContains(queue, NOTE)
        entry = queue.context["audits"][0]
        self.assertEqual((entry["disputed"], entry["resolved"]), (1, 0))
        self.assertContains(self.client.get("/"), "Continue adjudicating")
        page = self.client.get(f"/adjudicate/{self.audit.pk}/answers/{self.item.pk}/")
        self.assertContains(page, f'id="claim-block-{self.late.pk}"')
        self.assertContains(page, NOTE)

    def test_it_closes_once_the_adjudicator_gives_it_gold(self):
        gold = {"verdict": "unsupported", "reason": "No passage says it.", "expected_version": 0}
        services.gold_adjudicate(self.audit, self.late, user=self.adj, **gold)
        f = self.report()
        self.assertEqual(f["headline"], "gold")
        self.client.force_login(self.adj)
        queue = self.client.get("/adjudicate/")
        self.assertContains(queue, self.late.text)  # listed as resolved, as a settled dispute is
        self.assertContains(queue, "resolved")
        audit, stopped = services.audit_close(self.audit, self.lead)
        self.assertTrue(audit.is_closed)
