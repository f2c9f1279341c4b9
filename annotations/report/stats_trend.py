"""Fail rate over time and the change against the previous audit, on the population. Pure.

Each audit is summarised by its population-weighted fail rate and design-based variance (see
stats_faithfulness). Two audits are compared by z = (p2 - p1) / sqrt(v1 + v2), two-sided (when both are
self-weighting, every answer of an audit weighs the same and its sample rate is its population estimate: the
classic pooled two-proportion z-test on the sample counts, statsmodels' proportions_ztest), unless any
expected count of the 2 x 2 table of sampled answers (audit x fail) is below 10. Then a permutation
test on the 0/1 fail indicator: answers are exchanged between the audits WITHIN each stratum (strata
matched by name; a stratum in one audit only stays as it is) and each audit's weighted rate is
recomputed with its own weights, so the test respects both designs. Within a stratum every answer of
an audit carries the same weight, so a permutation only changes how many failures each audit holds
there: a hypergeometric draw per stratum (RESAMPLES draws, p = (1 + hits) / (1 + RESAMPLES)). When
both audits are self-weighting (equal weights within each audit) the answers are exchanged across
all strata and the exact permutation distribution is used, which is the exact conditional test. Two designs
that share no stratum (and are not both self-weighting) leave nothing to exchange: every permutation is the
observed table and p would be 1 whatever the data, so no test is made and the change is only described.
Sample rates (fails / answers) are shown beside, labelled as such: across designs they are not comparable.
Provisional audits (gold incomplete) never raise a regression."""

import numpy as np
from scipy.stats import hypergeom, norm
from statsmodels.stats.proportion import proportions_ztest

from annotations.report.stats_common import not_computable, stat

MIN_EXPECTED = 10  # below this expected count the normal approximation is not trusted
ALPHA = 0.05
RESAMPLES = 10_000


def _rate(strata, counts):
    """strata: [(name, N_h, n_h, x_h)]; counts: fails per stratum (array, possibly (B, H))."""
    N = np.array([s[1] for s in strata], dtype=float)
    n = np.array([s[2] for s in strata], dtype=float)
    return (counts / n * (N / N.sum())).sum(-1)


def _self_weighting(strata):
    w = np.array([s[1] / s[2] for s in strata])
    return bool(np.allclose(w, w[0], rtol=1e-9))


def _exchangeable(prev, cur):
    """Whether permutation_p can exchange answers: across all strata (both self-weighting) or within shared ones."""
    both_self = _self_weighting(prev) and _self_weighting(cur)
    return both_self or bool({s[0] for s in prev} & {s[0] for s in cur})


def permutation_p(prev, cur, seed=0):
    """Two-sided permutation p-value of the weighted difference (see the module docstring)."""
    d_obs = _rate(cur, np.array([s[3] for s in cur])) - _rate(prev, np.array([s[3] for s in prev]))
    if _self_weighting(prev) and _self_weighting(cur):
        n1, n2 = sum(s[2] for s in prev), sum(s[2] for s in cur)
        ones = sum(s[3] for s in prev) + sum(s[3] for s in cur)
        x = np.arange(max(0, ones - n1), min(ones, n2) + 1)
        d = x / n2 - (ones - x) / n1
        pmf = hypergeom(n1 + n2, ones, n2).pmf(x)
        return float(min(1.0, pmf[np.abs(d) >= abs(d_obs) - 1e-12].sum())), "exact permutation (conditional) test"
    rng = np.random.default_rng(seed)
    old = {s[0]: s for s in prev}
    new = {s[0]: s for s in cur}
    draws = {}  # stratum in both audits -> failures the current audit holds in each resample
    for name in old.keys() & new.keys():
        (_, _, n1, x1), (_, _, n2, x2) = old[name], new[name]
        draws[name] = rng.hypergeometric(x1 + x2, n1 + n2 - x1 - x2, n2, size=RESAMPLES) if x1 + x2 else 0
    c2 = np.column_stack([np.broadcast_to(draws.get(s[0], s[3]), RESAMPLES) for s in cur])
    c1 = np.column_stack(
        [np.broadcast_to(s[3] + new[s[0]][3] - draws[s[0]] if s[0] in draws else s[3], RESAMPLES) for s in prev]
    )
    d = _rate(cur, c2) - _rate(prev, c1)
    hits = int((np.abs(d) >= abs(d_obs) - 1e-12).sum())
    return (1 + hits) / (1 + RESAMPLES), f"permutation test within strata ({RESAMPLES} resamples, seed {seed})"


