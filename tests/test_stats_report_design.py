"""The states a team sees every week, on hand-made audits whose right answer is computed here from
first principles (formulas written below, or independent library calls): open disputes, strata without
data, 0 failures in 11 answers, trends across designs, the small-count fallback, the noise floor.
Pure functions: no database."""

import itertools
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap, fisher_exact, hypergeom, norm, t
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from annotations.report import stats_agreement as ag
from annotations.report import stats_answers as an
from annotations.report import stats_faithfulness as fa
from annotations.report import stats_trend as tr
from annotations.report.stats_annotators import annotator_rows, pair_rows
from annotations.report.stats_faithfulness import COUNT_COLUMNS
from annotations.report.stats_noise import noise_floor
from tests.report_helpers import kg_interval

S, C, U, N = "supported", "contradicted", "unsupported", "non_assertive"
VERDICTS = (S, C, U, N)


def strat_var(strata):
    """strata: (N_h, values): sum W_h^2 s_h^2 / n_h (1 - n_h / N_h)."""
    total = sum(N for N, _ in strata)
    return sum((N / total) ** 2 * np.var(v, ddof=1) / len(v) * (1 - len(v) / N) for N, v in strata)


# ---------- 3. intervals that do not collapse ----------


def test_it_never_prints_a_zero_width_interval_for_0_failures_in_11_answers():
    r = fa.stratified_proportion([("a", 300, [0] * 11)], 0.05)
    assert r["value"] == 0.0
    # v = 0, so n* = n = 11, df = 10: Clopper-Pearson upper bound 1 - 0.025^(1/11)
    assert r["ci"] == pytest.approx([0.0, 1 - 0.025 ** (1 / 11)])
    assert r["ci"][1] > 0.28 and "Korn-Graubard" in r["ci_method"]
    two = fa.stratified_proportion([("a", 100, [0] * 5), ("b", 50, [0] * 6)], 0.05)
    n_star = 11 * (t.ppf(0.975, 10) / t.ppf(0.975, 9)) ** 2
    assert two["ci"] == pytest.approx([0.0, 1 - 0.025 ** (1 / n_star)])
    assert two["design_effect"] is None  # p = 0: no design effect to show


def test_it_never_prints_a_zero_width_interval_for_a_claim_ratio_of_1_in_every_answer():
    # An audit where every claim is supported: each of 11 answers has claim ratio 1, so s_h^2 = 0 and the
    # normal interval 1 +- 1.96 * 0 would read [1, 1], certainty from 11 answers.
    r = fa.stratified_mean([("a", 300, [1.0] * 11), ("b", 100, [1.0] * 4)], 0.05)
    assert r["value"] == 1.0 and r["ci"] is None
    assert r["ci_why"].startswith("not computable: the design-based variance is 0")


def test_it_gives_the_korn_graubard_interval_and_design_effect_of_a_stratified_rate():
    groups = [("s", 9000, [1] * 5 + [0] * 95), ("u", 700, [1] * 20 + [0] * 80), ("c", 300, [1] * 40 + [0] * 60)]
    r = fa.stratified_proportion(groups, 0.05)
    p = 0.9 * 0.05 + 0.07 * 0.2 + 0.03 * 0.4
    var = strat_var([(N, np.array(v)) for _, N, v in groups])
    assert r["value"] == pytest.approx(p)
    assert r["variance"] == pytest.approx(var)
    assert r["ci"] == pytest.approx(kg_interval(p, var, 300, 3))
    assert r["design_effect"] == pytest.approx(var / (p * (1 - p) / 300))


# ---------- 2. coverage ----------


def test_it_lists_a_small_stratum_without_data_and_covers_the_rest():
    r = fa.stratified_proportion([("a", 96, [0, 1, 0, 1]), ("b", 4, [])], 0.05)
    assert r["value"] == pytest.approx(0.5)  # W_a = 96 / 96 over the covered strata
    assert (r["covered_population"], r["population"]) == (96, 100)
    assert (r["strata_covered"], r["strata_total"]) == (1, 2)
    assert r["missing_strata"] == [{"stratum": "b", "population": 4, "share": 0.04}]


