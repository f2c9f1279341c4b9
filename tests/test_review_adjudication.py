"""Review of the adjudication area: evidence offsets and who may see or resolve an answer."""

from django.test import TestCase

from annotations.adjudication import services
from audit.models import Claim, Passage
from tests.adjudication_helpers import build_audit, submit_all
from tests.factories import make_user


class CrlfEvidenceTests(TestCase):
    def setUp(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj = make_user("adj", "adjudicator")
        self.audit = build_audit(a, b, n_answers=1)
        submit_all(self.audit)
        self.claim = Claim.objects.get(position=0)
        self.passage = Passage.objects.get(answer_id=self.claim.answer_id, position=1)
        self.passage.text = "Line one.\r\nLine two: Paris is the capital.\r\nLine three."
        self.passage.save()

    def test_it_maps_browser_offsets_of_a_crlf_passage_onto_the_stored_text(self):
        shown = self.passage.text.replace("\r\n", "\n")  # what the browser's DOM holds and counts in
        start = shown.index("Paris")
        gold = services.gold_adjudicate(
            self.audit, self.claim, user=self.adj, verdict="supported", evidence="new",
            passage=str(self.passage.id), start=str(start), end=str(start + 5), reason="Passage 2 says so.",
            expected_version=0)
        self.assertEqual(gold.evidence_text, "Paris")
        self.assertEqual(self.passage.text[gold.evidence_start:gold.evidence_end], "Paris")
