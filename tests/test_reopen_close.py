"""Reopening an assignment and closing an audit: the exact sequence through the web, as a lead, an
annotator and an adjudicator would click it: reopen -> close refused -> relabel and resubmit -> gold
agrees with the current labels -> close -> the export carries both annotators' current verdicts."""

import csv
import io

from django.test import TestCase

from annotations.models import Assignment, GoldLabel, Label
from audit.models import Audit, AuditAnswer, Claim, HistoryEvent
from tests.factories import make_gold, make_labelled_audit, make_user


class ReopenCloseTests(TestCase):
    def setUp(self):
        self.ann1, self.ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj, self.lead = make_user("adj", "adjudicator"), make_user("lead", "lead")
        # Two answers, three claims each; B says unsupported on claim 0 (a dispute), all else supported.
        self.audit = make_labelled_audit(self.ann1, self.ann2, n_answers=2, evidence_slots="AB")
        make_gold(self.audit)
        self.item = AuditAnswer.objects.filter(audit=self.audit).order_by("position").first()
        self.claims = list(Claim.objects.filter(answer=self.item.answer).order_by("position"))
        for item in AuditAnswer.objects.filter(audit=self.audit):  # claim 0 of each answer adjudicated
            self.adjudicate(item, Claim.objects.get(answer=item.answer, position=0), "supported", version=0)
        self.reopened = Assignment.objects.get(audit_answer=self.item, slot="B")

    def adjudicate(self, item, claim, verdict, version):
        self.client.force_login(self.adj)
        r = self.client.post(
            f"/adjudicate/{self.audit.id}/answers/{item.id}/claims/{claim.id}/",
            {"verdict": verdict, "evidence": "none", "version": str(version), "reason": "checked the passage"},
            headers={"HX-Request": "true"},
        )
        self.assertEqual(r.status_code, 200, r.content[:300])

    def close(self):
        self.client.force_login(self.lead)
        r = self.client.post(f"/adjudicate/{self.audit.id}/close/", {"next": "/audits/"}, follow=True)
        return Audit.objects.get(pk=self.audit.pk).status, r.content.decode()

    def reopen(self):
        self.client.force_login(self.lead)
        r = self.client.post(f"/label/{self.reopened.id}/reopen/", {"reason": "claim 1 was misread", "next": "/"})
        self.assertEqual(r.status_code, 302)

    def label(self, claim, verdict):
        self.client.force_login(self.ann2)
        r = self.client.post(f"/label/{self.reopened.id}/claim/{claim.id}/", {"verdict": verdict, "note": "re-read"})
        self.assertEqual(r.status_code, 200, r.content[:300])

    def submit(self):
        self.client.force_login(self.ann2)
        r = self.client.post(f"/label/{self.reopened.id}/submit/", headers={"HX-Request": "true"})
        self.assertEqual(r.status_code, 200, r.content[:500])  # htmx: a client redirect to the next answer

    def gold(self):
        return {g.claim_id: g for g in GoldLabel.objects.filter(audit=self.audit)}

    def test_it_withdraws_agreed_gold_on_reopen_and_keeps_adjudicated_gold(self):
        self.reopen()
        gold = self.gold()
        self.assertEqual(gold[self.claims[0].id].source, "adjudicated")  # stays
        self.assertNotIn(self.claims[1].id, gold)  # agreed gold rested on B's label: withdrawn
        self.assertNotIn(self.claims[2].id, gold)
        withdrawn = HistoryEvent.objects.filter(audit=self.audit, action="agreement_withdrawn", user=self.lead)
        self.assertEqual(sorted(withdrawn.values_list("claim_id", flat=True)), [self.claims[1].id, self.claims[2].id])
        self.assertEqual(Audit.objects.get(pk=self.audit.pk).status, "labelling")  # back from adjudication

    def test_it_runs_reopen_refused_close_resubmit_close_export(self):
        self.assertEqual(Audit.objects.get(pk=self.audit.pk).status, "adjudication")
        self.reopen()

        status, page = self.close()
        self.assertEqual(status, "labelling")
        self.assertIn("1 assignment is not submitted", page)

        # ann2 relabels: now agrees with ann1 on claim 0 (not what the adjudicator saw), disputes claim 1.
        self.label(self.claims[0], "supported")
        self.label(self.claims[1], "unsupported")
        self.submit()  # accepted, not 409
        self.reopened.refresh_from_db()
        self.assertEqual(self.reopened.status, "submitted")

        gold = self.gold()
        self.assertTrue(gold[self.claims[0].id].recheck)  # adjudicated gold stays, marked for re-check
        self.assertEqual(gold[self.claims[0].id].source, "adjudicated")
        self.assertNotIn(self.claims[1].id, gold)  # a dispute now: no gold until adjudicated
        self.assertEqual((gold[self.claims[2].id].source, gold[self.claims[2].id].verdict), ("agreed", "supported"))

        self.client.force_login(self.adj)
        queue = self.client.get("/adjudicate/").content.decode()
        self.assertIn("re-check: a label changed", queue)
        self.assertIn(self.claims[1].text, queue)

        status, page = self.close()
        self.assertEqual(status, "adjudication")
        self.assertIn("1 claim still has no gold label", page)

        self.adjudicate(self.item, self.claims[1], "unsupported", version=0)
        status, page = self.close()
        self.assertEqual(status, "adjudication")
        self.assertIn("1 adjudicated gold label is marked for re-check", page)

        self.adjudicate(self.item, self.claims[0], "supported", version=gold[self.claims[0].id].version)
        self.assert_gold_agrees_with_current_labels()
        status, _page = self.close()
        self.assertEqual(status, "closed")

        r = self.client.get(f"/adjudicate/export/{self.audit.id}/?level=claim&format=csv")
        rows = list(csv.DictReader(io.StringIO(r.content.decode())))
        self.assertEqual(len(rows), 6)
        current = self.current_labels()
        for row in rows:
            claim_id = int(row["claim_id"])
            self.assertEqual((row["annotator_a_verdict"], row["annotator_b_verdict"]), current[claim_id], row)
        self.assertIn(("supported", "unsupported"), [current[c.id] for c in self.claims])  # ann2's new claim 1

    def current_labels(self):
        out = {}
        for lb in Label.objects.filter(assignment__audit_answer__audit=self.audit).select_related("assignment"):
            out.setdefault(lb.claim_id, {})[lb.assignment.slot] = lb.verdict
        return {c: (v["A"], v["B"]) for c, v in out.items()}

    def assert_gold_agrees_with_current_labels(self):
        current = self.current_labels()
        for claim_id, gold in self.gold().items():
            a, b = current[claim_id]
            if gold.source == "agreed":
                self.assertEqual((a, b), (gold.verdict, gold.verdict))
            else:
                self.assertEqual(gold.basis, {"A": a, "B": b})
                self.assertFalse(gold.recheck)
        self.assertEqual(len(self.gold()), 6)

    def test_it_clears_the_recheck_when_the_labels_return(self):
        self.reopen()
        self.label(self.claims[0], "supported")
        self.submit()
        self.assertTrue(self.gold()[self.claims[0].id].recheck)
        self.reopen()
        self.label(self.claims[0], "unsupported")  # back to what the adjudicator decided on
        self.submit()
        self.assertFalse(self.gold()[self.claims[0].id].recheck)
        actions = HistoryEvent.objects.filter(claim=self.claims[0], action__startswith="recheck")
        self.assertEqual(list(actions.values_list("action", flat=True)), ["recheck", "recheck_cleared"])

    def test_it_refuses_reopening_in_a_closed_audit(self):
        self.adjudicate(self.item, self.claims[0], "supported", version=1)  # nothing changes; still closable
        self.assertEqual(self.close()[0], "closed")
        self.reopen()
        self.reopened.refresh_from_db()
        self.assertEqual(self.reopened.status, "submitted")
        self.assertEqual(len(self.gold()), 6)

    def test_it_refuses_reopening_the_answer_of_someone_who_can_no_longer_label(self):
        """A reopened assignment is started work: it keeps its annotator and cannot be reassigned. Reopened for
        a deactivated annotator (or one without the role), nobody could ever resubmit it and the audit could never
        close; the assignments page offered exactly that."""
        self.ann2.is_active = False
        self.ann2.save()
        self.client.force_login(self.lead)
        r = self.client.get(f"/audits/{self.audit.id}/assignments/")
        row = r.content.decode().split(f'id="assignment-{self.reopened.pk}"')[1].split("</tr>")[0]
        assert "/reopen/" not in row and "deactivated" in row
        r = self.client.post(f"/label/{self.reopened.id}/reopen/", {"reason": "misread", "next": "/"}, follow=True)
        self.assertContains(r, "Not reopened: ann2 can no longer label")
        self.reopened.refresh_from_db()
        assert self.reopened.status == "submitted"

    def test_it_shows_why_the_close_button_is_disabled(self):
        self.reopen()
        self.client.force_login(self.lead)
        page = self.client.get(f"/audits/{self.audit.id}/").content.decode()
        self.assertIn("Closing needs every assignment submitted (1 unfinished or reopened)", page)
        self.assertIn("Close audit</button>", page)
        self.assertIn('<button type="submit" disabled>Close audit', page)


