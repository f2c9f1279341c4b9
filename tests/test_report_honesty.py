"""The report says what its numbers cannot say: a figure that is not computable shows a dash in its card's
headline and its reason in small text; a reason shared by both ends of a provisional range is said once;
the judge-versus-gold comparison draws no conclusion while gold comes only from agreed claims or disputes
are open; tied annotators are called tied. Expected values are computed here from the known labels."""

import re

from annotations.models import Assignment, GoldLabel
from tests.report_helpers import KNOWN, KnownAuditCase
from tests.test_report_page import section, text


class ReportHonestyCase(KnownAuditCase):
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


def known_claims():
    """(answer, claim position, A, B, gold, judge) of every claim of KNOWN with a judge verdict."""
    out = []
    for i, (_, a, b, g, j) in enumerate(KNOWN):
        for p in range(3):
            if j[p] is not None:
                out.append((i, p, a[p], b[p], g[p], "unsupported" if j[p] == "U!" else j[p]))
    return out


class JudgeComparisonTests(ReportHonestyCase):
    def readings(self):
        j = section(self.page(), "judge")
        return text(re.search(r'<p id="noise-gap" class="reading">(.*?)</p>', j).group(1)), j

    def test_it_draws_the_conclusion_only_once_disputes_are_adjudicated(self):
        reading, _ = self.readings()
        self.assertRegex(reading, r"(MORE|LESS) than a trained annotator|not distinguishable")

    def test_it_calls_the_comparison_not_informative_while_gold_comes_only_from_agreed_claims(self):
        self.open_disputes()
        agreed = [c for c in known_claims() if c[2] == c[3]]  # with gold now: both labels agree, gold is theirs
        judge_agree = sum(c[5] == c[4] for c in agreed)
        reading, j = self.readings()
        self.assertIn(f"Not informative yet: the judge agrees with gold on {judge_agree / len(agreed):.1%}", reading)
        self.assertNotRegex(reading, r"MORE|LESS|distinguishable from a trained annotator here|the better one")
        disputes = len(known_claims()) - len(agreed)
        self.assertIn(f"{disputes} claims the annotators disagree on are waiting for adjudication", reading)
        row = text(re.search(r'<tr id="noise-A">(.*?)</tr>', j).group(1))
        self.assertIn("not informative: gold here is only claims both annotators agreed on", row)
        self.assertNotIn("1.000", row)

    def test_it_draws_no_conclusion_while_some_disputes_are_open(self):
        # known1's dispute stays adjudicated; known3's is open again
        GoldLabel.objects.filter(audit=self.audit, source="adjudicated", claim__answer__external_id="known3").delete()
        reading, _ = self.readings()
        self.assertIn(". Provisional, no conclusion yet: The judge agrees with gold", reading)
        self.assertIn("1 claim the annotators disagree on is still open", reading)
        self.assertNotRegex(reading, r"MORE than|LESS than|not distinguishable")

    def test_it_calls_tied_annotators_tied(self):
        claims = known_claims()
        a_agree, b_agree = sum(c[2] == c[4] for c in claims), sum(c[3] == c[4] for c in claims)
        self.assertEqual(a_agree, b_agree)  # KNOWN: each annotator differs from gold on one judged claim
        reading, j = self.readings()
        self.assertIn(f"annotators A and B (tied) on {a_agree / len(claims):.1%}", reading)
        self.assertNotIn("the better one", reading)
        self.assertIn("Judge minus annotator A or B (tied):", text(j))


class AnnotatorAgainstAgreedGoldTests(ReportHonestyCase):
    def test_it_calls_agreement_with_gold_made_only_of_agreed_claims_not_informative(self):
        self.open_disputes()
        ann1 = self.k["users"][0]
        with_gold = sum(x == y for _, a, b, _, _ in KNOWN for x, y in zip(a, b, strict=True))
        e = section(self.page(), "effort")
        row = text(re.search(rf'<tr id="annotator-{ann1.id}">(.*?)</tr>', e).group(1))
        self.assertIn(f"agreed on; 0 of {with_gold} differ from gold", row)
        self.assertEqual(row.count("not informative: gold here is only claims both annotators agreed on"), 1)
        self.assertNotIn("1.000", row)
        per_verdict = re.search(rf'<tr class="per-verdict" id="annotator-{ann1.id}-supported">(.*?)</tr>', e)
        self.assertNotIn("1.000", per_verdict.group(1))

    def test_it_gives_agreement_with_gold_once_a_dispute_is_adjudicated(self):
        ann1 = self.k["users"][0]
        claims = [(x, g) for _, a, _, gold, _ in KNOWN for x, g in zip(a, gold, strict=True)]
        e = section(self.page(), "effort")
        row = text(re.search(rf'<tr id="annotator-{ann1.id}">(.*?)</tr>', e).group(1))
        self.assertIn(f"{sum(x == g for x, g in claims) / len(claims):.3f}", row)
        self.assertNotIn("not informative", row)


class ProvisionalWordingTests(ReportHonestyCase):
    def test_it_says_one_open_dispute_resolves(self):
        GoldLabel.objects.filter(audit=self.audit, source="adjudicated", claim__answer__external_id="known3").delete()
        card = text(re.search(r'<div class="card" id="provisional-range">(.*?)</div>', self.page(), re.S).group(1))
        self.assertIn("as the 1 open dispute resolves as pass or as fail", card)

    def test_it_calls_complete_gold_passing_heavy_only_while_disputes_are_open(self):
        item = self.items(answer__external_id="known0").get()
        Assignment.objects.filter(audit_answer=item, slot="B").update(status=Assignment.Status.STARTED)
        GoldLabel.objects.filter(audit=self.audit, claim__answer=item.answer).delete()  # agreed gold is withdrawn
        f = section(self.page(), "faithfulness")
        self.assertIn("provisional: 1 answer not labelled by both yet", f)
        self.assertNotIn("passing-heavy", f)
        self.assertIn("No dispute is open: the answers not labelled by both yet are missing.", f)
        policies = re.search(r'<p class="muted" id="policies-provisional">(.*?)</p>', self.page(), re.S).group(1)
        self.assertNotIn("passing-heavy", policies)  # the policies table under it says the same
        self.assertIn("No dispute is open", policies)
