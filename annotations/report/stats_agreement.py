"""Agreement between two raters (annotator A vs B, or judge vs gold) on nominal verdicts.

Point estimates: Krippendorff's alpha from the krippendorff library; Cohen's kappa (Cohen 1960) and
Gwet's AC1 (Gwet 2008) from their closed forms on the k x k table (kappa is checked against
statsmodels' cohens_kappa in the tests; its per-call overhead is too high for per-annotator tables).
Confidence intervals: the cluster bootstrap of stats_bootstrap.py, which resamples ANSWERS, not claims.
"""

import krippendorff
import numpy as np

from annotations.report.stats_bootstrap import (
    RESAMPLES,
    batch_stats,
    ci_why,
    cluster_tables,
    percentile_ci,
    resampler_for,
)
from annotations.report.stats_common import not_computable, not_informative, stat

# ---------- point estimates on one k x k table (rows: rater 1, columns: rater 2) ----------


def codes(values, categories):
    """Index of each value in categories (a value outside them raises KeyError)."""
    index = {c: i for i, c in enumerate(categories)}
    return np.fromiter((index[x] for x in values), dtype=np.intp, count=len(values))


def table_from_pairs(a, b, categories):
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError("the two raters must rate the same items")
    k = len(categories)
    flat = codes(a, categories) * k + codes(b, categories)
    return np.bincount(flat, minlength=k * k).reshape(k, k).astype(float)


def percent_agreement(table):
    t = np.asarray(table, dtype=float)
    if t.sum() == 0:
        return not_computable("no items were rated by both")
    return stat(np.trace(t) / t.sum(), agree=float(np.trace(t)), n=float(t.sum()))


def single_class(t):
    """Why a chance-corrected coefficient says nothing here (a rater used one class only), or None."""
    raters = [name for name, m in (("the first rater", t.sum(1)), ("the second rater", t.sum(0))) if (m > 0).sum() < 2]
    if not raters:
        return None
    who = "both raters" if len(raters) == 2 else raters[0]
    return f"{who} used a single verdict, so the coefficient carries no information about agreement"


def cohen_kappa(table):
    t = np.asarray(table, dtype=float)
    n = t.sum()
    if n == 0:
        return not_computable("no items were rated by both")
    pe = (t.sum(1) / n) @ (t.sum(0) / n)
    if pe >= 1 - 1e-12:
        return not_computable("both raters used a single verdict, so chance agreement is 1")
    if single_class(t):
        return not_informative(single_class(t))
    return stat((np.trace(t) / n - pe) / (1 - pe))  # Cohen (1960); tests check it against statsmodels


def gwet_ac1(table):
    """Two raters: p_e = 1/(q-1) * sum_k pi_k (1 - pi_k), pi_k the mean of the two raters' marginals;
    q is the number of categories on the scale (the table's size), used or not. When both raters gave every
    item the same one verdict (an audit where every claim is supported) p_e = 0 and AC1 = p_a = 1: unlike
    kappa (p_e = 1, 0 / 0) it is defined and true, which is what AC1 is for."""
    t = np.asarray(table, dtype=float)
    n, q = t.sum(), t.shape[0]
    if n == 0:
        return not_computable("no items were rated by both")
    if q < 2:
        return not_computable("fewer than two categories")
    unanimous = np.count_nonzero(t) == 1 and np.trace(t) == n  # one verdict, both raters, every item
    if single_class(t) and not unanimous:
        return not_informative(single_class(t))
    pi = (t.sum(0) + t.sum(1)) / (2 * n)
    pe = (pi * (1 - pi)).sum() / (q - 1)
    return stat((np.trace(t) / n - pe) / (1 - pe))


def multi_rater_counts(units):
    """units: list of per-unit lists of ratings (None/NaN missing) -> (units x categories counts, categories)."""
    cats = sorted({x for u in units for x in u if x is not None and x == x})
    return np.array([[sum(1 for x in u if x == c) for c in cats] for u in units], dtype=float), cats


