"""Moving between answers on the adjudication page (] / [ and their links), and the queue as one table per audit."""

import re

from django.test import TestCase

from annotations.adjudication import services
from annotations.models import Assignment
from audit.models import AuditAnswer, Claim
from tests.factories import make_gold, make_labelled_audit, make_user


class AnswerNavigationTests(TestCase):
    def setUp(self):
        self.a, self.b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj = make_user("adj", "adjudicator")
        self.audit = make_labelled_audit(self.a, self.b, n_answers=5)  # claim 0 of every answer is disputed
        self.items = list(AuditAnswer.objects.filter(audit=self.audit).order_by("position"))
        # Answer 2 was labelled by the adjudicator (skipped); answer 4 is not submitted by B yet (skipped).
        self.adj.groups.add(*self.a.groups.all())
        Assignment.objects.filter(audit_answer=self.items[2], slot="B").update(annotator=self.adj)
        Assignment.objects.filter(audit_answer=self.items[4], slot="B").update(status="started")
        make_gold(self.audit)
        self.client.force_login(self.adj)

    def page(self, i):
        return self.client.get(f"/adjudicate/{self.audit.id}/answers/{self.items[i].id}/").content.decode()

    def link(self, body, rel):
        m = re.search(rf'<a href="([^"]+)" rel="{rel}" data-nav="{rel}">', body)
        return m and m.group(1)

    def url(self, i):
        return f"/adjudicate/{self.audit.id}/answers/{self.items[i].id}/"

    def settle(self, i):
        claim = Claim.objects.get(answer=self.items[i].answer, position=0)
        services.gold_adjudicate(
            self.audit, claim, user=self.adj, verdict="supported", reason="A is right", expected_version=0
        )

    def test_it_links_the_next_and_previous_answers_with_disputes_in_queue_order(self):
        body = self.page(1)
        self.assertEqual(self.link(body, "next"), self.url(3))  # skips 2 (theirs), never 4 (not submitted)
        self.assertEqual(self.link(body, "prev"), self.url(0))
        self.assertIn("<kbd>]</kbd>", body)
        self.assertIsNone(self.link(self.page(0), "prev"))

    def test_it_prefers_unresolved_disputes_and_says_so_past_the_last_instead_of_wrapping(self):
        self.settle(3)
        body = self.page(1)
        self.assertIsNone(self.link(body, "next"))  # nothing later is open: no wrap round to answer 0
        self.assertIn("No later answer has open disputes; 1 earlier answer has some left", body)
        self.settle(0)
        body = self.page(3)
        self.assertIsNone(self.link(body, "next"))
        self.assertIn("1 earlier answer has some left", body)
        self.assertEqual(self.link(body, "prev"), self.url(1))  # the last earlier answer still open
        self.assertEqual(self.link(self.page(1), "prev"), self.url(0))  # settled, but there to look back at

    def test_it_sends_back_to_the_queue_when_no_disputes_are_left(self):
        for i in (0, 3):
            self.settle(i)
        body = self.page(1)
        self.assertIsNone(self.link(body, "next"))
        self.assertIn("No other answer in this audit has disputes left.", body)
        back = f'href="/adjudicate/?done={self.audit.id}" data-nav="next">Back to the queue <kbd>]</kbd>'
        self.assertIn(back, body)
        r = self.client.get(f"/adjudicate/?done={self.audit.id}")
        self.assertContains(r, "the open claims below still need gold")  # answer 1's dispute is still open
        self.settle(1)
        self.assertContains(self.client.get(f"/adjudicate/?done={self.audit.id}"), "No disputes left in this audit")
        self.assertNotContains(self.client.get("/adjudicate/?done=x"), "No disputes left")

    def test_it_lists_the_shortcuts_in_the_help_dialog(self):
        body = self.page(1)
        self.assertIn("<dt><kbd>]</kbd> / <kbd>[</kbd></dt><dd>next / previous answer with disputes", body)


class QueueTableTests(TestCase):
    def test_it_shows_one_accessible_table_per_audit_with_answer_group_rows(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        adj = make_user("adj", "adjudicator")
        audit = make_labelled_audit(
            a, b, n_answers=3, verdicts=lambda i, p, s: "unsupported" if s == "B" and p != 1 else "supported"
        )
        make_gold(audit)
        self.client.force_login(adj)
        body = self.client.get("/adjudicate/").content.decode()
        self.assertEqual(body.count('<table class="table queue-table">'), 1)
        self.assertIn(f"<caption>Disputed claims of {audit.name}, grouped by answer</caption>", body)
        self.assertEqual(body.count('<th scope="rowgroup" colspan="5">'), 3)
        self.assertEqual(body.count('<tbody class="queue-answer">'), 3)
        self.assertEqual(body.count('<th scope="col"'), 10)  # both tables' headers
        for item in AuditAnswer.objects.filter(audit=audit):
            for claim in Claim.objects.filter(answer=item.answer).exclude(position=1):
                self.assertIn(f'<a href="/adjudicate/{audit.id}/answers/{item.id}/?claim={claim.id}">', body)
