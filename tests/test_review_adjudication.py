"""Review of the adjudication area: evidence offsets and who may see or resolve an answer."""

from django.test import TestCase

from annotations.adjudication import services
from audit.models import AuditAnswer, Claim, Passage
from tests.factories import judge_audit, make_assignments, make_audit, make_gold, make_labelled_audit, make_user


class CrlfEvidenceTests(TestCase):
    def setUp(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj = make_user("adj", "adjudicator")
        self.audit = make_labelled_audit(a, b, n_answers=1)
        make_gold(self.audit)
        self.claim = Claim.objects.get(position=0)
        self.passage = Passage.objects.get(answer_id=self.claim.answer_id, position=1)
        self.passage.text = "Line one.\r\nLine two: Paris is the capital.\r\nLine three."
        self.passage.save()

    def test_it_maps_browser_offsets_of_a_crlf_passage_onto_the_stored_text(self):
        shown = self.passage.text.replace("\r\n", "\n")  # what the browser's DOM holds and counts in
        start = shown.index("Paris")
        gold = services.gold_adjudicate(
            self.audit,
            self.claim,
            user=self.adj,
            verdict="supported",
            evidence="new",
            passage=str(self.passage.id),
            start=str(start),
            end=str(start + 5),
            reason="Passage 2 says so.",
            expected_version=0,
        )
        self.assertEqual(gold.evidence_text, "Paris")
        self.assertEqual(self.passage.text[gold.evidence_start : gold.evidence_end], "Paris")


class SameAnswerInAnotherAuditTests(TestCase):
    """Someone both adjudicator and annotator, still labelling an answer in this week's audit, must not
    see other people's labels and the judge's verdicts on the very same claims in an older audit."""

    def setUp(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.both = make_user("both", "annotator", "adjudicator")
        self.old = make_labelled_audit(a, b, n_answers=1, name="2026-W47")
        judge_audit(self.old, lambda claim: "supported")
        make_gold(self.old)
        self.item = AuditAnswer.objects.get(audit=self.old)
        new = make_audit([self.item.answer], name="2026-W48")
        make_assignments(new, self.both)
        self.client.force_login(self.both)

    def test_it_hides_the_answer_from_the_queue(self):
        r = self.client.get("/adjudicate/")
        self.assertEqual(r.status_code, 200)
        self.assertNotContains(r, self.item.answer.external_id)

    def test_it_refuses_the_adjudication_page_and_the_save(self):
        url = f"/adjudicate/{self.old.id}/answers/{self.item.id}/"
        self.assertEqual(self.client.get(url).status_code, 404)
        claim = Claim.objects.filter(answer_id=self.item.answer_id).first()
        r = self.client.post(f"{url}claims/{claim.id}/", {"verdict": "supported", "reason": "x", "version": 0})
        self.assertEqual(r.status_code, 404)
