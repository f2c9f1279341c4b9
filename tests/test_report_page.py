"""The report page end to end: known labels in, every number out (page and JSON); permissions;
claims behind each matrix cell; version filter; constant query count."""

import json
import re
from html import unescape as html_unescape

import krippendorff
import numpy as np
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from scipy.stats import fisher_exact
from statsmodels.stats.inter_rater import cohens_kappa

from annotations.models import Assignment, GoldLabel, Label
from audit.models import Audit
from tests.factories import make_answer, make_dataset, make_user
from tests.report_helpers import (
    KNOWN,
    KnownAuditCase,
    kg_interval,
    known_audit,
    label_audit,
    make_stratified_audit,
    version,
)


def section(html, sid):
    m = re.search(rf'<section id="{sid}">(.*?)</section>', html, re.S)
    assert m, f"section {sid} missing"
    return re.sub(r"\s+", " ", m.group(1))


def drill_rows(html):
    body = re.search(r'<table class="table drill" id="(?:claims|answers)">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return 0 if "match.</td>" in body else body.count("<tr>")


def text(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def ac1(t):
    t = np.asarray(t, dtype=float)
    n, q = t.sum(), len(t)
    pi = (t.sum(0) + t.sum(1)) / (2 * n)
    pe = (pi * (1 - pi)).sum() / (q - 1)
    return (np.trace(t) / n - pe) / (1 - pe)


class ReportPageTests(KnownAuditCase):
    def get(self, url=None, **params):
        r = self.client.get(url or self.url, params)
        self.assertEqual(r.status_code, 200)
        return r.content.decode()

    def test_it_is_for_leads_only(self):
        for user in (make_user("a", "annotator"), make_user("adj", "adjudicator"), self.k["users"][0]):
            self.client.force_login(user)
            for url in (
                self.url,
                f"{self.url}report.json",
                f"{self.url}claims/?judge=supported&gold=supported",
                f"{self.url}answers/?gold=fail",
            ):
                self.assertEqual(self.client.get(url).status_code, 403, url)
        self.client.force_login(self.lead)
        self.assertEqual(self.client.get("/reports/99999/").status_code, 404)
        self.client.logout()
        self.assertEqual(self.client.get(self.url).status_code, 302)

    def test_it_shows_every_faithfulness_number(self):
        f = section(self.get(), "faithfulness")
        self.assertIn('0.400</span> <span class="ci">[0.118, 0.769]', f)  # 2 of 5, Wilson
        self.assertIn("2 of 5 answers have an unsupported or contradicted claim", text(f))
        # weighted: 100/120 * 2/3 + 20/120 * 0; var = W1^2 p(1-p)/(n-1) (1 - 3/100)
        w1, p = 100 / 120, 2 / 3
        var = w1**2 * p * (1 - p) / 2 * 0.97  # s2 has 0 of 2 failing: no variance
        lo, hi = kg_interval(w1 * p, var, 5, 2)
        self.assertIn(f'0.556</span> <span class="ci">[{lo:.3f}, {hi:.3f}]', f)
        deff = var / (w1 * p * (1 - w1 * p) / 5)
        self.assertIn(f"Covers 120 of 120 answers in the population (2 of 2 strata); design effect {deff:.2f}", f)
        self.assertIn('id="claim-ratio"><span class="num">0.833</span>', f)  # (2/3 + 1/2 + 1 + 1 + 1) / 5
        self.assertIn('id="claim-ratio-pooled"><span class="num">0.846</span>', f)  # 11 / 13
        r1 = np.array([2 / 3, 1 / 2, 1])
        half = 1.959964 * (w1**2 * r1.var(ddof=1) / 3 * 0.97) ** 0.5
        self.assertIn(
            f'id="claim-ratio-weighted"><span class="num">0.769</span> <span class="ci">'
            f"[{w1 * r1.mean() + 20 / 120 - half:.3f}, 1.000]",
            f,
        )
        self.assertIn("1 contradicted, 1 unsupported of 13 scored claims; 2 non_assertive (not scored)", text(f))
        f = re.sub(r'<a href="[^"]+">(\d+)</a>', r"<a>\1</a>", f)  # the links are followed in their own test
        self.assertRegex(
            f,
            r"<td>s1</td><td class=\"num\">100</td><td class=\"num\">0.833</td>"
            r"<td class=\"num\"><a>3</a></td><td class=\"num\"><a>3</a></td>"
            r"<td class=\"num\"><a>2</a></td> <td><span class=\"num\">"
            r"0.667</span> <span class=\"ci\">\[0.208, 0.939\]</span></td><td><span class=\"num\">0.722"
            r"</span></td><td class=\"num\"><a>1</a></td><td class=\"num\"><a>1</a></td>",
        )
        self.assertRegex(
            f,
            r"<td>s2</td><td class=\"num\">20</td><td class=\"num\">0.167</td>"
            r"<td class=\"num\"><a>2</a></td><td class=\"num\"><a>2</a></td>"
            r"<td class=\"num\"><a>0</a></td> <td><span class=\"num\">"
            r"0.000</span> <span class=\"ci\">"
            r"\[0.000, 0.658\]",
        )
        self.assertIn("<svg", f)

    def test_it_shows_every_agreement_number(self):
        a = re.sub(r'<a href="[^"]+">(\d+)</a>', r"<a>\1</a>", section(self.get(), "agreement"))
        t = [[10, 0, 0, 0], [0, 0, 1, 0], [1, 0, 1, 0], [0, 0, 0, 2]]  # A rows, B columns
        la = [v for r in KNOWN for v in r[1]]
        lb = [v for r in KNOWN for v in r[2]]
        alpha = krippendorff.alpha(reliability_data=np.array([la, lb]), level_of_measurement="nominal")
        self.assertIn("Claims (15 labelled by both, 5 answers)", a)
        self.assertRegex(
            a,
            r'id="iaa-percent"><th>Percent agreement</th><td><span class="num">0.867</span> '
            r'<span class="ci">\[[01]\.\d{3}, 1.000\]</span> <span class="muted">13 of <a>15</a>; '
            r'<a>2</a> disagree</span></td><td><span class="num">0.800</span> <span class="ci">'
            r'\[0\.\d{3}, 1.000\]</span> <span class="muted">4 of <a>5</a>; <a>1</a> disagree</span>',
        )
        kappa = cohens_kappa(np.array(t)).kappa
        self.assertIn(f'id="iaa-kappa"><th>Cohen\'s kappa</th><td><span class="num">{kappa:.3f}', a)
        self.assertIn(f'<td><span class="num">{cohens_kappa(np.array([[2, 1], [0, 2]])).kappa:.3f}', a)
        self.assertIn(f'id="iaa-alpha"><th>Krippendorff\'s alpha (nominal)</th><td><span class="num">{alpha:.3f}', a)
        self.assertIn(f'id="iaa-ac1"><th>Gwet\'s AC1</th><td><span class="num">{ac1(t):.3f}', a)
        self.assertIn("draw only tentative conclusions", a)  # alpha 0.728
        self.assertIn("percentile bootstrap, 10000 resamples of answers", a)
        self.assertRegex(a, r'<th class="v-supported">supported</th><td><span class="num">0.952</span>')  # 20/21
        self.assertRegex(a, r'v-unsupported">unsupported</th><td><span class="num">0.500</span>')  # 2/4
        self.assertIn("CI not computable: undefined in over 10% of resamples", a)  # contradicted: used once

    def test_it_shows_every_judge_number(self):
        j = section(self.get(), "judge")
        jr = re.sub(r'<a href="[^"]+">(\d+)</a>', r"<a>\1</a>", j)  # links are followed in their own test
        self.assertIn(
            "The judge agreed with gold on 11 of 14 claims; the annotators agreed with each other on 12 of 14", text(j)
        )
        self.assertIn("1 judge verdict failed the evidence guard", text(j))
        self.assertIn('1 gold claim without a judge verdict (row "none"); 0 judged claims still without gold', text(j))
        cells = re.findall(r"judge=(\w+)&amp;gold=(\w+)&amp;version=\d+\">(\d+)</a> <small class=\"muted\">([\d.]+)", j)
        self.assertEqual(
            sorted(cells),
            sorted(
                [
                    ("supported", "supported", "9", "206.7"),
                    ("supported", "non_assertive", "1", "10.0"),
                    ("unsupported", "supported", "1", "33.3"),
                    ("unsupported", "contradicted", "1", "33.3"),
                    ("unsupported", "unsupported", "1", "33.3"),
                    ("non_assertive", "non_assertive", "1", "33.3"),
                    ("none", "supported", "1", "10.0"),
                ]
            ),
        )
        self.assertRegex(
            jr,
            r'id="judge-accuracy">.*?<span class="num">0.786</span> <span class="ci">\[.*?\]</span> '
            r'<span class="muted">11 of <a>14</a>; <a>3</a> disagree</span></td>'
            r'<td><span class="num">0.781</span></td>'
            r'<td><span class="num">0.786</span></td><td><span class="num">0.857</span>',
        )
        jt = np.array([[9, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1]])
        self.assertIn(f'id="judge-kappa"><th>Cohen\'s kappa</th><td><span class="num">{cohens_kappa(jt).kappa:.3f}', j)
        self.assertIn(f'id="judge-ac1"><th>Gwet\'s AC1</th><td><span class="num">{ac1(jt):.3f}', j)
        self.assertRegex(
            j,
            r'id="prf-bad">.*?<td><span class="num">0.667</span></td><td><span class="num">1.000</span>'
            r'</td><td><span class="num">0.800</span>',
        )
        self.assertRegex(
            j,
            r'id="prf-supported">.*?<td><span class="num">0.900</span></td>'
            r'<td><span class="num">0.900</span>',
        )
        self.assertIn("the judge never said contradicted", j)
        self.assertRegex(
            jr,
            r'<span class="num">0.750</span> <span class="ci">\[.*?\]</span> '
            r'<span class="muted">3 of <a>4</a>; <a>1</a> disagree</span></td>'
            r'<th>Population-weighted</th><td><span class="num">0.722',
        )  # s1 (N 100): 2 of its 3 answers right; s2 (N 20): known3 has a claim without a verdict, known4 right
        self.assertAlmostEqual((100 / 3 * 2 + 20 / 1 * 1) / 120, 0.7222, places=4)
        self.assertRegex(
            j,
            r'Failing answers caught \(recall\)</th><td><span class="num">1.000</span></td><th>'
            r'Precision</th><td><span class="num">0.667',
        )
        self.assertIn("offline-baseline [offline baseline] (15 verdicts)", j)
        self.assertIn(f'<option value="{self.k["latest"].id}" selected>', j)

    def test_it_shows_trend_and_effort(self):
        html = self.get()
        t = section(html, "trend")
        plain = re.sub(r'<a href="[^"]+">(\d+)</a>', r"\1", t)
        self.assertIn("0 / 4", plain)
        self.assertIn("2 / 5", plain)
        # Designs differ (W48 has s2), so answers are exchanged within s1 only: 2 failures among 7 answers,
        # the current audit holds X ~ Hypergeom(7, 2, 3) of them; only X = 2 is as extreme: p = 5/35.
        p = float(re.search(r"p = ([\d.]+)\)", t).group(1))
        self.assertAlmostEqual(p, 5 / 35, delta=0.015)
        self.assertIn(
            "Change in the population-weighted fail rate against the previous audit: 0.556 (permutation test "
            "within strata (10000 resamples, seed 7) on the 0/1 fail indicator (an expected count is below 10)",
            t,
        )
        self.assertIn("No significant change in the population fail rate at the 5% level.", t)
        self.assertIn("<svg", t)
        e = section(html, "effort")
        self.assertIn('id="hours">1.92</strong> over 10 submitted', e)  # 6900 s
        self.assertIn('id="median-minutes"><span class="num">10.000', e)
        self.assertIn('id="projected-hours"><span class="num">1.667', e)  # 10 min x 2 x 5 / 60
        self.assertIn("adjudication time is not counted", e)

    def test_it_serves_the_same_numbers_as_json(self):
        r = self.client.get(f"{self.url}report.json")
        self.assertEqual(r.status_code, 200)
        self.assertIn("attachment", r["Content-Disposition"])
        self.assertNotIn("NaN", r.content.decode())
        data = json.loads(r.content)
        f = data["faithfulness"]
        self.assertEqual((f["fails"], f["answers"]), (2, 5))
        self.assertAlmostEqual(f["fail_rate"]["value"], 0.4)
        self.assertAlmostEqual(f["weighted"]["fail_rate"]["value"], 5 / 9)
        self.assertEqual(data["agreement"]["claims"]["agree"], 13)
        self.assertEqual(data["judge"]["noise_floor"]["judge"]["agree"], 11)
        self.assertEqual(data["judge"]["guard_failed"], 1)
        self.assertAlmostEqual(data["effort"]["hours"]["value"], 6900 / 3600)
        self.assertEqual(data["trend"]["points"][1]["change"]["test"][:28], "permutation test within stra")
        self.assertAlmostEqual(data["trend"]["points"][1]["weighted"]["value"], 5 / 9)
        self.assertEqual(data["trend"]["points"][1]["sampled"]["value"], 0.4)
        ci = data["agreement"]["claims"]["cohen_kappa"]["ci"]
        self.assertIn(f"[{ci[0]:.3f}, {ci[1]:.3f}]", section(self.get(), "agreement"))
        self.assertEqual(json.loads(self.client.get(f"{self.url}report.json").content), data)  # seeded bootstrap

    def test_it_filters_by_judge_version(self):
        base = self.k["baseline"].id
        j = section(self.get(version=base), "judge")
        self.assertIn("The judge agreed with gold on 11 of 15 claims", text(j))
        self.assertIn("0 judge verdicts failed", text(j))
        self.assertIn(f'<option value="{base}" selected>', j)
        r = self.client.get(self.url, {"version": base}, headers={"HX-Request": "true"})
        body = r.content.decode()
        self.assertTrue(body.lstrip().startswith('<section id="judge">'))
        self.assertNotIn("<html", body)
        self.assertIn("11 of 15", body)
        self.assertIn(f"report.json?version={base}", self.get(version=base))
        self.assertIn("11 of 14", section(self.get(version="not-a-number"), "judge"))  # falls back to latest

    def test_it_lists_the_claims_behind_a_cell(self):
        url = f"{self.url}claims/"
        html = self.get(url, judge="unsupported", gold="supported", version=self.k["latest"].id)
        self.assertEqual(drill_rows(html), 1)
        row = re.sub(r"\s+", " ", re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1))
        self.assertRegex(row, r'<a href="/answers/\d+/\?version=\d+">known2</a>')
        self.assertIn("Claim number 2 says Paris is the capital.", row)
        self.assertIn("<b>Q:</b>", row)
        self.assertIn('<span class="tag bad">failed</span>', row)
        self.assertIn('<span class="v-unsupported">unsupported</span> <span class="muted">(supported)</span>', row)
        self.assertIn('<span class="muted">(agreed)</span>', row)  # gold source
        item = self.audit.items.get(answer__external_id="known2").id
        self.assertIn(f'href="/adjudicate/{self.audit.id}/answers/{item}/history/"', row)
        html = self.get(url, judge="none", gold="supported")
        self.assertEqual(re.findall(r">(known\d)</a>", html), ["known3"])
        self.assertEqual(drill_rows(self.get(url, judge="supported", gold="supported")), 9)
        html = self.get(url, disagree="annotators")  # A and B verdicts side by side
        self.assertEqual(drill_rows(html), 2)
        self.assertIn(
            '<td><span class="v-contradicted">contradicted</span></td><td><span class="v-unsupported">'
            "unsupported</span></td>",
            html,
        )
        self.assertEqual(drill_rows(self.get(url, disagree="annotators", a="unsupported", b="supported")), 1)

    def test_it_links_every_count_to_a_list_of_that_many_rows(self):
        for params in ({}, {"version": self.k["baseline"].id}):
            page = self.get(**params)
            links = re.findall(r'<a href="(/reports/\d+/(?:claims|answers)/\?[^"]+)">(\d+)</a>', page)
            self.assertGreater(len(links), 50)
            kinds = {re.sub(r"&amp;version=\d+", "", u).split("/")[-1] for u, _ in links}
            for wanted in (
                "answers/?gold=fail",
                "answers/?gold=fail&amp;stratum=s1",
                "claims/?disagree=annotators",
                "claims/?either=unsupported",
                "claims/?guard=failed",
                "answers/?disagree=judge",
                "claims/?judge=supported&amp;gold=not_supported",
                "claims/?gold=bad&amp;judge=not_bad",
                "claims/?gold=contradicted&amp;scope=complete",
                "answers/?disagree=annotators",
            ):
                self.assertIn(wanted.split("/")[-1], {k.split("/")[-1] for k in kinds}, wanted)
            for url, number in links:
                html = self.get(html_unescape(url))
                self.assertEqual(drill_rows(html), int(number), url)
                self.assertIn(f'<span id="count">{number}</span>', html, url)

    def test_it_follows_links_to_known_rows(self):
        page = self.get()
        fails = re.search(r'<a href="([^"]+answers/\?gold=fail&amp;version=\d+)">2</a> of', page).group(1)
        self.assertEqual(re.findall(r">(known\d)</a>", self.get(html_unescape(fails))), ["known0", "known1"])
        guard = re.search(r'<a href="([^"]+guard=failed[^"]*)">1</a> judge verdict', page).group(1)
        self.assertEqual(re.findall(r">(known\d)</a>", self.get(html_unescape(guard))), ["known2"])
        ans = self.get(f"{self.url}answers/", disagree="annotators")  # known3: A said unsupported, B did not
        self.assertEqual(re.findall(r">(known\d)</a>", ans), ["known3"])
        self.assertIn("all claims of the audit", self.get(f"{self.url}claims/"))
        self.assertEqual(drill_rows(self.get(f"{self.url}claims/")), 15)

    def test_it_rejects_invalid_filters(self):
        for path, params, word in (
            ("claims/", {"judge": "maybe"}, "judge="),
            ("claims/", {"gold": "fail"}, "gold="),
            ("claims/", {"stratum": "nope"}, "stratum="),
            ("answers/", {"gold": "bad"}, "gold="),
            ("answers/", {"disagree": "x"}, "disagree="),
            ("claims/", {"guard": "1"}, "guard="),
        ):
            r = self.client.get(f"{self.url}{path}", params)
            self.assertContains(r, word, status_code=400)
            self.assertContains(r, "must be one of", status_code=400)
        empty = Audit.objects.create(name="nojudge", dataset=make_dataset("nj"), seed=1, size=5)
        r = self.client.get(f"/reports/{empty.id}/claims/", {"judge": "none"})
        self.assertContains(r, "no judge verdicts", status_code=400)
        for path in ("answers/", "answers/?gold=fail", "claims/", "claims/?disagree=annotators"):  # empty audit
            self.assertContains(self.client.get(f"/reports/{empty.id}/{path}"), '<span id="count">0</span>')

    def test_it_puts_drill_down_urls_in_the_json(self):
        data = json.loads(self.client.get(f"{self.url}report.json").content)
        v = self.k["latest"].id
        self.assertEqual(data["faithfulness"]["fails_url"], f"{self.url}answers/?gold=fail&version={v}")
        self.assertEqual(
            data["faithfulness"]["strata"][0]["fails_url"], f"{self.url}answers/?gold=fail&stratum=s1&version={v}"
        )
        self.assertEqual(data["agreement"]["claims"]["disagree"], 2)
        self.assertEqual(data["judge"]["guard_failed_url"], f"{self.url}claims/?guard=failed&version={v}")
        cell = data["judge"]["matrix"]["rows"][2]["cells"][0]
        self.assertEqual(
            (cell["count"], cell["url"]), (1, f"{self.url}claims/?judge=unsupported&gold=supported&version={v}")
        )
        bad = data["judge"]["prf_rows"][0]
        self.assertEqual([bad[k] for k in ("class", "fp", "judge_total", "fn", "gold_total")], ["bad", 1, 3, 0, 2])
        self.assertEqual(drill_rows(self.get(bad["fp_url"])), 1)

    def test_it_escapes_names_and_uses_no_inline_styles(self):
        Audit.objects.filter(pk=self.audit.pk).update(name="<script>x</script>")
        html = self.get()
        self.assertNotIn("<script>x</script>", html)
        self.assertIn("&lt;script&gt;x&lt;/script&gt;", html)
        self.assertNotIn("style=", html)
        with open("static/report.css") as css:
            self.assertIn("@media print", css.read())

    def test_it_keeps_the_query_count_constant(self):
        users = self.k["users"]
        ds = make_dataset("big")
        v = version("big-v")
        rows = KNOWN * 8
        big = make_stratified_audit(
            [make_answer(ds, external_id=f"b{i}", n_claims=3) for i in range(len(rows))],
            [r[0] for r in rows],
            name="big",
            population={"s1": 500, "s2": 90},
        )
        label_audit(big, rows, v, users)
        counts = []
        for audit in (self.audit, big):
            with CaptureQueriesContext(connection) as ctx:
                self.get(f"/reports/{audit.id}/")
            counts.append(len(ctx))
        self.assertEqual(counts[0], counts[1])
        with self.assertNumQueries(counts[0]):
            self.get(f"/reports/{big.id}/")
        with self.assertNumQueries(counts[0]):
            self.client.get(f"/reports/{big.id}/report.json")
        fragment = []
        for audit in (self.audit, big):  # the htmx fragment builds only the judge section
            with CaptureQueriesContext(connection) as ctx:
                self.client.get(f"/reports/{audit.id}/", headers={"HX-Request": "true"})
            fragment.append(len(ctx))
        self.assertEqual(fragment[0], fragment[1])
        self.assertLess(fragment[0], counts[0])

    def big_audit(self):
        rows = KNOWN * 8  # 40 answers, 120 claims: more than one page of claims
        ds = make_dataset("big")
        answers = [make_answer(ds, external_id=f"b{i}", n_claims=3) for i in range(len(rows))]
        big = make_stratified_audit(answers, [r[0] for r in rows], name="big", population={"s1": 500, "s2": 90})
        label_audit(big, rows, version("big-v"), self.k["users"])
        return big

    def test_it_keeps_the_drill_down_query_count_constant(self):
        big = self.big_audit()
        for path, params in (
            ("claims/", {"judge": "supported", "gold": "supported"}),
            ("claims/", {}),
            ("answers/", {"gold": "any"}),
            ("answers/", {"disagree": "annotators"}),
        ):
            with CaptureQueriesContext(connection) as ctx:
                self.get(f"{self.url}{path}", **params)
            with self.assertNumQueries(len(ctx)):
                html = self.get(f"/reports/{big.id}/{path}", **params)
            self.assertGreater(drill_rows(html), drill_rows(self.get(f"{self.url}{path}", **params)))

    def test_it_paginates_long_lists(self):
        big = self.big_audit()
        html = self.get(f"/reports/{big.id}/claims/")
        self.assertIn('<span id="count">120</span>', html)
        self.assertEqual(drill_rows(html), 100)
        self.assertIn("Page 1 of 2 (120 rows)", html)
        self.assertIn('href="?page=2"', html)
        page2 = self.get(f"/reports/{big.id}/claims/", page=2, gold="any")
        self.assertEqual(drill_rows(page2), 20)
        self.assertIn('href="?page=1&amp;gold=any"', page2)
        self.assertEqual(drill_rows(self.get(f"/reports/{big.id}/claims/", page="x")), 100)  # bad page: first


class ProvisionalNoiseFloorTests(TestCase):
    def test_it_warns_that_the_noise_floor_leans_to_agreement_while_gold_is_missing(self):
        k = known_audit()
        self.client.force_login(make_user("lead", "lead"))
        html = self.client.get(f"/reports/{k['audit'].id}/").content.decode()

        def floor(html):
            return re.sub(r"\s+", " ", re.search(r'<p id="noise-floor"[^>]*>(.*?)</p>', html, re.S).group(1))

        self.assertNotIn("Provisional:", floor(html))
        adjudicated = GoldLabel.objects.filter(audit=k["audit"], source="adjudicated")
        missing = adjudicated.count()
        self.assertGreater(missing, 0)
        adjudicated.delete()
        html = self.client.get(f"/reports/{k['audit'].id}/").content.decode()
        self.assertIn(f"Provisional:</strong> {missing} judged claim", floor(html))


class DegenerateReportTests(TestCase):
    def setUp(self):
        self.client.force_login(make_user("lead", "lead"))

    def check(self, audit):
        r = self.client.get(f"/reports/{audit.id}/")
        self.assertEqual(r.status_code, 200)
        j = self.client.get(f"/reports/{audit.id}/report.json")
        self.assertNotIn("NaN", j.content.decode())
        return r.content.decode(), json.loads(j.content)

    def test_it_reports_an_empty_audit(self):
        audit = Audit.objects.create(name="empty", dataset=make_dataset(), seed=1, size=150)
        html, data = self.check(audit)
        self.assertIn("not computable: no answer has complete gold labels yet", html)
        self.assertIn("not computable: no judge verdicts on this audit", html)
        self.assertIn("not computable: no items were rated by both", html)
        self.assertIn("not computable: no submitted assignments", html)
        self.assertIsNone(data["faithfulness"]["fail_rate"]["value"])

    def test_it_reports_labels_without_gold_or_overlap(self):
        answers = [make_answer(external_id=f"n{i}", n_claims=2) for i in range(2)]
        audit = make_stratified_audit(answers, ["s1", "s1"], name="nogold", population={"s1": 10})
        ann = make_user("solo", "annotator")
        for item in audit.items.all():  # only slot A labelled: no overlap
            asg = Assignment.objects.create(audit_answer=item, annotator=ann, slot="A", status="submitted")
            Label.objects.bulk_create(
                Label(assignment=asg, claim=c, verdict="supported") for c in item.answer.claims.all()
            )
        html, data = self.check(audit)
        self.assertEqual(data["coverage"]["answers_complete_gold"], 0)
        self.assertEqual(data["coverage"]["claims_labelled_twice"], 0)
        self.assertIn("not computable: no answer has complete gold labels yet", html)
        self.assertIn("not computable: no items were rated by both", section(html, "agreement"))
        self.assertEqual(data["effort"]["assignments"], 2)

    def test_it_flags_a_significant_rise_as_a_regression(self):
        users = [make_user("u1", "annotator"), make_user("u2", "annotator")]
        ds = make_dataset("weekly")
        v = version("weekly-v")
        ok, bad = (
            ("s1", ["supported"], ["supported"], ["supported"], ["supported"]),
            ("s1", ["unsupported"], ["unsupported"], ["unsupported"], ["unsupported"]),
        )
        audits = []
        for week, rows in (("w1", [ok] * 30), ("w2", [ok] * 15 + [bad] * 15)):
            answers = [make_answer(ds, external_id=f"{week}-{i}", n_claims=1) for i in range(30)]
            audits.append(make_stratified_audit(answers, ["s1"] * 30, name=week, population={"s1": 300}))
            label_audit(audits[-1], rows, v, users)
        html, data = self.check(audits[1])
        t = section(html, "trend")
        self.assertIn('class="reading flag-regression"', t)
        self.assertIn("Regression: the population fail rate rose significantly", t)
        self.assertIn("exact permutation (conditional) test", t)  # 0 expected failures < 10; equal weights
        self.assertIn(f"p = {fisher_exact([[15, 15], [0, 30]])[1]:.4f}", t)
        self.assertIn('class="pt current regression"', t)
        self.assertTrue(data["trend"]["regression"])

    def test_it_reports_a_single_answer_with_one_verdict(self):
        users = [make_user("u1", "annotator"), make_user("u2", "annotator")]
        audit = make_stratified_audit(
            [make_answer(external_id="only", n_claims=3)], ["s1"], name="one", population={"s1": 40}
        )
        label_audit(
            audit,
            [("s1", ["supported"] * 3, ["supported"] * 3, ["supported"] * 3, ["supported"] * 3)],
            version("one-v"),
            users,
        )
        html, data = self.check(audit)
        self.assertIn("not computable: both raters used a single verdict, so chance agreement is 1", html)
        self.assertIn("not computable: every label is the same verdict", html)
        self.assertIn("not computable: fewer than two answers to resample", html)
        self.assertIn("has a single answer, its variance is unknown", html)
        self.assertEqual(data["faithfulness"]["fail_rate"]["value"], 0.0)
        self.assertIsNone(data["agreement"]["claims"]["cohen_kappa"]["value"])