def compare(prev, cur, seed=0):
    """prev, cur: {"value", "variance", "strata": [(name, N_h, n_h, x_h)], "fails", "n", "provisional"}."""
    if prev.get("provisional") or cur.get("provisional"):
        label = cur["provisional"] or prev["provisional"]
        return not_computable(f"{label}; no test and no regression until gold is complete", regression=False)
    if prev["value"] is None or cur["value"] is None or not prev["n"] or not cur["n"]:
        return not_computable("an audit has no population-weighted fail rate", regression=False)
    pooled = (prev["fails"] + cur["fails"]) / (prev["n"] + cur["n"])
    expected = np.array([prev["n"], cur["n"]])[:, None] * np.array([pooled, 1 - pooled])[None, :]
    diff = cur["value"] - prev["value"]
    var = (prev["variance"] or 0.0) + (cur["variance"] or 0.0)
    z = None
    if expected.min() < MIN_EXPECTED or var <= 0:
        if not _exchangeable(prev["strata"], cur["strata"]):
            return not_computable(
                f"no test for the change of {diff:+.3f}: an expected count is below 10 (too few for the z-test) "
                "and the two designs share no stratum, so a permutation within strata would exchange no answer",
                regression=False,
            )
        p, test = permutation_p(prev["strata"], cur["strata"], seed)
        test += " on the 0/1 fail indicator (an expected count is below 10)"
    elif _self_weighting(prev["strata"]) and _self_weighting(cur["strata"]):
        z, p = proportions_ztest([cur["fails"], prev["fails"]], [cur["n"], prev["n"]])
        test = "two-proportion z-test (pooled; both audits self-weighting, so each sample rate is its population's)"
    else:
        z = diff / var**0.5
        p, test = float(2 * norm.sf(abs(z))), "z-test on the population-weighted rates (design-based variance)"
    regression = bool(p < ALPHA and diff > 0)
    return stat(
        diff,
        test=test,
        z=z,
        p_value=float(p),
        min_expected=float(expected.min()),
        regression=regression,
        reading=(
            "Regression: the population fail rate rose significantly"
            if regression
            else "Significant fall in the population fail rate"
            if p < ALPHA
            else "No significant change in the population fail rate"
        )
        + " at the 5% level.",
    )


def fail_rate_series(points, seed=0):
    """points in time order, each with "summary" (compare's input) -> each with its change against the
    previous audit that has data."""
    out, prev = [], None
    for pt in points:
        s = pt["summary"]
        has_data = bool(s["n"]) or bool(s.get("labelled"))
        row = dict(pt)
        if not has_data:
            row["change"] = not_computable("this audit has no answer labelled by both annotators yet")
        elif prev is None:
            row["change"] = not_computable("no earlier audit with data")
        else:
            row["change"] = compare(prev, s, seed)
        row["change"].setdefault("regression", False)
        if has_data:
            prev = s
        out.append(row)
    return out


def effort(assignment_seconds, audit_size, annotators=2):
    """assignment_seconds: active seconds of each submitted assignment (one annotator, one answer)."""
    s = np.asarray(assignment_seconds, dtype=float)
    if len(s) == 0:
        why = "no submitted assignments"
        return {
            "assignments": 0,
            "hours": stat(0.0),
            "median_minutes": not_computable(why),
            "projected_hours": not_computable(why),
        }
    med = float(np.median(s)) / 60
    return {
        "assignments": len(s),
        "hours": stat(s.sum() / 3600),
        "median_minutes": stat(med),
        "projected_hours": stat(
            med * annotators * audit_size / 60,
            audit_size=audit_size,
            annotators=annotators,
            note="median minutes per answer x 2 annotators x n / 60; adjudication time is not counted",
        ),
    }
