"""The report's statistics against published worked examples, plus degenerate inputs.
Pure functions: no database."""

import json
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from annotations.report import stats_agreement as ag
from annotations.report import stats_answers as an
from annotations.report import stats_faithfulness as fa
from annotations.report import stats_judge as jg
from annotations.report import stats_trend as tr
from annotations.report.stats_bootstrap import batch_stats
from annotations.report.stats_common import clean

KRIPP_2011 = """1 2 3 3 2 1 4 1 2 . . .
1 2 3 3 2 2 4 1 2 5 . 3
. 3 3 3 2 3 4 2 2 5 1 .
1 2 3 3 2 4 4 1 2 5 1 ."""


def r3(x):
    return round(x, 3)


def pairs_from_table(table, cats=None):
    """Expand a k x k table into two label lists, one item per count."""
    t = np.asarray(table)
    cats = cats or [f"c{i}" for i in range(t.shape[0])]
    a, b = [], []
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            a += [cats[i]] * int(t[i, j])
            b += [cats[j]] * int(t[i, j])
    return a, b, cats


def test_it_reproduces_krippendorff_2011_nominal_alpha_and_multi_rater_ac1():
    coders = [line.split() for line in KRIPP_2011.splitlines()]
    units = [[None if x == "." else x for x in col] for col in zip(*coders, strict=True)]
    counts, cats = ag.multi_rater_counts(units)
    ac1 = ag.gwet_ac1_multi(counts)
    assert r3(ac1["value"]) == 0.775
    assert r3(ac1["fleiss_kappa"]) == 0.761


