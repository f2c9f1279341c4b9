"""Faithfulness from gold labels: per-answer fail rate and claim ratio, as sampled, per stratum and
weighted to the population. Pure: takes a per-answer pandas frame, returns plain dicts.

Population figures use the stratified estimator sum_h W_h m_h with W_h = N_h / N (N_h: the stratum's
population, N: the sum over sampled strata) and m_h the stratum mean of the answers with complete gold.
Its variance is sum_h W_h^2 s_h^2 / n_h (1 - n_h / N_h) (finite population correction; for a proportion
s_h^2 / n_h = p_h (1 - p_h) / (n_h - 1)), and the 95% CI is the normal interval clipped to [0, 1].
Chosen because it follows the audit's design exactly and is what the weights encode; its weakness is a
rate near 0 or 1 in a small stratum (the normal interval is then too narrow), which is why the sampled
Wilson interval is always shown beside it. A stratum sampled completely contributes no variance.
A stratum with a single answer has no within-stratum variance estimate; it borrows the sample variance
of all answers across strata (a collapsed-strata device: between-strata spread makes it, if anything,
too wide), and the CI says so. With one answer in all, the CI is not computable.
"""

import numpy as np
import pandas as pd
from scipy.stats import bootstrap
from statsmodels.stats.proportion import proportion_confint

from annotations.report.stats_common import not_computable, stat

COUNT_COLUMNS = ("n_supported", "n_contradicted", "n_unsupported", "n_non_assertive")
Z95 = 1.959963984540054


def wilson(x, n):
    if n == 0:
        return not_computable("no answers with complete gold")
    lo, hi = proportion_confint(x, n, alpha=0.05, method="wilson")
    return stat(x / n, [lo, hi], x=int(x), n=int(n), ci_method="Wilson 95%")


def answer_outcomes(frame):
    """Adds scored, bad, fail (any unsupported/contradicted claim) and ratio (supported / scored)."""
    f = frame.copy()
    f["scored"] = f["n_supported"] + f["n_contradicted"] + f["n_unsupported"]
    f["bad"] = f["n_contradicted"] + f["n_unsupported"]
    f["fail"] = (f["bad"] > 0).astype(int)  # no scored claims: passes
    f["ratio"] = (f["n_supported"] / f["scored"]).where(f["scored"] > 0)
    return f


def mean_with_ci(values, seed):
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return not_computable("no answer has a scored claim")
    if len(v) < 2:
        return stat(v.mean(), n=1, ci_why="not computable: one answer only")
    res = bootstrap((v,), np.mean, n_resamples=1000, method="percentile", rng=np.random.default_rng(seed))
    ci = res.confidence_interval
    return stat(
        v.mean(),
        [ci.low, ci.high] if v.min() < v.max() else [v.mean(), v.mean()],
        n=len(v),
        ci_method="percentile bootstrap over answers",
    )


def stratified_mean(groups):
    """groups: list of (name, N_h, values). Returns the weighted mean with its design-based CI."""
    groups = [(name, N, np.asarray(v, dtype=float)[np.isfinite(np.asarray(v, dtype=float))]) for name, N, v in groups]
    empty = [name for name, N, v in groups if len(v) == 0 and N > 0]
    if not groups or empty:
        return not_computable(f"stratum {empty[0]!r} has no usable answers" if empty else "no strata")
    total = sum(N for _, N, _ in groups)
    if total <= 0:
        return not_computable("the strata have no population size")
    everything = np.concatenate([v for _, _, v in groups])
    pooled = everything.var(ddof=1) if len(everything) >= 2 else None
    est, var, why, borrowed = 0.0, 0.0, None, []
    for name, N, v in groups:
        w, n = N / total, len(v)
        est += w * v.mean()
        if n >= N:
            continue  # census of this stratum: no sampling variance
        if n < 2:
            if pooled is None:
                why = "not computable: the audit has a single answer, its variance is unknown"
                continue
            borrowed.append(str(name))
        var += w**2 * (v.var(ddof=1) if n >= 2 else pooled) / n * (1 - n / N)
    ci = None if why else [max(0.0, est - Z95 * var**0.5), min(1.0, est + Z95 * var**0.5)]
    method = "stratified normal 95% with finite population correction, clipped to [0, 1]"
    if borrowed:
        method += (
            f"; {len(borrowed)} single-answer strat{'um' if len(borrowed) == 1 else 'a'} borrow the "
            "variance of all sampled answers"
        )
    return stat(est, ci, population=int(total), ci_why=why, ci_method=method, borrowed_variance=borrowed)


def faithfulness(frame, seed=0):
    """frame: one row per answer with complete gold: stratum, stratum_population and COUNT_COLUMNS."""
    if len(frame) == 0:
        why = "no answer has complete gold labels yet"
        return {
            "answers": 0,
            "fail_rate": not_computable(why),
            "claim_ratio_mean": not_computable(why),
            "claim_ratio_pooled": not_computable(why),
            "counts": dict.fromkeys(COUNT_COLUMNS, 0),
            "strata": [],
            "weighted": {"fail_rate": not_computable(why), "claim_ratio_mean": not_computable(why)},
        }
    f = answer_outcomes(pd.DataFrame(frame))
    scored = int(f["scored"].sum())
    out = {
        "answers": len(f),
        "fails": int(f["fail"].sum()),
        "fail_rate": wilson(int(f["fail"].sum()), len(f)),
        "claim_ratio_mean": mean_with_ci(f["ratio"], seed),
        "claim_ratio_pooled": stat(f["n_supported"].sum() / scored, n=scored)
        if scored
        else not_computable("no scored claims"),
        "counts": {c: int(f[c].sum()) for c in COUNT_COLUMNS} | {"scored": scored},
        "answers_failing_with_contradiction": int((f["n_contradicted"] > 0).sum()),
    }
    groups = list(f.groupby("stratum", sort=True))
    total = float(sum(g["stratum_population"].iloc[0] for _, g in groups))
    out["strata"] = [
        {
            "stratum": str(name),
            "population": int(g["stratum_population"].iloc[0]),
            "answers": len(g),
            "share": g["stratum_population"].iloc[0] / total if total else None,
            "fail_rate": wilson(int(g["fail"].sum()), len(g)),
            "claim_ratio_mean": stat(g["ratio"].mean())
            if g["ratio"].notna().any()
            else not_computable("no scored claim"),
            "contradicted": int(g["n_contradicted"].sum()),
            "unsupported": int(g["n_unsupported"].sum()),
        }
        for name, g in groups
    ]
    out["weighted"] = {
        "fail_rate": stratified_mean([(n, g["stratum_population"].iloc[0], g["fail"]) for n, g in groups]),
        "claim_ratio_mean": stratified_mean([(n, g["stratum_population"].iloc[0], g["ratio"]) for n, g in groups]),
    }
    return out