def test_it_refuses_the_estimate_when_a_large_stratum_has_no_data():
    r = fa.stratified_proportion([("a", 90, [0, 1, 0, 1]), ("b", 7, []), ("c", 3, [])], 0.05)
    assert r["value"] is None
    assert r["why"] == ("not computable: stratum 'b' holds 7.0% of the population (more than 5%) and has no data")
    assert [m["stratum"] for m in r["missing_strata"]] == ["b", "c"]
    assert fa.stratified_proportion([("a", 90, [0, 1]), ("b", 7, [])], 0.10)["value"] == pytest.approx(0.5)


# ---------- 1. provisional figures ----------


def answers(rows):
    """rows: (stratum, N_h, gold counts S/C/U/N, labelled, open disputes, A fails, B fails)."""
    out = []
    for stratum, pop, counts, labelled, n_open, a_bad, b_bad in rows:
        n_claims = sum(counts) + n_open
        out.append(
            {"stratum": stratum, "stratum_population": pop, **dict(zip(COUNT_COLUMNS, counts, strict=True))}
            | {"complete": sum(counts) >= n_claims and labelled, "labelled": labelled, "n_open": n_open}
            | {"a_bad": a_bad, "b_bad": b_bad}
        )
    return pd.DataFrame(out)


def test_it_bounds_the_fail_rate_by_the_open_disputes_instead_of_the_agreed_subset():
    f = answers(
        [
            ("x", 60, (3, 0, 0, 0), True, 0, False, False),  # agreed everywhere: passes
            ("x", 60, (2, 0, 0, 1), True, 0, False, False),
            ("x", 60, (1, 0, 0, 0), True, 2, True, False),  # two open disputes
            ("x", 60, (2, 0, 1, 0), True, 1, True, True),  # settled bad + one open
            ("y", 40, (2, 0, 0, 0), True, 1, False, True),  # one open
            ("y", 40, (3, 0, 0, 0), True, 0, False, False),
            ("y", 40, (0, 0, 0, 0), False, 0, False, False),  # not labelled by both yet
        ]
    )
    r = an.faithfulness(f)
    assert r["headline"] == "provisional"
    # the biased subset: complete gold = the agreed-everywhere answers, 0 of 4 fail
    assert (r["fails"], r["answers"]) == (0, 3)
    p = r["provisional"]
    assert p["label"] == "provisional: 4 disputes open; 1 answer not labelled by both yet"
    assert (p["fails_if_pass"], p["fails_if_fail"], p["answers"], p["not_labelled"]) == (1, 3, 6, 1)
    assert p["if_pass"]["ci"] == pytest.approx(list(proportion_confint(1, 6, method="wilson")))
    assert p["if_fail"]["value"] == pytest.approx(3 / 6)
    own = {a["slot"]: (a["fails"], a["fail_rate"]["value"]) for a in p["annotators"]}
    assert own == {"A": (2, pytest.approx(2 / 6)), "B": (2, pytest.approx(2 / 6))}
    # weighted, over answers labelled by both: x 1/4 (pass) or 2/4 (fail), y 0/2 or 1/2; W = 60/100, 40/100
    assert p["weighted_if_pass"]["value"] == pytest.approx(0.6 * 1 / 4)
    assert p["weighted_if_fail"]["value"] == pytest.approx(0.6 * 2 / 4 + 0.4 * 1 / 2)
    gold = an.faithfulness(f[f["labelled"]].assign(n_open=0, complete=True))
    assert gold["headline"] == "gold"


