"""Review: a closed audit's labels never change, even when the close lands between a request reading the
audit and writing to it (the workspace services get the assignment, with its audit, before they lock)."""

from django.test import TestCase

from annotations.models import Assignment, Label
from annotations.workspace import selectors, services
from audit.models import Audit, Claim
from tests.factories import make_assigned_audit, make_user


class StaleOpenAuditTests(TestCase):
    def setUp(self):
        self.ann, self.lead = make_user("ann", "annotator"), make_user("lead", "lead")
        self.audit, mine = make_assigned_audit(self.ann, n_answers=1, n_claims=2)
        self.a = selectors.own_assignment(self.ann, mine[0].pk)  # read while the audit is open
        self.claims = list(Claim.objects.filter(answer_id=self.a.audit_answer.answer_id).order_by("position"))

    def close_meanwhile(self):
        Audit.objects.filter(pk=self.audit.pk).update(status="closed")  # another request closes the audit

    def test_it_refuses_a_label_save_when_the_audit_closed_meanwhile(self):
        self.close_meanwhile()
        with self.assertRaises(services.Refused):
            services.claim_label_save(self.a, self.claims[0], user=self.ann, verdict="unsupported")
        self.assertFalse(Label.objects.exists())

    def test_it_refuses_answer_fields_when_the_audit_closed_meanwhile(self):
        self.close_meanwhile()
        with self.assertRaises(services.Refused):
            services.assignment_fields_save(self.a, user=self.ann, omission=True)
        self.assertFalse(Assignment.objects.get(pk=self.a.pk).omission)

    def test_it_refuses_a_submit_when_the_audit_closed_meanwhile(self):
        for claim in self.claims:
            Label.objects.create(assignment=self.a, claim=claim, verdict="unsupported")
        self.close_meanwhile()
        with self.assertRaises(services.Refused):  # not AuditClosed from the gold step: the view answers 409
            services.assignment_submit(self.a, self.ann)
        self.assertEqual(Assignment.objects.get(pk=self.a.pk).status, Assignment.Status.ASSIGNED)

    def test_it_counts_no_time_when_the_audit_closed_meanwhile(self):
        self.close_meanwhile()
        self.assertEqual(services.assignment_time_add(self.a, 30), 0)
        self.assertEqual(Assignment.objects.get(pk=self.a.pk).active_seconds, 0)

    def test_it_refuses_a_lead_reopen_when_the_audit_closed_meanwhile(self):
        Assignment.objects.filter(pk=self.a.pk).update(status=Assignment.Status.SUBMITTED)
        a = selectors.any_assignment(self.a.pk)
        self.close_meanwhile()
        with self.assertRaises(services.Refused):
            services.assignment_reopen(a, self.lead, "typo")
        self.assertEqual(Assignment.objects.get(pk=self.a.pk).status, Assignment.Status.SUBMITTED)