def test_it_reproduces_krippendorff_2011_alpha_the_way_the_wrapper_calls_the_library():
    coders = [[None if x == "." else x for x in line.split()] for line in KRIPP_2011.splitlines()]
    data = np.array([[np.nan if x is None else x for x in row] for row in coders], dtype=str)
    assert r3(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")) == 0.743
    expected = krippendorff.alpha(reliability_data=data[[1, 3]], level_of_measurement="nominal")
    assert r3(expected) == r3(ag.krippendorff_alpha(coders[1], coders[3])["value"])
    assert ag.krippendorff_alpha(coders[1], coders[3])["value"] == pytest.approx(expected)


def test_it_reproduces_cohen_2x2():
    t = [[20, 5], [10, 15]]
    assert r3(ag.percent_agreement(t)["value"]) == 0.700
    assert r3(ag.cohen_kappa(t)["value"]) == 0.400


@pytest.mark.parametrize(
    "table,kappa,ac1",
    [
        ([[40, 9], [6, 45]], 0.6995, 0.7008),
        ([[80, 10], [5, 5]], 0.3182, 0.808),
    ],
)
def test_it_reproduces_the_prevalence_paradox(table, kappa, ac1):
    assert ag.percent_agreement(table)["value"] == pytest.approx(0.85)
    assert r3(ag.cohen_kappa(table)["value"]) == r3(kappa)
    assert r3(ag.gwet_ac1(table)["value"]) == r3(ac1)


def test_it_reproduces_gwet_3x3():
    t = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    assert r3(ag.percent_agreement(t)["value"]) == 0.890
    assert r3(ag.cohen_kappa(t)["value"]) == 0.796
    assert r3(ag.gwet_ac1(t)["value"]) == 0.849


@pytest.mark.parametrize(
    "table", [[[20, 5], [10, 15]], [[40, 9], [6, 45]], [[80, 10], [5, 5]], [[13, 0, 0], [0, 20, 7], [0, 4, 56]]]
)
def test_it_vectorised_bootstrap_statistics_equal_the_library_point_estimates(table):
    a, b, cats = pairs_from_table(table)
    batch = batch_stats(np.asarray([table], dtype=float))
    assert batch["cohen_kappa"][0] == pytest.approx(ag.cohen_kappa(table)["value"])
    assert batch["gwet_ac1"][0] == pytest.approx(ag.gwet_ac1(table)["value"])
    assert batch["krippendorff_alpha"][0] == pytest.approx(ag.krippendorff_alpha(a, b)["value"])
    spec = ag.specific_agreement(table, cats)
    assert list(batch["specific"][0]) == pytest.approx([spec[c]["value"] for c in cats])


def test_it_computes_specific_agreement():
    spec = ag.specific_agreement([[20, 5], [10, 15]], ["yes", "no"])
    assert spec["yes"]["value"] == pytest.approx(40 / 55)
    assert spec["no"]["value"] == pytest.approx(30 / 45)


def test_it_bootstraps_answers_not_claims():
    # 20 answers of 10 claims each: within an answer the two raters agree on all or on none.
    ids, a, b = [], [], []
    for ans in range(20):
        same = ans % 4 != 0
        for _ in range(10):
            ids.append(ans)
            a.append("supported")
            b.append("supported" if same else "unsupported")
    res = ag.agreement(ids, a, b, ["supported", "unsupported"], seed=1)
    lo, hi = res["percent_agreement"]["ci"]
    assert res["percent_agreement"]["value"] == pytest.approx(0.75)
    # Resampling 200 independent claims would give a CI about 0.12 wide; 20 clusters give about 0.38.
    assert hi - lo > 0.25
    again = ag.agreement(ids, a, b, ["supported", "unsupported"], seed=1)
    assert again["percent_agreement"]["ci"] == res["percent_agreement"]["ci"]  # seeded


def test_it_says_why_agreement_is_not_computable():
    one = ag.agreement(
        [1, 1, 2],
        ["supported"] * 3,
        ["supported"] * 3,
        ag_cats := list(("supported", "contradicted", "unsupported", "non_assertive")),
    )
    assert one["percent_agreement"]["value"] == 1.0
    assert one["cohen_kappa"]["value"] is None and one["cohen_kappa"]["why"].startswith("not computable: ")
    assert one["krippendorff_alpha"]["value"] is None
    assert "same verdict" in one["krippendorff_alpha"]["why"]
    assert one["specific"]["contradicted"]["why"] == "not computable: neither rater used contradicted"
    empty = ag.agreement([], [], [], ag_cats)
    for key in ("percent_agreement", "cohen_kappa", "krippendorff_alpha", "gwet_ac1"):
        assert empty[key]["value"] is None and "no items" in empty[key]["why"]
    single = ag.agreement([7, 7], ["supported", "unsupported"], ["supported", "supported"], ag_cats)
    assert single["ci_why"] == "not computable: fewer than two answers to resample"
    assert "not reliable" in ag.reliability_reading({"value": 0.5})
    assert "tentative" in ag.reliability_reading({"value": 0.7})
    assert "reliable" in ag.reliability_reading({"value": 0.85})
    assert "Reliability unknown" in ag.reliability_reading(one["krippendorff_alpha"])
    json.dumps(clean(one), allow_nan=False)


def test_it_computes_judge_precision_recall_and_bad_claim_class():
    cats = ["supported", "contradicted", "unsupported", "non_assertive"]
    # rows judge, columns gold
    t = [[50, 1, 4, 0], [0, 2, 0, 0], [2, 0, 6, 0], [0, 0, 0, 3]]
    s = jg.classification_summary(t, cats)
    assert s["accuracy"]["value"] == pytest.approx(61 / 68)
    un = s["per_verdict"]["unsupported"]
    assert un["precision"]["value"] == pytest.approx(6 / 8)
    assert un["recall"]["value"] == pytest.approx(6 / 10)
    assert un["f1"]["value"] == pytest.approx(2 * 6 / 18)
    bad = s["bad_claim"]  # judge bad: 2 + 8 = 10, of which gold bad 8; gold bad 13
    assert bad["precision"]["value"] == pytest.approx(8 / 10)
    assert bad["recall"]["value"] == pytest.approx(8 / 13)
    none = jg.classification_summary([[5, 0], [0, 0]], ["supported", "unsupported"])
    assert none["per_verdict"]["unsupported"]["precision"]["why"] == "not computable: the judge never said unsupported"


def test_it_reproduces_the_stratified_estimate():
    groups = [
        ("supported", 9000, [1] * 95 + [0] * 5),
        ("unsupported", 700, [1] * 80 + [0] * 20),
        ("contradicted", 300, [1] * 60 + [0] * 40),
    ]
    naive = sum(sum(v) for _, _, v in groups) / 300
    assert r3(naive) == 0.783
    est = fa.stratified_mean(groups, 0.05)
    assert r3(est["value"]) == 0.929
    var = sum(
        (N / 10000) ** 2 * p * (1 - p) / 99 * (1 - 100 / N)
        for (_, N, _), p in zip(groups, (0.95, 0.8, 0.6), strict=True)
    )
    assert est["ci"] == pytest.approx([0.929 - 1.959964 * math.sqrt(var), 0.929 + 1.959964 * math.sqrt(var)])


def test_it_borrows_the_overall_variance_for_a_single_answer_stratum():
    groups = [("a", 100, [0, 1, 0, 1]), ("b", 50, [1])]
    est = fa.stratified_mean(groups, 0.05)
    assert est["value"] == pytest.approx(100 / 150 * 0.5 + 50 / 150 * 1.0)
    everything = [0, 1, 0, 1, 1]
    s2_all = sum((x - 0.6) ** 2 for x in everything) / 4
    s2_a = sum((x - 0.5) ** 2 for x in [0, 1, 0, 1]) / 3
    var = (100 / 150) ** 2 * s2_a / 4 * (1 - 4 / 100) + (50 / 150) ** 2 * s2_all / 1 * (1 - 1 / 50)
    half = 1.959964 * math.sqrt(var)
    assert est["ci"] == pytest.approx([est["value"] - half, min(1.0, est["value"] + half)])
    assert est["borrowed_variance"] == ["b"] and "borrow" in est["ci_method"]
    one = fa.stratified_mean([("a", 10, [1])], 0.05)
    assert one["ci"] is None and "has a single answer" in one["ci_why"]


def frame(rows):
    """rows: (stratum, N_h, supported, contradicted, unsupported, non_assertive); gold complete."""
    f = pd.DataFrame(rows, columns=["stratum", "stratum_population", *fa.COUNT_COLUMNS])
    bad = (f["n_contradicted"] + f["n_unsupported"]) > 0
    return f.assign(complete=True, labelled=True, n_open=0, a_bad=bad, b_bad=bad)


def test_it_computes_faithfulness_per_answer_and_per_stratum():
    f = frame(
        [
            ("x", 100, 3, 0, 0, 1),
            ("x", 100, 2, 0, 1, 0),
            ("x", 100, 0, 0, 0, 2),
            ("y", 20, 1, 1, 0, 0),
            ("y", 20, 4, 0, 0, 0),
        ]
    )
    r = an.faithfulness(f, seed=3)
    assert r["answers"] == 5 and r["fails"] == 2 and r["headline"] == "gold"
    assert r["fail_rate"]["value"] == pytest.approx(0.4)

    assert r["fail_rate"]["ci"] == pytest.approx(list(proportion_confint(2, 5, method="wilson")))
    # ratios: 1, 2/3, (no scored: excluded), 1/2, 1
    assert r["claim_ratio_mean"]["value"] == pytest.approx((1 + 2 / 3 + 0.5 + 1) / 4)
    assert r["claim_ratio_pooled"]["value"] == pytest.approx(10 / 12)
    assert r["counts"] == {
        "n_supported": 10,
        "n_contradicted": 1,
        "n_unsupported": 1,
        "n_non_assertive": 3,
        "scored": 12,
    }
    x, y = r["strata"]
    assert (x["fail_rate"]["value"], y["fail_rate"]["value"]) == pytest.approx((1 / 3, 1 / 2))
    assert r["weighted"]["fail_rate"]["value"] == pytest.approx(100 / 120 / 3 + 20 / 120 / 2)


def test_it_says_why_faithfulness_is_not_computable():
    empty = an.faithfulness(frame([]))
    assert empty["fail_rate"]["why"] == "not computable: no answer has complete gold labels yet"
    single = an.faithfulness(frame([("x", 50, 1, 0, 1, 0)]))
    assert single["fail_rate"]["value"] == 1.0
    assert "single answer" in single["weighted"]["fail_rate"]["ci_method"]
    assert single["claim_ratio_mean"]["ci_why"] == "not computable: one answer only"
    only_na = an.faithfulness(frame([("x", 2, 0, 0, 0, 1), ("x", 2, 0, 0, 0, 3)]))
    assert only_na["fail_rate"]["value"] == 0.0  # no scored claims: passes
    assert only_na["claim_ratio_mean"]["why"] == "not computable: no answer has a scored claim"
    lo, hi = only_na["weighted"]["fail_rate"]["ci"]  # a census of the stratum still gets a width from n = 2
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 2))
    json.dumps(clean(only_na), allow_nan=False)


