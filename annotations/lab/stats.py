"""Pure statistics of the judge lab and the guardrail check (no ORM): two proportions (z-test with an exact
permutation fallback), classification figures against gold, McNemar's exact test, and a paired cluster
bootstrap of an accuracy difference. A figure that cannot be computed is None, and the `why` beside it says
why in the report's words ("not computable: ..." over too few items, "not informative: ..." for a
chance-corrected coefficient of a rater who used one class: the report's own kappa and AC1 decide that)."""

import numpy as np
from scipy.stats import binomtest, hypergeom
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from annotations.report.stats_agreement import cohen_kappa, gwet_ac1

MIN_EXPECTED = 10  # below this expected cell count the z-test gives way to the permutation test


def wilson(x, n):
    if not n:
        return None
    lo, hi = proportion_confint(x, n, method="wilson")
    return [float(lo), float(hi)]


def expected_min(x1, n1, x2, n2):
    """The smallest expected count of the 2x2 table (group x fail/pass) under independence."""
    total, fails = n1 + n2, x1 + x2
    return min(n * k / total for n in (n1, n2) for k in (fails, total - fails))


def permutation_p(x1, n1, x2, n2):
    """Exact two-sided permutation test of p1 - p2: relabelling the groups at random, the fails of group 1
    are hypergeometric; p = P(|difference| at least the observed one). Needs no resampling."""
    total, fails = n1 + n2, x1 + x2
    observed = abs(x1 / n1 - x2 / n2)
    dist = hypergeom(total, fails, n1)
    ks = np.arange(max(0, fails - n2), min(fails, n1) + 1)
    diffs = np.abs(ks / n1 - (fails - ks) / n2)
    return float(min(1.0, dist.pmf(ks[diffs >= observed - 1e-12]).sum()))


def compare_proportions(x1, n1, x2, n2):
    """Group 1 against group 2: the z-test when every expected count is at least MIN_EXPECTED, else the
    permutation test. Returns {test, statistic, p, expected_min}."""
    e = expected_min(x1, n1, x2, n2)
    if x1 + x2 in (0, n1 + n2):  # no variation at all: nothing can differ
        return {"test": "none (all equal)", "statistic": None, "p": 1.0, "expected_min": e}
    if e < MIN_EXPECTED:
        return {"test": "permutation (exact)", "statistic": None, "p": permutation_p(x1, n1, x2, n2), "expected_min": e}
    z, p = proportions_ztest([x1, x2], [n1, n2])
    return {"test": "two-proportion z-test", "statistic": float(z), "p": float(p), "expected_min": e}


def mcnemar_exact(b, c):
    """Exact McNemar test on the discordant pairs (b: only the first right, c: only the second right): the
    p-value, or None without a discordant pair (the test has no item to count)."""
    if b + c == 0:
        return None
    return float(binomtest(b, b + c, 0.5).pvalue)


def confusion(pred, gold, labels, weights=None):
    """labels x labels table, rows = prediction, columns = gold; weighted when weights are given."""
    index = {v: i for i, v in enumerate(labels)}
    t = np.zeros((len(labels), len(labels)))
    for k, (p, g) in enumerate(zip(pred, gold, strict=True)):
        t[index[p], index[g]] += 1.0 if weights is None else weights[k]
    return t


def kappa(t):
    """Cohen's kappa of a table: (value or None, why), by the report's rule."""
    f = cohen_kappa(t)
    return f["value"], f["why"]


def ac1(t):
    """Gwet's AC1 of a table: (value or None, why), by the report's rule."""
    f = gwet_ac1(t)
    return f["value"], f["why"]


def _ratio(a, b):
    return float(a / b) if b else None


def _per_label(t, i, v):
    p, r = _ratio(t[i, i], t[i].sum()), _ratio(t[i, i], t[:, i].sum())
    f1 = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    why = {
        "precision": None if p is not None else f"not computable: never judged {v}",
        "recall": None if r is not None else f"not computable: gold has no {v}",
    }
    why["f1"] = None if f1 is not None else why["precision"] or why["recall"]
    return {"precision": p, "recall": r, "f1": f1, "support": float(t[:, i].sum()), "why": why}


def classification(t, labels, bad=(), *, empty="no items", bad_name="bad item"):
    """Accuracy, kappa, AC1, per-label precision / recall / F1, and the recall of the `bad` labels together;
    `why` gives the reason of each figure that is None (empty: why an empty table has no item)."""
    n = t.sum()
    idx = [labels.index(v) for v in bad if v in labels]
    caught = t[np.ix_(idx, idx)].sum() if idx else 0.0  # a bad claim judged as any bad verdict
    k, k_why = kappa(t)
    a, a_why = ac1(t)
    bad_recall = _ratio(caught, t[:, idx].sum()) if idx else None
    nothing = f"not computable: {empty}" if not n else None
    return {
        "n": float(n),
        "accuracy": _ratio(np.trace(t), n),
        "kappa": k,
        "ac1": a,
        "per_label": {v: _per_label(t, i, v) for i, v in enumerate(labels)},
        "bad_recall": bad_recall,
        "why": {
            "accuracy": nothing,
            "kappa": nothing or k_why,
            "ac1": nothing or a_why,
            "bad_recall": nothing or (None if bad_recall is not None else f"not computable: gold has no {bad_name}"),
        },
    }


def paired_cluster_bootstrap(clusters, right_a, right_b, *, resamples=2000, seed=0):
    """95% percentile interval of accuracy(a) - accuracy(b), resampling clusters (answers) with replacement:
    the claims of one answer are not independent. Returns (difference, [lo, hi]): (None, None) without an
    item, the interval None with a single cluster (every resample is that cluster: no interval) or when every
    resample gives the same difference (an interval of zero width is never given)."""
    clusters, a, b = np.asarray(clusters), np.asarray(right_a, float), np.asarray(right_b, float)
    if not len(a):
        return None, None
    ids, inverse = np.unique(clusters, return_inverse=True)
    if len(ids) < 2:
        return float(a.mean() - b.mean()), None
    sa, sb, size = (np.bincount(inverse, weights=w, minlength=len(ids)) for w in (a, b, np.ones_like(a)))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(ids), size=(resamples, len(ids)))
    diffs = (sa[picks].sum(axis=1) - sb[picks].sum(axis=1)) / size[picks].sum(axis=1)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    return float(a.mean() - b.mean()), ([float(lo), float(hi)] if np.ptp(diffs) > 0 else None)
