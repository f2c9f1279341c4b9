"""The report says what its numbers cannot say: a figure that is not computable shows a dash in its card's
headline and its reason in small text; a reason shared by both ends of a provisional range is said once;
the judge-versus-gold comparison draws no conclusion while gold comes only from agreed claims or disputes
are open; tied annotators are called tied. Expected values are computed here from the known labels."""

import re

from django.test import TestCase

from annotations.models import Assignment, GoldLabel
from tests.factories import make_user
from tests.report_helpers import known_audit
from tests.test_report_page import section, text


class ReportHonestyCase(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.k = known_audit()
        cls.audit = cls.k["audit"]
        cls.lead = make_user("lead", "lead")

    def setUp(self):
        self.client.force_login(self.lead)

    def page(self):
        r = self.client.get(f"/reports/{self.audit.id}/")
        self.assertEqual(r.status_code, 200)
        return r.content.decode()

    def items(self, **filters):
        return self.audit.items.filter(**filters)

    def unlabel(self, **filters):
        """The answers matching filters lose their assignments and gold: nobody has labelled them."""
        items = self.items(**filters)
        Assignment.objects.filter(audit_answer__in=items).delete()
        GoldLabel.objects.filter(audit=self.audit, claim__answer__audit_items__in=items).delete()

    def open_disputes(self):
        """Delete the adjudicated gold: every claim A and B disagree on is an open dispute again."""
        GoldLabel.objects.filter(audit=self.audit, source="adjudicated").delete()


class NotComputableCardTests(ReportHonestyCase):
    def test_it_shows_a_dash_in_the_headline_and_the_reason_in_small_text_below(self):
        self.unlabel(stratum="s2")  # N = 20 of 120 = 16.7% of the population, more than 5%, without data
        f = section(self.page(), "faithfulness")
        headline = re.search(r'<p class="stat" id="weighted-fail-rate">(.*?)</p>', f).group(1)
        self.assertEqual(text(headline).strip(), "—")
        why = re.search(r'<p class="why nc" id="weighted-fail-rate-why">(.*?)</p>', f).group(1)
        self.assertIn("not computable: stratum &#x27;s2&#x27; holds 16.7% of the population", why)

    def test_it_says_why_a_headline_has_no_interval_below_it_not_inside_it(self):
        self.open_disputes()  # known1 and known3 are no longer complete
        GoldLabel.objects.filter(audit=self.audit, claim__answer__external_id="known0").delete()
        # Complete now: known2 (3 supported) and known4 (2 supported, 1 non_assertive): both ratios are 1.
        f = section(self.page(), "faithfulness")
        headline = re.search(r'<p class="stat" id="claim-ratio">(.*?)</p>', f).group(1)
        self.assertEqual(headline, '<span class="num">1.000</span>')
        why = re.search(r'<p class="why ci" id="claim-ratio-why">(.*?)</p>', f).group(1)
        self.assertIn("not computable", why)


class ProvisionalRangeReasonTests(ReportHonestyCase):
    def test_it_says_a_reason_shared_by_both_ends_of_the_range_once(self):
        self.open_disputes()
        self.unlabel(stratum="s2")  # no answer of s2 (16.7% of the population) is labelled by both
        html = self.page()
        reason = "has no answer labelled by both"
        row = re.search(r'<tr class="current">(.*?)</tr>', section(html, "trend")).group(1)
        self.assertEqual(text(row).count(reason), 1, text(row))
        self.assertIn("provisional range not computable: stratum &#x27;s2&#x27;", text(row))
        card = re.search(r'<div class="card" id="provisional-weighted">(.*?)</div>', section(html, "faithfulness"))
        self.assertEqual(text(card.group(1)).count(reason), 1)
