from io import StringIO

from django.core.management import call_command
from django.test import TestCase

from annotations.models import Assignment, GoldLabel, Label
from audit.models import Answer, Audit, JudgeVerdict


class DemoTests(TestCase):
    def test_it_loads_the_whole_loop_and_reloads_as_a_noop(self):
        out = StringIO()
        call_command("load_demo", stdout=out)
        self.assertIn("password for all: claim-audit-demo", out.getvalue())
        self.assertEqual(Answer.objects.filter(dataset__name="RAGTruth").count(), 108)
        claims_judged = JudgeVerdict.objects.filter(judge_version__kind="offline").count()
        self.assertGreater(claims_judged, 300)
        audit = Audit.objects.get(name="demo-2026-W48")
        self.assertTrue(audit.is_demo)
        self.assertEqual(audit.items.count(), 40)
        self.assertEqual(Assignment.objects.filter(audit_answer__audit=audit).count(), 80)
        self.assertTrue(Label.objects.filter(assignment__is_demo=True).exists())
        agreed = GoldLabel.objects.filter(audit=audit, source="agreed").count()
        self.assertGreater(agreed, 0)
        # Some claims are disputed, so the adjudication queue is not empty.
        self.client.post("/login/", {"username": "adj", "password": "claim-audit-demo"})
        self.assertContains(self.client.get("/adjudicate/"), "disputed")
        # Loading again changes nothing.
        call_command("load_demo", stdout=StringIO())
        self.assertEqual(Answer.objects.count(), 108)
        self.assertEqual(JudgeVerdict.objects.count(), claims_judged)
        self.assertEqual(GoldLabel.objects.filter(audit=audit).count(), agreed)

    def test_it_lets_each_demo_user_open_their_start_page(self):
        call_command("load_demo", stdout=StringIO())
        for username, url in [("lead", "/audits/"), ("ann1", "/"), ("ann2", "/"), ("adj", "/adjudicate/")]:
            r = self.client.post("/login/", {"username": username, "password": "claim-audit-demo"})
            self.assertEqual(r.status_code, 302, username)
            self.assertEqual(self.client.get(url).status_code, 200, username)
