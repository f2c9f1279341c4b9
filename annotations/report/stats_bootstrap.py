"""Vectorised cluster bootstrap for agreement statistics. Clusters are answers (the claims of one answer
are not independent), which scipy.stats.bootstrap cannot resample directly. The per-answer k x k
contingency counts are summed with a (resamples x answers) multiplicity matrix, then every statistic is
computed for all resamples at once from those tables. Pure numpy."""

import numpy as np

MIN_FINITE_SHARE = 0.9  # below this share of defined resamples the CI is not reported


def batch_stats(tables):
    """Percent agreement, Cohen's kappa, Gwet's AC1, nominal alpha and specific agreement of a batch of
    (B, k, k) tables; alpha from the coincidence matrix T + T' of two coders without missing values."""
    t = np.asarray(tables, dtype=float)
    q = t.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        n = t.sum((1, 2))
        diag = np.einsum("bkk->bk", t)
        po = diag.sum(1) / n
        rows, cols = t.sum(2), t.sum(1)
        pe_k = (rows * cols).sum(1) / n**2
        pi = (rows + cols) / (2 * n[:, None])
        pe_g = (pi * (1 - pi)).sum(1) / (q - 1)
        nc = rows + cols  # coincidence-matrix marginals; 2n values in all
        alpha = 1 - (2 * n - 1) * (2 * n - 2 * diag.sum(1)) / ((2 * n) ** 2 - (nc**2).sum(1))
        out = {
            "percent_agreement": po,
            "cohen_kappa": np.where(pe_k < 1 - 1e-12, (po - pe_k) / (1 - pe_k), np.nan),
            "gwet_ac1": (po - pe_g) / (1 - pe_g),
            "krippendorff_alpha": np.where((nc**2).sum(1) < (2 * n) ** 2, alpha, np.nan),
            "specific": 2 * diag / nc,
        }
    return out


def resample_matrix(n_clusters, resamples, rng):
    """How many times each cluster is drawn in each resample: (resamples x n_clusters)."""
    idx = rng.integers(0, n_clusters, size=(resamples, n_clusters))
    flat = (idx + (np.arange(resamples) * n_clusters)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * n_clusters).reshape(resamples, n_clusters)


def cluster_tables(cluster_ids, a, b, categories):
    """Per-cluster k x k counts flattened: (n_clusters, k*k)."""
    k = len(categories)
    index = {c: i for i, c in enumerate(categories)}
    _, cl = np.unique(np.asarray(cluster_ids), return_inverse=True)
    cells = np.array([index[x] * k + index[y] for x, y in zip(a, b, strict=True)], dtype=np.int64)
    per = np.zeros((cl.max() + 1 if len(cl) else 0, k * k))
    np.add.at(per, (cl, cells), 1)
    return per


def percentile_ci(samples):
    s = np.asarray(samples, dtype=float)
    ok = np.isfinite(s)
    if ok.mean() < MIN_FINITE_SHARE:
        return None
    lo, hi = np.percentile(s[ok], [2.5, 97.5])
    return [float(lo), float(hi)]