def test_it_passes_answers_without_a_scored_claim_and_keeps_them_out_of_the_claim_ratio():
    f = answers(
        [
            ("x", 80, (3, 0, 0, 0), True, 0, False, False),
            ("x", 80, (1, 0, 1, 0), True, 0, True, True),  # fails
            ("y", 20, (0, 0, 0, 2), True, 0, False, False),  # every claim non_assertive
            ("y", 20, (0, 0, 0, 1), True, 0, False, False),  # "the context does not answer this": one claim, not scored
        ]
    )
    r = an.faithfulness(f)
    assert (r["fails"], r["answers"]) == (1, 4)  # both y answers pass
    assert r["fail_rate"]["ci"] == pytest.approx(list(proportion_confint(1, 4, method="wilson")))
    assert r["weighted"]["fail_rate"]["value"] == pytest.approx(0.8 * 1 / 2 + 0.2 * 0 / 2)
    assert r["claim_ratio_pooled"]["value"] == pytest.approx(4 / 5)  # supported / scored: 5 scored claims
    assert r["claim_ratio_mean"]["value"] == pytest.approx((1 + 1 / 2) / 2)  # the two answers with a scored claim
    y = next(s for s in r["strata"] if s["stratum"] == "y")
    assert (y["fails"], y["answers"], y["claim_ratio_mean"]["why"]) == (0, 2, "not computable: no scored claim")
    # y has complete gold (it passes); what it lacks for the claim ratio is a scored claim.
    assert r["weighted"]["claim_ratio_mean"]["why"] == (
        "not computable: stratum 'y' holds 20.0% of the population (more than 5%) and has no answer with "
        "complete gold and a scored claim"
    )


# ---------- 4. trend on the population ----------


def audit(strata):
    """strata: (name, N_h, n_h, x_h) -> compare()'s input with p and v written out."""
    total = sum(N for _, N, _, _ in strata)
    p = sum(N / total * x / n for _, N, n, x in strata)
    v = sum((N / total) ** 2 * (x / n) * (1 - x / n) / (n - 1) * (1 - n / N) for _, N, n, x in strata)
    fails, n = sum(s[3] for s in strata), sum(s[2] for s in strata)
    return {"value": p, "variance": v, "strata": strata, "fails": fails, "n": n, "provisional": None}


def test_it_finds_no_regression_between_two_allocations_of_the_same_population():
    proportional = audit([("low", 9000, 900, 18), ("high", 1000, 100, 30)])  # 2% and 30% in each stratum
    neyman = audit([("low", 9000, 500, 10), ("high", 1000, 500, 150)])
    assert proportional["value"] == pytest.approx(neyman["value"]) == pytest.approx(0.048)
    raw_z, raw_p = proportions_ztest([160, 48], [1000, 1000])
    assert raw_p < 1e-10  # the sample rates (0.048 vs 0.160) would cry "regression"
    r = tr.compare(proportional, neyman)
    assert r["test"].startswith("z-test on the population-weighted rates")
    assert r["value"] == pytest.approx(0.0, abs=1e-12) and r["p_value"] == pytest.approx(1.0)
    assert r["regression"] is False


def test_it_finds_a_real_regression_across_designs():
    before = audit([("low", 9000, 900, 18), ("high", 1000, 100, 30)])
    after = audit([("low", 9000, 500, 30), ("high", 1000, 500, 150)])  # low stratum 2% -> 6%
    z = (after["value"] - before["value"]) / math.sqrt(before["variance"] + after["variance"])
    r = tr.compare(before, after)
    assert r["value"] == pytest.approx(0.9 * 0.04)
    assert r["z"] == pytest.approx(z) and r["p_value"] == pytest.approx(2 * norm.sf(abs(z)))
    assert r["regression"] is True and r["p_value"] < 0.05


