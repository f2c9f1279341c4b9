"""Judge versus gold: precision, recall and F1 from a (possibly weighted) confusion table. Pure."""

import numpy as np

from annotations.report.stats_agreement import cohen_kappa, gwet_ac1, percent_agreement
from annotations.report.stats_common import BAD, not_computable, stat


def precision_recall(table, categories):
    """Rows: judge (predicted), columns: gold (true)."""
    t = np.asarray(table, dtype=float)
    out = {}
    for i, c in enumerate(categories):
        tp, pred, true = t[i, i], t[i].sum(), t[:, i].sum()
        p = stat(tp / pred) if pred else not_computable(f"the judge never said {c}")
        r = stat(tp / true) if true else not_computable(f"gold never says {c}")
        if p["value"] is None or r["value"] is None:
            f1 = not_computable("precision or recall undefined")
        else:
            f1 = stat(2 * tp / (pred + true))
        out[c] = {"precision": p, "recall": r, "f1": f1, "judge_total": float(pred), "gold_total": float(true)}
    return out


def bad_claim_table(table, categories):
    """Collapse to 2x2: bad (unsupported or contradicted) vs not bad, rows judge, columns gold."""
    t = np.asarray(table, dtype=float)
    bad = np.array([c in BAD for c in categories])
    return np.array(
        [
            [t[np.ix_(bad, bad)].sum(), t[np.ix_(bad, ~bad)].sum()],
            [t[np.ix_(~bad, bad)].sum(), t[np.ix_(~bad, ~bad)].sum()],
        ]
    )


def classification_summary(table, categories):
    """Point estimates from a judge x gold table (counts, or weights for population figures)."""
    t = np.asarray(table, dtype=float)
    return {
        "accuracy": percent_agreement(t),
        "cohen_kappa": cohen_kappa(t),
        "gwet_ac1": gwet_ac1(t),
        "per_verdict": precision_recall(t, categories),
        "bad_claim": precision_recall(bad_claim_table(t, categories), ["bad", "not_bad"])["bad"],
    }


def weighted_table(a, b, weights, categories):
    index = {c: i for i, c in enumerate(categories)}
    t = np.zeros((len(categories), len(categories)))
    np.add.at(t, ([index[x] for x in a], [index[y] for y in b]), np.asarray(weights, dtype=float))
    return t


def domain_weights(strata, population, seen):
    """Per row of stratum h, N_h / n_h with n_h the units (answers, or a calibration sample's claims) of h whose
    data are in (`seen`: {stratum: n_h}): each stratum stands for its population with the units that have data.
    The weight stored at drawing, N_h / (n_h drawn), would shrink a stratum whose answers are not all labelled
    yet (2 of 10 labelled: a fifth of its share) and tilt every weighted figure towards the strata labelled first.
    strata: one per row; population: {stratum: N_h}."""
    return np.array([population[h] / seen[h] for h in strata], dtype=float)