class ReopenEverythingTests(TestCase):
    """The probe's scale: all 32 assignments of a 16-answer audit reopened and relabelled through the web."""

    def test_it_leaves_no_gold_disagreeing_with_the_labels_and_no_empty_export_row(self):
        ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        adj, lead = make_user("adj", "adjudicator"), make_user("lead", "lead")
        audit = make_labelled_audit(ann1, ann2, n_answers=16, evidence_slots="AB")
        make_gold(audit)
        c = self.client
        c.force_login(lead)
        for a in Assignment.objects.filter(audit_answer__audit=audit):
            c.post(f"/label/{a.id}/reopen/", {"reason": "guidelines changed", "next": "/"})
        self.assertEqual(Assignment.objects.filter(audit_answer__audit=audit, status="submitted").count(), 0)
        self.assertEqual(GoldLabel.objects.filter(audit=audit, source="agreed").count(), 0)
        self.assertFalse(GoldLabel.objects.filter(audit=audit).exists())  # no adjudication yet: nothing left
        cycle = ["supported", "unsupported", "contradicted"]
        for user in (ann1, ann2):
            c.force_login(user)
            for a in Assignment.objects.filter(annotator=user, audit_answer__audit=audit).select_related(
                "audit_answer"
            ):
                for claim in Claim.objects.filter(answer_id=a.audit_answer.answer_id):
                    # A changes every third claim, B every second: a mix of new agreements and disputes.
                    k = claim.id % (3 if a.slot == "A" else 2)
                    c.post(f"/label/{a.id}/claim/{claim.id}/", {"verdict": cycle[k], "note": "relabelled"})
                r = c.post(f"/label/{a.id}/submit/", headers={"HX-Request": "true"})
                self.assertEqual(r.status_code, 200, r.content[:300])
        labels = {}
        for lb in Label.objects.filter(assignment__audit_answer__audit=audit).select_related("assignment"):
            labels.setdefault(lb.claim_id, {})[lb.assignment.slot] = lb.verdict
        gold = {g.claim_id: g for g in GoldLabel.objects.filter(audit=audit)}
        disputed = [cid for cid, v in labels.items() if v["A"] != v["B"]]
        self.assertTrue(disputed and len(disputed) < len(labels))
        for cid, v in labels.items():  # agreed gold exactly where the current labels agree
            self.assertEqual(cid in gold, v["A"] == v["B"], cid)
            if cid in gold:
                self.assertEqual(gold[cid].verdict, v["A"])
        c.force_login(adj)
        for cid in disputed:
            claim = Claim.objects.get(pk=cid)
            item = AuditAnswer.objects.get(audit=audit, answer_id=claim.answer_id)
            c.post(
                f"/adjudicate/{audit.id}/answers/{item.id}/claims/{cid}/",
                {"verdict": labels[cid]["A"], "evidence": "none", "version": "0", "reason": "A is right"},
                headers={"HX-Request": "true"},
            )
        c.force_login(lead)
        c.post(f"/adjudicate/{audit.id}/close/", {"next": "/audits/"})
        self.assertEqual(Audit.objects.get(pk=audit.pk).status, "closed")
        rows = list(csv.DictReader(io.StringIO(c.get(f"/adjudicate/export/{audit.id}/?format=csv").content.decode())))
        self.assertEqual(len(rows), 48)
        for row in rows:
            v = labels[int(row["claim_id"])]
            self.assertEqual((row["annotator_a_verdict"], row["annotator_b_verdict"]), (v["A"], v["B"]))
