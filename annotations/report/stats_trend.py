"""Fail rate over time, the change against the previous audit, and reviewer effort. Pure."""

import numpy as np
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import proportions_ztest

from annotations.report.stats_common import not_computable, stat
from annotations.report.stats_faithfulness import wilson

MIN_EXPECTED = 10  # below this expected count the normal approximation is not trusted
ALPHA = 0.05


def compare_fail_rates(prev_fails, prev_n, fails, n):
    """Current vs previous audit: two-proportion z-test, or Fisher's exact test when any expected
    count of the 2x2 table is below 10. A significant rise is a regression."""
    if prev_n == 0 or n == 0:
        return not_computable("an audit has no answers with complete gold")
    pooled = (prev_fails + fails) / (prev_n + n)
    expected = np.array([prev_n, n])[:, None] * np.array([pooled, 1 - pooled])[None, :]
    diff = fails / n - prev_fails / prev_n
    if expected.min() < MIN_EXPECTED:
        table = [[fails, n - fails], [prev_fails, prev_n - prev_fails]]
        _, p = fisher_exact(table, alternative="two-sided")
        test, z = "Fisher's exact test (two-sided; an expected count is below 10)", None
    else:
        z, p = proportions_ztest([fails, prev_fails], [n, prev_n])
        test = "two-proportion z-test (pooled, two-sided)"
    regression = bool(p < ALPHA and diff > 0)
    return stat(
        diff,
        test=test,
        z=None if z is None else float(z),
        p_value=float(p),
        min_expected=float(expected.min()),
        regression=regression,
        reading=(
            "Regression: the fail rate rose significantly"
            if regression
            else "Significant fall in the fail rate"
            if p < ALPHA
            else "No significant change"
        )
        + " at the 5% level.",
    )


def fail_rate_series(points):
    """points: [{audit_id, name, created_at, fails, n, ...}] in time order -> each with its Wilson CI and
    the change against the previous audit that has data."""
    out, prev = [], None
    for pt in points:
        row = dict(pt, fail_rate=wilson(pt["fails"], pt["n"]))
        row["change"] = (
            compare_fail_rates(prev["fails"], prev["n"], pt["fails"], pt["n"])
            if prev and pt["n"]
            else not_computable("no earlier audit with gold to compare")
        )
        if pt["n"]:
            prev = pt
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