def gwet_ac1_multi(counts, q=None):
    """Gwet's AC1 for any number of raters with missing ratings (units x categories counts):
    p_a over units with two or more ratings, pi_k over all rated units."""
    c = np.asarray(counts, dtype=float)
    r = c.sum(1)
    q = q or c.shape[1]
    pair = r >= 2
    if not pair.any() or q < 2:
        return not_computable("no unit has two ratings" if not pair.any() else "fewer than two categories")
    pa = np.mean((c[pair] * (c[pair] - 1)).sum(1) / (r[pair] * (r[pair] - 1)))
    pi = np.mean(c[r >= 1] / r[r >= 1, None], axis=0)
    pe = (pi * (1 - pi)).sum() / (q - 1)
    fleiss_pe = (pi**2).sum()
    return stat(
        (pa - pe) / (1 - pe),
        p_a=float(pa),
        fleiss_kappa=float((pa - fleiss_pe) / (1 - fleiss_pe)) if fleiss_pe < 1 else None,
    )


def krippendorff_alpha(a, b):
    """Nominal alpha of two raters' label lists (None = missing)."""
    if len(a) == 0:
        return not_computable("no items were rated by both")
    # A numpy unicode array; np.nan becomes the string "nan", which krippendorff reads as missing.
    data = np.array([[np.nan if x is None else x for x in a], [np.nan if x is None else x for x in b]], dtype=str)
    try:
        return stat(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError as e:
        if "more than one value" in str(e):
            why = "every label is the same verdict"
        elif "two coders" in str(e):
            why = "no item was labelled by both"
        else:
            why = f"alpha undefined ({e})"
        return not_computable(why)


def specific_agreement(table, categories):
    """Per category: 2 n_kk / (n_k. + n_.k); undefined when neither rater used the category."""
    t = np.asarray(table, dtype=float)
    out = {}
    for i, c in enumerate(categories):
        den = t[i].sum() + t[:, i].sum()
        out[c] = stat(2 * t[i, i] / den) if den else not_computable(f"neither rater used {c}")
    return out


def reliability_reading(alpha):
    """Krippendorff's (2004) thresholds, in plain words."""
    if alpha.get("value") is None:
        return "Reliability unknown: " + alpha["why"] + "."
    a = alpha["value"]
    if a < 0.667:
        return f"alpha {a:.3f} < 0.667: labels not reliable enough to score the judge against."
    if a < 0.8:
        return f"alpha {a:.3f} is between 0.667 and 0.8: draw only tentative conclusions from these labels."
    return f"alpha {a:.3f} >= 0.8: labels are reliable."


def agreement(cluster_ids, a, b, categories, *, seed=0, resamples=RESAMPLES, resampler=None):
    """All agreement figures of two raters on the same items, CIs by resampling clusters (answers)."""
    categories = list(categories)
    table = table_from_pairs(a, b, categories)
    out = {
        "categories": categories,
        "table": table.astype(int).tolist(),
        "n": len(a),
        "answers": len(set(cluster_ids)),
        "agree": int(np.trace(table)),
        "percent_agreement": percent_agreement(table),
        "cohen_kappa": cohen_kappa(table),
        "krippendorff_alpha": krippendorff_alpha(list(a), list(b)),
        "gwet_ac1": gwet_ac1(table),
        "specific": specific_agreement(table, categories),
        "ci_why": None,
    }
    if out["answers"] < 2:
        out["ci_why"] = "not computable: fewer than two answers to resample"
        return out
    per = cluster_tables(cluster_ids, a, b, categories)
    rs = resampler_for(cluster_ids, resampler, seed, resamples)
    tables = rs.sums(cluster_ids, per).reshape(rs.resamples, len(categories), -1)
    boot = batch_stats(tables)
    figures = [
        (out[name], boot[name]) for name in ("percent_agreement", "cohen_kappa", "krippendorff_alpha", "gwet_ac1")
    ]
    figures += [(out["specific"][c], boot["specific"][:, i]) for i, c in enumerate(categories)]
    for figure, samples in figures:
        if figure["value"] is not None:
            figure["ci"], figure["ci_mc_error"] = percentile_ci(samples)
            if figure["ci"] is None:
                figure["ci_why"] = ci_why(samples)
    out["ci_method"] = f"percentile bootstrap, {rs.resamples} resamples of answers (seed {rs.seed})"
    errors = [f["ci_mc_error"] for f, _ in figures if f.get("ci_mc_error") is not None]
    out["ci_mc_error_max"] = max(errors) if errors else None
    return out
