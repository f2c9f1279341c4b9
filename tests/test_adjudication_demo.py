from django.test import TestCase

from annotations.adjudication import demo
from annotations.adjudication.selectors import adjudication_queue
from annotations.models import Assignment, GoldLabel, Label
from audit.models import Claim
from tests.factories import make_answer, make_assignments, make_audit, make_user

TEXT = "Paris is the capital. It has two rivers. The mayor is Bob. Come back soon."
CLAIMS = ["Paris is the capital.", "It has two rivers.", "The mayor is Bob.", "Come back soon."]
SPANS = [
    {"start": TEXT.index("two rivers"), "end": TEXT.index("two rivers") + 10, "label_type": "Evident Conflict"},
    {"start": TEXT.index("mayor"), "end": TEXT.index("Bob.") + 4, "label_type": "Subtle Baseless Info"},
]


class DemoLabelsTests(TestCase):
    def setUp(self):
        self.ann1, self.ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        answers = [
            make_answer(
                external_id=f"ragtruth-{i}", text=TEXT, n_claims=0, meta={"human_labels": SPANS if i % 2 == 0 else []}
            )
            for i in range(10)
        ]
        for a in answers:
            for pos, c in enumerate(CLAIMS):
                start = TEXT.index(c)
                Claim.objects.create(
                    answer=a,
                    position=pos,
                    text=c,
                    origin="judge",
                    span_start=start,
                    span_end=start + len(c) if pos != 3 else None,
                )
        self.audit = make_audit(answers, name="demo", is_demo=True)
        make_assignments(self.audit, self.ann1, self.ann2)

    def test_it_maps_ragtruth_spans_to_verdicts_for_annotator_a(self):
        self.assertEqual(demo.demo_labels_load(self.audit, fraction=0.6), 6)
        a = Label.objects.filter(assignment__slot="A", claim__answer__external_id="ragtruth-0").order_by(
            "claim__position"
        )
        self.assertEqual([lb.verdict for lb in a], ["supported", "contradicted", "unsupported", "supported"])
        clean = Label.objects.filter(assignment__slot="A", claim__answer__external_id="ragtruth-1")
        self.assertEqual(set(clean.values_list("verdict", flat=True)), {"supported"})

    def test_it_perturbs_annotator_b_deterministically_and_documents_it(self):
        demo.demo_labels_load(self.audit, fraction=1.0)
        pairs = {(lb.claim_id, lb.assignment.slot): lb.verdict for lb in Label.objects.select_related("assignment")}
        for claim in Claim.objects.select_related("answer"):
            expected = demo.perturbed_verdict(pairs[(claim.id, "A")], claim.answer.external_id, claim.position)
            self.assertEqual(pairs[(claim.id, "B")], expected)
        flips = sum(pairs[(c, "A")] != pairs[(c, "B")] for c, _ in pairs) // 2
        self.assertTrue(1 <= flips <= 12, flips)  # about 10% of 40 claims
        self.assertEqual(demo.perturbed_verdict("contradicted", "x", 0), demo.perturbed_verdict("contradicted", "x", 0))
        self.assertIn("FLIP_RATE", demo.__doc__)

    def test_it_submits_demo_assignments_and_fills_the_queue(self):
        demo.demo_labels_load(self.audit, fraction=0.6)
        submitted = Assignment.objects.filter(status="submitted")
        self.assertEqual(submitted.count(), 12)
        self.assertEqual(submitted.filter(is_demo=True).count(), 12)
        self.assertTrue(all(60 <= s <= 200 for s in submitted.values_list("active_seconds", flat=True)))
        self.assertEqual(Assignment.objects.filter(status="assigned").count(), 8)
        labelled = Claim.objects.filter(answer__audit_items__position__lt=6)
        disputed = sum(1 for c in labelled if len(set(c.labels.values_list("verdict", flat=True))) == 2)
        self.assertGreater(disputed, 0)
        self.assertEqual(GoldLabel.objects.filter(source="agreed").count(), labelled.count() - disputed)
        queue = adjudication_queue(make_user("adj", "adjudicator"))[0]
        self.assertEqual(queue["disputed"], disputed)
        self.client.force_login(make_user("adj2", "adjudicator"))
        self.assertContains(self.client.get("/adjudicate/"), "demo data")
        n = Label.objects.count()
        demo.demo_labels_load(self.audit, fraction=0.6)  # a second load changes nothing
        self.assertEqual((Label.objects.count(), Assignment.objects.filter(status="submitted").count()), (n, 12))

    def test_it_refuses_an_unassigned_audit(self):
        Assignment.objects.filter(slot="B").delete()
        with self.assertRaisesMessage(ValueError, "needs two assignments"):
            demo.demo_labels_load(self.audit)
