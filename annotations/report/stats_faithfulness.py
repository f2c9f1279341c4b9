"""Faithfulness from gold labels: per-answer fail rate and claim ratio, as sampled, per stratum and
weighted to the population, plus the provisional range while disputes are open. Pure: takes a
per-answer pandas frame, returns plain dicts.

Population figures use the stratified estimator sum_h W_h m_h with W_h = N_h / N_covered over the
strata that have data, m_h the stratum mean. Its variance is sum_h W_h^2 s_h^2 / n_h (1 - n_h / N_h)
(finite population correction; a stratum sampled completely adds none). A stratum with a single answer
borrows the sample variance of all answers (a collapsed-strata device, if anything too wide).
Coverage is always stated: the strata and population covered, and the strata without data; when a
stratum holding more than `min_share` of the population has no data the estimate is not computable.

Interval for the weighted fail rate (a proportion): Korn and Graubard (1998), "Confidence intervals
for proportions with small expected number of positive counts estimated from survey data", Survey
Methodology 24(2): 193-201 (reviewed by Dean and Pagano 2015, Journal of Survey Statistics and
Methodology 3(2)). A Clopper-Pearson interval on the effective sample size n* = p(1-p) / v, truncated
at n and set to n when v = 0 (p = 0 or 1), with the degrees-of-freedom factor (t_{n-1} / t_{n-H})^2.
It stays honest at 0 and 1 and with small strata: 0 failures in 11 answers never reads [0, 0].
The design effect v / (p(1-p)/n) is shown beside it. The claim ratio (not a proportion) keeps the
normal interval, clipped to [0, 1]."""

import numpy as np
from scipy.stats import beta, t
from statsmodels.stats.proportion import proportion_confint

from annotations.report.stats_bootstrap import RESAMPLES, ci_why, percentile_ci, resampler_for
from annotations.report.stats_common import not_computable, stat

COUNT_COLUMNS = ("n_supported", "n_contradicted", "n_unsupported", "n_non_assertive")
Z95 = 1.959963984540054


def wilson(x, n):
    if n == 0:
        return not_computable("no answers")
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


def mean_with_ci(values, seed, resamples=RESAMPLES, *, ids=None, resampler=None):
    """Mean of per-answer values (ids: their answers) with a percentile bootstrap CI over answers."""
    v = np.asarray(values, dtype=float)
    ids = np.arange(len(v)) if ids is None else np.asarray(ids)
    ok = np.isfinite(v)
    v, ids = v[ok], ids[ok]
    if len(v) == 0:
        return not_computable("no answer has a scored claim")
    if len(v) < 2:
        return stat(v.mean(), n=1, ci_why="not computable: one answer only")
    rs = resampler_for(ids, resampler, seed, resamples)
    order = np.argsort(ids, kind="stable")
    sums = rs.sums(ids, np.column_stack([v[order], np.ones(len(v))]))
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample without these answers: NaN
        means = sums[:, 0] / sums[:, 1]
    ci, mc = percentile_ci(means)
    method = f"percentile bootstrap, {rs.resamples} resamples"
    return stat(v.mean(), ci, n=len(v), ci_mc_error=mc, ci_why=ci_why(means), ci_method=method)


def coverage(groups, min_share):
    """groups: (name, N_h, n_h). The strata and population covered, the strata without data, and the
    stratum that blocks the estimate (the largest without data above min_share), if any."""
    total = sum(N for _, N, _ in groups)
    missing = [
        {"stratum": str(name), "population": int(N), "share": N / total if total else None}
        for name, N, n in groups
        if n == 0
    ]
    covered = [(name, N) for name, N, n in groups if n > 0]
    blocking = max((m for m in missing if (m["share"] or 0) > min_share), key=lambda m: m["share"], default=None)
    return {
        "population": int(total),
        "covered_population": int(sum(N for _, N in covered)),
        "strata_covered": len(covered),
        "strata_total": len(groups),
        "missing_strata": missing,
        "blocking": blocking,
    }


def blocking_why(b, min_share, what):
    """Why a population figure is not computable: the blocking stratum of coverage() has no `what`."""
    share = f"{b['share']:.1%} of the population (more than {min_share:.0%})"
    return f"stratum {b['stratum']!r} holds {share} and has no {what}"


def uncovered(groups, min_share, what):
    """groups: (name, N_h, n_h) for every stratum of the design, n_h its units that a population-weighted figure
    uses. Why that figure is not computable (a stratum above min_share has none, while some stratum has), or None
    (with no unit at all the figure says why itself)."""
    cover = coverage(groups, min_share)
    if not cover["strata_covered"] or not cover["blocking"]:
        return None
    return blocking_why(cover["blocking"], min_share, what)