def test_it_reproduces_the_published_two_proportion_z_test_for_two_simple_random_samples():
    # 30/400 then 52/400, each audit a simple random sample (one stratum): published z 2.5645, p 0.0103.
    r = tr.compare(audit([("all", 50_000, 400, 30)]), audit([("all", 80_000, 400, 52)]))
    assert r["test"].startswith("two-proportion z-test")
    assert (round(r["z"], 4), round(r["p_value"], 4)) == (2.5645, 0.0103)
    assert r["value"] == pytest.approx(22 / 400) and r["regression"] is True


def test_it_falls_back_to_the_exact_permutation_test_for_small_counts_of_equal_weight():
    r = tr.compare(audit([("s", 6000, 60, 2)]), audit([("s", 6000, 60, 9)]))
    assert r["min_expected"] == pytest.approx(5.5)
    assert r["test"].startswith("exact permutation (conditional) test")
    assert round(r["p_value"], 4) == 0.0535 == round(fisher_exact([[9, 51], [2, 58]])[1], 4)
    # written out: X ~ Hypergeom(120, 11, 60) failures in the second audit; |X/60 - (11-X)/60| >= 7/60
    xs = np.arange(0, 12)
    d = np.abs(xs / 60 - (11 - xs) / 60)
    assert r["p_value"] == pytest.approx(hypergeom(120, 11, 60).pmf(xs)[d >= 7 / 60 - 1e-12].sum())
    assert r["regression"] is False


def test_it_permutes_within_strata_when_the_designs_differ():
    prev = [("a", 500, 10, 0), ("b", 100, 10, 1)]
    cur = [("a", 500, 4, 1), ("b", 100, 16, 5)]
    r = tr.compare(audit(prev), audit(cur), seed=3)
    assert "within strata" in r["test"]

    def rate(strata, xs):
        total = sum(s[1] for s in strata)
        return sum(s[1] / total * x / s[2] for s, x in zip(strata, xs, strict=True))

    d_obs = abs(rate(cur, [1, 5]) - rate(prev, [0, 1]))
    exact = 0.0  # enumerate every within-stratum reallocation of the failures
    dists = [hypergeom(p[2] + c[2], p[3] + c[3], c[2]) for p, c in zip(prev, cur, strict=True)]
    ranges = [range(0, p[3] + c[3] + 1) for p, c in zip(prev, cur, strict=True)]
    for xs in itertools.product(*ranges):
        pr = math.prod(dist.pmf(x) for dist, x in zip(dists, xs, strict=True))
        olds = [p[3] + c[3] - x for p, c, x in zip(prev, cur, xs, strict=True)]
        if abs(rate(cur, xs) - rate(prev, olds)) >= d_obs - 1e-12:
            exact += pr
    assert r["p_value"] == pytest.approx(exact, abs=0.015)  # Monte-Carlo, 10,000 draws


def test_it_never_raises_a_regression_on_a_provisional_audit():
    before = audit([("s", 6000, 60, 2)])
    after = audit([("s", 6000, 60, 40)]) | {"provisional": "provisional: 3 disputes open"}
    r = tr.compare(before, after)
    assert r["regression"] is False and r["value"] is None
    assert r["why"].startswith("not computable: provisional: 3 disputes open")


# ---------- 5. the noise floor ----------


def published_case():
    """200 claims in 20 answers: A and B agree on 188 (published), the 12 disputes split 6/6 in gold,
    the judge agrees with gold on 183 (published)."""
    rng = np.random.default_rng(0)
    gold = rng.choice(VERDICTS, size=200, p=[0.7, 0.05, 0.2, 0.05])
    other = {S: U, U: S, C: S, N: S}
    a, b, judge = gold.copy(), gold.copy(), gold.copy()
    for k, i in enumerate(range(0, 200, 17)[:12]):  # disputes on claims 0, 17, 34, ...
        (b if k % 2 else a)[i] = other[gold[i]]
    for i in range(3, 200, 12)[:17]:  # 17 judge errors
        judge[i] = other[gold[i]]
    return np.repeat(np.arange(20), 10), judge, gold, a, b


