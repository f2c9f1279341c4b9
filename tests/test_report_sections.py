"""The report's new figures end to end on known audits: the provisional range while disputes are open,
coverage of the strata, the fair noise floor, per-annotator figures (leads see all, an annotator only
their own). Expected values are computed here from the known labels."""

import json
import re
from html import unescape

from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from statsmodels.stats.proportion import proportion_confint

from annotations.models import Assignment, GoldLabel
from audit.models import Audit, AuditAnswer, Claim, JudgeVerdict
from tests.factories import make_answer, make_dataset, make_user
from tests.report_helpers import (
    KNOWN,
    SECONDS_A,
    KnownAuditCase,
    label_audit,
    make_stratified_audit,
    version,
)
from tests.test_report_page import drill_rows, section, text

BAD = ("contradicted", "unsupported")


def judge_verdict(v):
    return "unsupported" if v == "U!" else v


class ReportSectionTests(KnownAuditCase):
    def page(self):
        r = self.client.get(self.url)
        self.assertEqual(r.status_code, 200)
        return r.content.decode()

    def follow_links(self, html):
        links = re.findall(r'<a href="(/reports/\d+/(?:claims|answers)/\?[^"]+)">(\d+)</a>', html)
        for url, number in links:
            r = self.client.get(unescape(url))
            self.assertEqual(drill_rows(r.content.decode()), int(number), url)
        return {unescape(u) for u, _ in links}

    def open_disputes(self):
        """Delete the adjudicated gold: the disputed claims are open again (known1 and known3)."""
        GoldLabel.objects.filter(audit=self.audit, source="adjudicated").delete()
        return sum(1 for _, a, b, _, _ in KNOWN for x, y in zip(a, b, strict=True) if x != y)

    def test_it_shows_the_provisional_range_while_disputes_are_open(self):
        n_open = self.open_disputes()
        self.assertEqual(n_open, 2)
        # per answer: settled bad = an agreed bad claim; open = a disputed claim
        settled = [any(x == y and x in BAD for x, y in zip(a, b, strict=True)) for _, a, b, _, _ in KNOWN]
        opened = [any(x != y for x, y in zip(a, b, strict=True)) for _, a, b, _, _ in KNOWN]
        low, high = sum(settled), sum(s or o for s, o in zip(settled, opened, strict=True))
        own_a = sum(any(x in BAD for x in a) for _, a, _, _, _ in KNOWN)
        html = self.page()
        f = section(html, "faithfulness")
        self.assertIn('id="provisional-tag">provisional: 2 disputes open', f)
        lo = proportion_confint(low, 5, method="wilson")[0]
        hi = proportion_confint(high, 5, method="wilson")[1]
        self.assertIn(f'between <span class="num">{low / 5:.3f}</span> and <span class="num">{high / 5:.3f}', f)
        self.assertIn(f'<span class="ci">[{lo:.3f}, {hi:.3f}]', f)
        self.assertIn(f"{low} to {high} of 5 answers labelled by both fail, as the 2 open disputes", text(f))
        self.assertIn(f"Annotator A: {own_a / 5:.3f}", text(f))
        self.assertIn("(complete gold only)", f)
        t = section(html, "trend")
        self.assertIn('<span class="tag provisional">provisional: 2 disputes open</span>', t)
        self.assertIn('class="pt current provisional"', t)
        self.assertIn("no test and no regression until gold is complete", t)
        data = json.loads(self.client.get(f"{self.url}report.json").content)
        self.assertEqual(data["faithfulness"]["headline"], "provisional")
        self.assertEqual(data["faithfulness"]["provisional"]["label"], "provisional: 2 disputes open")
        self.assertEqual(data["trend"]["points"][-1]["provisional"]["label"], "provisional: 2 disputes open")
        self.assertFalse(data["trend"]["regression"])
        urls = self.follow_links(html)
        for wanted in ("open=1", "bound=pass", "bound=fail", "labelled=both", "answers/?a=fail"):
            self.assertTrue(any(wanted in u for u in urls), wanted)

    def test_it_counts_one_set_of_open_disputes_in_every_section(self):
        # A claim cut from an answer after both annotators submitted it (judged, never labelled, no gold): the
        # headline, the judge section and the drill-down list decide "open dispute" by one rule.
        item = self.audit.items.order_by("position").first()
        claim = Claim.objects.create(answer_id=item.answer_id, position=3, text="late claim", origin="imported")
        JudgeVerdict.objects.create(
            claim=claim, judge_version=self.k["latest"], raw_verdict="supported", verdict="supported"
        )
        r = json.loads(self.client.get(f"/reports/{self.audit.id}/report.json").content)
        opened = r["faithfulness"]["provisional"]["open_disputes"]
        listed = drill_rows(self.client.get(f"/reports/{self.audit.id}/claims/?open=1").content.decode())
        judge = r["judge"]["noise_floor"]
        self.assertEqual((opened, listed, judge["open_disputes"], judge["not_labelled"]), (1, 1, 1, 0))

    def drop_stratum(self, stratum):
        items = self.audit.items.filter(stratum=stratum)
        Assignment.objects.filter(audit_answer__in=items).delete()
        GoldLabel.objects.filter(audit=self.audit, claim__answer__audit_items__in=items).delete()

    def test_it_refuses_the_weighted_rate_when_a_large_stratum_has_no_data(self):
        self.drop_stratum("s2")  # N = 20 of 120: 16.7%
        f = section(self.page(), "faithfulness")
        self.assertIn(
            "not computable: stratum &#x27;s2&#x27; holds 16.7% of the population (more than 5%) and has no "
            "answer with complete gold",
            f,
        )
        self.assertIn("Strata without data: s2 (N=20, 0.167)", f)

    def test_it_withholds_the_judges_population_figures_when_a_large_stratum_has_no_judged_gold(self):
        # Weighting the s1 claims alone would read as the population's: s2 holds 20 of 120 answers.
        self.drop_stratum("s2")
        j = json.loads(self.client.get(f"/reports/{self.audit.id}/report.json").content)["judge"]
        why = "not computable: stratum 's2' holds 16.7% of the population (more than 5%) and has no "
        for figure in (j["weighted"]["accuracy"], j["weighted"]["gwet_ac1"], j["weighted"]["bad_claim"]["recall"]):
            self.assertEqual(figure["why"], why + "judged claim with gold")
        self.assertEqual(j["answers"]["weighted_accuracy"]["why"], why + "judged answer with complete gold")
        s1 = [(g[i], judge_verdict(v[i])) for st, _, _, g, v in KNOWN if st == "s1" for i in range(3) if v[i]]
        self.assertEqual(j["sampled"]["accuracy"]["value"], sum(a == b for a, b in s1) / len(s1))  # as sampled

    def test_it_weights_the_judge_by_the_answers_labelled_so_far_in_each_stratum(self):
        # Mid-week: 1 of the 3 s1 answers labelled (N = 100), both s2 answers (N = 20). The ratio estimator
        # sum_h N_h * mean(correct) / sum_h N_h * mean(judged) over each stratum's labelled answers; the weights
        # stored at drawing (100/3 and 10) would shrink s1 to a third of its share.
        items = self.audit.items.filter(stratum="s1", position__in=[1, 2])
        Assignment.objects.filter(audit_answer__in=items).delete()
        GoldLabel.objects.filter(audit=self.audit, claim__answer__audit_items__in=items).delete()
        rows = [r for i, r in enumerate(KNOWN) if i not in (1, 2)]
        population = {"s1": 100, "s2": 20}
        right = total = 0.0
        for h, N in population.items():
            pairs = [(g[i], judge_verdict(v[i])) for st, _, _, g, v in rows if st == h for i in range(3) if v[i]]
            answers = sum(r[0] == h for r in rows)
            right += N / answers * sum(a == b for a, b in pairs)
            total += N / answers * len(pairs)
        self.assertEqual((right, total), (340, 350))  # s1: 3 of 3 right; s2: 4 of 5 right, 2 answers
        j = json.loads(self.client.get(f"/reports/{self.audit.id}/report.json").content)["judge"]
        self.assertAlmostEqual(j["weighted"]["accuracy"]["value"], right / total)

    def test_it_counts_an_answer_without_claims_as_seen_when_weighting_the_judge(self):
        # A third s2 answer with no claim at all, labelled by both: it adds no claim, but it is one of the three
        # s2 answers standing for N = 20 (not missing data to weight around).
        answer = make_answer(self.audit.dataset, external_id="no-claims", n_claims=0)
        item = AuditAnswer.objects.create(
            audit=self.audit, answer=answer, position=5, stratum="s2", stratum_population=20, stratum_sample=3,
            inclusion_probability=3 / 20, weight=20 / 3,
        )  # fmt: skip
        for slot, user in zip("AB", self.k["users"], strict=True):
            Assignment.objects.create(audit_answer=item, annotator=user, slot=slot, status="submitted")
        right = total = 0.0
        for h, N, answers in (("s1", 100, 3), ("s2", 20, 3)):
            pairs = [(g[i], judge_verdict(v[i])) for st, _, _, g, v in KNOWN if st == h for i in range(3) if v[i]]
            right += N / answers * sum(a == b for a, b in pairs)
            total += N / answers * len(pairs)
        j = json.loads(self.client.get(f"/reports/{self.audit.id}/report.json").content)["judge"]
        self.assertAlmostEqual(j["weighted"]["accuracy"]["value"], right / total)

    @override_settings(REPORT_MIN_STRATUM_SHARE=0.2)
    def test_it_covers_the_strata_with_data_and_lists_the_others(self):
        self.drop_stratum("s2")
        f = section(self.page(), "faithfulness")
        self.assertIn('id="weighted-fail-rate"><span class="num">0.667', f)  # s1 only: 2 of 3
        self.assertIn("Covers 100 of 120 answers in the population (1 of 2 strata)", f)
        self.assertIn('<tr class="no-data"><td>s2</td>', f)

    def test_it_sets_the_judge_beside_each_annotator_on_the_same_claims(self):
        same = [(a[i], b[i], g[i], judge_verdict(j[i])) for _, a, b, g, j in KNOWN for i in range(3) if j[i]]
        agree = {
            "judge": sum(x[3] == x[2] for x in same),
            "A": sum(x[0] == x[2] for x in same),
            "B": sum(x[1] == x[2] for x in same),
            "AB": sum(x[0] == x[1] for x in same),
        }
        j = section(self.page(), "judge")
        for key, row in (("judge", "noise-judge"), ("A", "noise-A"), ("B", "noise-B"), ("AB", "noise-AB")):
            m = re.search(rf'<tr id="{row}">.*?<span class="num">([\d.]+)</span>.*?">(\d+)</a>', j)
            self.assertEqual(m.group(1), f"{agree[key] / len(same):.3f}", key)
            self.assertEqual(int(m.group(2)), len(same) - agree[key], key)
        gap = (agree["judge"] - max(agree["A"], agree["B"])) / len(same)
        who = "annotator A or B (tied)" if agree["A"] == agree["B"] else "the better annotator"
        self.assertIn(f'Judge minus {who}: <span class="num">{gap:.3f}</span>', j)
        self.assertRegex(text(j), r"(not distinguishable|MORE|LESS)")

    def test_it_gives_the_lead_every_annotator_and_pair(self):
        e = section(self.page(), "effort")
        ann1, ann2 = self.k["users"]
        m = re.search(rf'<tr id="annotator-{ann1.id}"><th>ann1</th>(.*?)</tr>', e)
        row = re.sub(r'<a href="[^"]+">(\d+)</a>', r"\1", m.group(1))
        sorted_a = sorted(SECONDS_A)
        self.assertIn(
            f'<td class="num">15</td><td class="num">5</td> <td><span class="num">{sorted_a[2] / 60:.3f}', row
        )
        a_vs_gold = sum(x == y for _, a, _, g, _ in KNOWN for x, y in zip(a, g, strict=True))
        self.assertIn(f'<span class="num">{a_vs_gold / 15:.3f}</span>', row)
        self.assertIn(f"{15 - a_vs_gold} of 15 differ from gold", row)
        self.assertIn("ann1 and ann2", e)
        self.follow_links(e)

    def test_it_shows_an_annotator_only_their_own_figures(self):
        ann1, ann2 = self.k["users"]
        self.client.force_login(ann1)
        r = self.client.get(f"{self.url}mine/")
        self.assertEqual(r.status_code, 200)
        html = r.content.decode()
        self.assertIn(f'id="annotator-{ann1.id}"', html)
        self.assertNotIn(f'id="annotator-{ann2.id}"', html)
        self.assertNotIn("ann2", html)
        self.assertNotIn("/claims/?", html)  # no drill-down (those lists show the judge)
        for said in ("differ from gold", "another annotator", "kappa"):  # open: nothing that moves with others' labels
            self.assertNotIn(said, html)
        self.assertIn('<td class="num">15</td><td class="num">5</td>', html)  # the effort stays
        Audit.objects.filter(pk=self.k["audit"].pk).update(status="closed")
        closed = self.client.get(f"{self.url}mine/").content.decode()
        self.assertIn("you and another annotator", closed)
        self.assertIn("differ from gold", closed)
        self.assertNotIn("ann2", closed)
        self.assertEqual(self.client.get(self.url).status_code, 403)
        self.client.force_login(make_user("stranger", "annotator"))
        self.assertEqual(self.client.get(f"{self.url}mine/").status_code, 404)
        self.client.logout()
        self.assertEqual(self.client.get(f"{self.url}mine/").status_code, 302)

    def test_it_keeps_the_annotator_page_query_count_constant(self):
        ann1, _ = self.k["users"]
        rows = KNOWN * 8
        big = make_stratified_audit(
            [make_answer(make_dataset("big"), external_id=f"b{i}", n_claims=3) for i in range(len(rows))],
            [r[0] for r in rows],
            name="big",
            population={"s1": 500, "s2": 90},
        )
        label_audit(big, rows, version("big-v"), self.k["users"])
        self.client.force_login(ann1)
        with CaptureQueriesContext(connection) as ctx:
            self.client.get(f"{self.url}mine/")
        with self.assertNumQueries(len(ctx)):
            self.assertEqual(self.client.get(f"/reports/{big.id}/mine/").status_code, 200)