def stratified(groups, min_share, what="data"):
    """groups: (name, N_h, values) for every stratum of the design. Weighted mean over the covered strata,
    its design-based variance, and the coverage. Returns (estimate, variance, cover, why)."""
    groups = [(name, N, np.asarray(v, dtype=float)[np.isfinite(np.asarray(v, dtype=float))]) for name, N, v in groups]
    cover = coverage([(name, N, len(v)) for name, N, v in groups], min_share)
    if not cover["strata_covered"]:  # said first: no stratum is to blame when none has any
        return None, None, cover, f"no stratum has any {what}"
    if cover["blocking"]:
        return None, None, cover, blocking_why(cover["blocking"], min_share, what)
    if cover["covered_population"] <= 0:
        return None, None, cover, "the strata have no population size"
    used = [(name, N, v) for name, N, v in groups if len(v)]
    everything = np.concatenate([v for _, _, v in used])
    pooled = everything.var(ddof=1) if len(everything) >= 2 else None
    est, var, borrowed = 0.0, 0.0, []
    for name, N, v in used:
        w, n = N / cover["covered_population"], len(v)
        est += w * v.mean()
        if n >= N:
            continue  # census of this stratum: no sampling variance
        if n < 2:
            if pooled is None:
                return est, None, cover | {"borrowed_variance": []}, None
            borrowed.append(str(name))
        var += w**2 * (v.var(ddof=1) if n >= 2 else pooled) / n * (1 - n / N)
    return est, var, cover | {"borrowed_variance": borrowed, "n": len(everything)}, None


def korn_graubard(p, var, n, strata):
    """Korn-Graubard 95% interval (see the module docstring); returns (ci, n_eff, design_effect)."""
    n_eff = min(n, p * (1 - p) / var) if var > 0 and 0 < p < 1 else float(n)  # v = 0: n* = n
    deff = var / (p * (1 - p) / n) if var > 0 and 0 < p < 1 else None
    df = max(n - strata, 1)
    if n > 1:
        n_eff *= (t.ppf(0.975, n - 1) / t.ppf(0.975, df)) ** 2
    x = p * n_eff
    lo = 0.0 if x <= 0 else beta.ppf(0.025, x, n_eff - x + 1)
    hi = 1.0 if x >= n_eff else beta.ppf(0.975, x + 1, n_eff - x)
    return [float(lo), float(hi)], float(n_eff), deff


def _borrow_note(cover):
    b = cover.get("borrowed_variance") or []
    if not b:
        return ""
    return f"; {len(b)} single-answer strat{'um' if len(b) == 1 else 'a'} borrow the variance of all sampled answers"


ZERO_VARIANCE = (
    "not computable: the design-based variance is 0 (every sampled value is the same, or every stratum was sampled "
    "completely) and an interval of zero width is never printed"
)
COMPLETE = "answer with complete gold"  # the unit the answer-level weighted figures count


def strata_groups(f, values, rows, unsampled=()):
    """The input of stratified_proportion and stratified_mean: (stratum, N_h, values of its rows where `rows`
    holds) for each stratum of f (one row per sampled answer, with stratum and stratum_population), then
    (stratum, N_h, []) for each stratum of the design drawn with no answer."""
    sampled = [
        (name, g["stratum_population"].iloc[0], values[g.index][rows[g.index]]) for name, g in f.groupby("stratum")
    ]
    return sampled + [(name, N, []) for name, N in unsampled]


def stratified_proportion(groups, min_share, what="data"):
    """Weighted fail rate (0/1 values) with the Korn-Graubard interval, the design effect and coverage."""
    est, var, cover, why = stratified(groups, min_share, what)
    cover.pop("blocking")
    if why:
        return not_computable(why, **cover)
    method = "Korn-Graubard 95% (Clopper-Pearson on the effective sample size)" + _borrow_note(cover)
    if var is None:  # one answer: no variance estimate, so the effective sample size is the sample size
        method += "; the audit has a single answer, its variance is unknown: effective sample size n = 1"
        cover["n"] = 1
    ci, n_eff, deff = korn_graubard(est, var or 0.0, cover["n"], cover["strata_covered"])
    return stat(est, ci, variance=var, n_eff=n_eff, design_effect=deff, ci_method=method, **cover)


def stratified_mean(groups, min_share, what="data"):
    """Weighted mean of values in [0, 1] with the normal design-based interval, clipped, and coverage."""
    est, var, cover, why = stratified(groups, min_share, what)
    cover.pop("blocking")
    if why:
        return not_computable(why, **cover)
    if var is None:
        return stat(est, None, ci_why="not computable: the audit has a single answer", **cover)
    if var == 0:
        return stat(est, None, ci_why=ZERO_VARIANCE, **cover)
    ci = [max(0.0, est - Z95 * var**0.5), min(1.0, est + Z95 * var**0.5)]
    method = "stratified normal 95% with finite population correction, clipped to [0, 1]" + _borrow_note(cover)
    return stat(est, ci, variance=var, ci_method=method, **cover)