def test_it_sets_the_judge_against_each_annotator_on_the_published_183_vs_188_case():
    ids, judge, gold, a, b = published_case()
    assert (a == b).sum() == 188 and (judge == gold).sum() == 183
    r = noise_floor(ids, judge, gold, a, b, seed=1)
    assert r["annotators"]["percent_agreement"]["value"] == pytest.approx(0.940)
    assert r["A"]["percent_agreement"]["value"] == pytest.approx(0.970)
    assert r["B"]["percent_agreement"]["value"] == pytest.approx(0.970)
    assert r["judge"]["percent_agreement"]["value"] == pytest.approx(0.915)
    assert r["A"]["cohen_kappa"]["value"] == pytest.approx(cohens_kappa(pd.crosstab(a, gold).to_numpy()).kappa)
    gap = r["gap"]
    assert gap["value"] == pytest.approx(0.915 - 0.970) and gap["better"] == "A"
    # independent paired bootstrap over answers: scipy resamples the 20 answers jointly
    per = pd.DataFrame({"id": ids, "j": judge == gold, "h": a == gold}).groupby("id").sum()
    ref = bootstrap(
        (per["j"].to_numpy(), per["h"].to_numpy()),
        lambda j, h: (j.sum() - h.sum()) / (10 * len(j)),
        paired=True,
        vectorized=False,
        n_resamples=10_000,
        method="percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert gap["ci"] == pytest.approx([ref.low, ref.high], abs=0.006)
    side = "LESS" if ref.high < 0 else "MORE" if ref.low > 0 else "not distinguishable"
    assert side in r["reading"]
    assert (a == gold).sum() == (b == gold).sum() == 194  # each annotator is on the losing side of 6 disputes
    assert gap["tied"] and "annotators A and B (tied) on 97.0%" in r["reading"] and "better one" not in r["reading"]


def test_it_draws_no_conclusion_from_gold_made_only_of_agreed_claims():
    ids, judge, gold, a, b = published_case()
    agreed = a == b  # before adjudication only these have gold, and it is theirs
    ids, judge, gold, a, b = ids[agreed], judge[agreed], gold[agreed], a[agreed], b[agreed]
    r = noise_floor(ids, judge, gold, a, b, adjudicated=[False] * len(gold), open_disputes=12, seed=1)
    assert r["judge"]["percent_agreement"]["value"] == pytest.approx((judge == gold).mean())
    assert r["A"]["agree"] == r["A"]["n"] == 188 and r["A"]["percent_agreement"]["value"] is None
    assert r["A"]["percent_agreement"]["why"].startswith("not informative")
    assert r["gap"]["value"] is None and r["gap"]["why"].startswith("not informative")
    assert r["reading"].startswith(f"Not informative yet: the judge agrees with gold on {(judge == gold).mean():.1%}")
    assert "12 claims the annotators disagree on are waiting" in r["reading"]
    for conclusion in ("MORE", "LESS", "not distinguishable"):
        assert conclusion not in r["reading"]


def test_it_draws_no_conclusion_while_disputes_are_open():
    ids, judge, gold, a, b = published_case()
    r = noise_floor(ids, judge, gold, a, b, adjudicated=a != b, open_disputes=3, seed=1)
    assert r["gap"]["value"] == pytest.approx((judge == gold).mean() - (a == gold).mean())
    assert r["reading"].startswith("Provisional, no conclusion yet:")
    assert "3 claims the annotators disagree on are still open" in r["reading"]
    for conclusion in ("MORE", "LESS", "not distinguishable"):
        assert conclusion not in r["reading"]


# ---------- 6. per annotator ----------


def ac1(table):
    tb = np.asarray(table, dtype=float)
    n, q = tb.sum(), len(tb)
    pi = (tb.sum(0) + tb.sum(1)) / (2 * n)
    pe = (pi * (1 - pi)).sum() / (q - 1)
    return (np.trace(tb) / n - pe) / (1 - pe)


def test_it_gives_each_annotator_agreement_with_gold_overall_and_per_verdict():
    mine = [S, S, U, S, C, N, S, U]
    gold = [S, S, U, U, C, N, S, S]
    labels = pd.DataFrame(
        {"annotator": 7, "claim_id": range(8), "answer_id": [1, 1, 1, 2, 2, 2, 3, 3], "verdict": mine, "gold": gold}
    )
    asg = pd.DataFrame({"annotator": 7, "name": "ann", "answer_id": [1, 2, 3], "active_seconds": [60, 600, 120]})
    (row,) = annotator_rows(labels, asg)
    assert (row["claims"], row["answers"]) == (8, 3)
    assert row["median_minutes"]["value"] == pytest.approx(2.0)
    t4 = pd.crosstab(pd.Categorical(mine, VERDICTS), pd.Categorical(gold, VERDICTS), dropna=False).to_numpy()
    assert row["vs_gold"]["percent_agreement"]["value"] == pytest.approx(6 / 8)
    assert row["vs_gold"]["cohen_kappa"]["value"] == pytest.approx(cohens_kappa(t4).kappa)
    assert row["vs_gold"]["gwet_ac1"]["value"] == pytest.approx(ac1(t4))
    unsup = next(v for v in row["per_verdict"] if v["verdict"] == U)
    t2 = [[1, 1], [1, 5]]  # (said U, gold U), (said U, gold other) / (other, U), (other, other)
    assert (unsup["said"], unsup["gold"]) == (2, 2)
    assert unsup["percent_agreement"]["value"] == pytest.approx(6 / 8)
    assert unsup["cohen_kappa"]["value"] == pytest.approx(cohens_kappa(np.array(t2)).kappa)
    assert unsup["gwet_ac1"]["value"] == pytest.approx(ac1(t2))


def test_it_gives_pairwise_agreement_for_every_pair_that_shared_answers():
    claims = pd.DataFrame(
        {
            "ann_a": [1, 1, 2, 2, 3],
            "ann_b": [2, 2, 1, 3, 1],
            "name_a": ["x", "x", "y", "y", "z"],
            "name_b": ["y", "y", "x", "z", "x"],
            "A": [S, S, U, S, C],
            "B": [S, U, U, S, S],
            "answer_id": [1, 1, 2, 3, 4],
        }
    )
    rows = {(r["first"], r["second"]): r for r in pair_rows(claims)}
    assert set(rows) == {(1, 2), (2, 3), (1, 3)}
    assert (rows[(1, 2)]["answers"], rows[(1, 2)]["n"], rows[(1, 2)]["agree"]) == (2, 3, 2)
    assert rows[(1, 2)]["names"] == ["x", "y"]


# ---------- 7. Monte-Carlo honesty ----------


def test_it_says_kappa_and_ac1_carry_no_information_when_a_rater_uses_one_verdict():
    t = [[8, 0], [2, 0]]  # the second rater only ever said the first verdict
    assert ag.cohen_kappa(t)["value"] is None and ag.cohen_kappa(t)["why"].startswith("not informative: ")
    assert ag.gwet_ac1(t)["why"].startswith("not informative: the second rater used a single verdict")
    assert ag.percent_agreement(t)["value"] == pytest.approx(0.8)


def test_it_gives_ac1_and_says_why_kappa_and_alpha_are_undefined_when_every_claim_is_supported():
    # 12 claims in 4 answers, both annotators "supported" on every one. Cohen: p_e = 1 * 1 = 1, kappa = 0 / 0.
    # Gwet (2008): pi = (1, 0, 0, 0), p_e = sum pi (1 - pi) / (q - 1) = 0, AC1 = (p_a - 0) / (1 - 0) = p_a = 1.
    # Krippendorff's alpha: D_e = 0 (one value only), 1 - D_o / D_e undefined; the library raises.
    with pytest.raises(ValueError):
        krippendorff.alpha(reliability_data=np.array([[S] * 12, [S] * 12]), level_of_measurement="nominal")
    r = ag.agreement(np.repeat(np.arange(4), 3), [S] * 12, [S] * 12, VERDICTS, resamples=200)
    assert r["percent_agreement"]["value"] == 1.0 and r["percent_agreement"]["ci"] is None  # no [1, 1]
    assert r["gwet_ac1"]["value"] == 1.0 and r["gwet_ac1"]["ci"] is None
    assert r["cohen_kappa"]["why"] == "not computable: both raters used a single verdict, so chance agreement is 1"
    assert r["krippendorff_alpha"]["why"] == "not computable: every label is the same verdict"
    # Per verdict, a verdict neither side used says nothing: not an AC1 of 1.
    rows = annotator_rows(
        pd.DataFrame({"annotator": 1, "name": "x", "claim_id": range(12), "answer_id": 0, "verdict": S, "gold": S}),
        pd.DataFrame({"annotator": [1], "name": ["x"], "answer_id": [0], "active_seconds": [60.0]}),
    )
    per = {p["verdict"]: p for p in rows[0]["per_verdict"]}
    assert per[S]["gwet_ac1"]["value"] == 1.0
    assert per[C]["gwet_ac1"]["why"] == f"not informative: neither the annotator nor gold said {C} on these claims"


def test_it_keeps_bootstrap_bounds_stable_to_two_thousandths_across_seeds():
    rng = np.random.default_rng(11)
    ids = np.repeat(np.arange(150), 6)
    a = rng.choice(VERDICTS, size=900, p=[0.8, 0.03, 0.1, 0.07])
    b = np.where(rng.random(900) < 0.9, a, rng.choice(VERDICTS, size=900, p=[0.8, 0.03, 0.1, 0.07]))
    runs = [ag.agreement(ids, a, b, VERDICTS, seed=s) for s in range(5)]
    for key in ("percent_agreement", "cohen_kappa", "gwet_ac1"):
        bounds = np.array([r[key]["ci"] for r in runs])
        assert (bounds.max(0) - bounds.min(0)).max() <= 0.004, key  # every bound within +-0.002
        assert runs[0][key]["ci_mc_error"] < 0.002


def test_it_never_prints_a_zero_width_bootstrap_interval():
    ids = np.repeat(np.arange(11), 3)
    same = ag.agreement(ids, [S] * 16 + [U] * 17, [S] * 16 + [U] * 17, VERDICTS, seed=0)
    assert same["percent_agreement"]["value"] == 1.0 and same["percent_agreement"]["ci"] is None
    assert same["percent_agreement"]["ci_why"].startswith("CI not computable: every resample gives the same value")
    ratio = fa.mean_with_ci([1.0] * 11, seed=0)
    assert ratio["value"] == 1.0 and ratio["ci"] is None and "no spread" in ratio["ci_why"]


def test_it_prints_the_monte_carlo_error_of_the_bounds():
    ids = np.repeat(np.arange(12), 4)
    rng = np.random.default_rng(2)
    a = rng.choice([S, U], size=48, p=[0.7, 0.3])
    b = np.where(rng.random(48) < 0.8, a, np.where(a == S, U, S))
    r = ag.agreement(ids, a, b, VERDICTS, seed=4)
    mc = r["cohen_kappa"]["ci_mc_error"]
    # the printed error is the size of the spread between seeds: other seeds land within a few of it
    moved = [
        np.abs(np.array(ag.agreement(ids, a, b, VERDICTS, seed=s)["cohen_kappa"]["ci"]) - r["cohen_kappa"]["ci"]).max()
        for s in range(1, 4)
    ]
    assert 0 < mc < 0.02 and max(moved) < 6 * mc
    assert r["ci_mc_error_max"] >= mc