def test_it_computes_effort_and_the_series():
    e = tr.effort([600, 300, 900, 1200], audit_size=150)
    assert e["hours"]["value"] == pytest.approx(3000 / 3600)
    assert e["median_minutes"]["value"] == pytest.approx(12.5)
    assert e["projected_hours"]["value"] == pytest.approx(12.5 * 2 * 150 / 60)
    assert tr.effort([], 150)["median_minutes"]["why"] == "not computable: no submitted assignments"

    def point(name, fails, n):  # one stratum, N = 10,000: p_w = fails / n, v = p (1 - p) / (n - 1) (1 - n / N)
        p = fails / n if n else None
        v = p * (1 - p) / (n - 1) * (1 - n / 10000) if n else None
        strata = [("s", 10000, n, fails)] if n else []
        return {"name": name, "summary": {"value": p, "variance": v, "strata": strata, "fails": fails, "n": n}}

    s = tr.fail_rate_series([point("w1", 30, 400), point("w2", 0, 0), point("w3", 52, 400)])
    assert s[0]["change"]["value"] is None and s[1]["change"]["value"] is None
    assert s[0]["change"]["why"] == "not computable: no earlier audit with data"
    # w2 comes after w1, which has data: what is missing is w2's own (it read "no earlier audit with data")
    assert s[1]["change"]["why"] == "not computable: this audit has no answer labelled by both annotators yet"
    assert s[2]["change"]["regression"] is True and s[2]["change"]["value"] == pytest.approx(22 / 400)


def test_it_says_no_stratum_has_data_rather_than_blaming_one_when_none_has_any():
    groups = [("judge=fail", 13, []), ("judge=pass", 87, [])]  # a freshly assigned audit: nothing labelled by both
    est, var, cover, why = fa.stratified(groups, 0.05, what="answer with complete gold")
    assert (est, var, why) == (None, None, "no stratum has any answer with complete gold")  # it read "has answer"
    est, _, _, why = fa.stratified([("judge=fail", 13, []), ("judge=pass", 87, [1.0, 0.0])], 0.05)
    assert est is None and why.startswith("stratum 'judge=fail' holds 13.0% of the population")  # one to blame
