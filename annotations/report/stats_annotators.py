"""Per-annotator figures: claims and answers labelled, median time per answer, agreement with gold
overall (percent, Cohen's kappa, Gwet's AC1 on the 4 x 4 table) and per verdict (the same on the 2 x 2
table "said v" x "gold is v"), and pairwise agreement for every pair that shared answers. While no gold on an
annotator's claims is adjudicated, every gold label there is one both annotators agreed on, equal to the
annotator's own: their agreement with gold is 100% by construction and is shown as not informative. Pure."""

import numpy as np

from annotations.report.stats_common import VERDICTS, not_computable, not_informative, stat
from annotations.report.stats_noise import agreed_only, by_construction, pair_stats


def _one_vs_rest(mine, gold, v):
    out = pair_stats(np.where(mine == v, v, "other"), np.where(gold == v, v, "other"), (v, "other"))
    if len(mine) and not (mine == v).any() and not (gold == v).any():
        # Every claim is "other" on both sides: 100% agreement (and AC1 1) that says nothing about this verdict.
        why = f"neither the annotator nor gold said {v} on these claims"
        out["percent_agreement"], out["gwet_ac1"] = not_informative(why), not_informative(why)
    return out


def annotator_rows(labels, assignments):
    """labels: one row per label: annotator, name, claim_id, answer_id, verdict, gold (NaN: none), optional
    gold_source ("agreed" / "adjudicated"). assignments: submitted ones: annotator, name, answer_id,
    active_seconds."""
    rows = []
    for (ann, name), asg in assignments.groupby(["annotator", "name"], sort=True):
        mine = labels[labels["annotator"] == ann]
        g = mine[mine["gold"].notna()]
        m, gold = g["verdict"].to_numpy(dtype=str), g["gold"].to_numpy(dtype=str)
        secs = asg["active_seconds"].to_numpy(dtype=float)
        circular = agreed_only(g["gold_source"] == "adjudicated" if "gold_source" in g.columns else None)
        mark = by_construction if circular else (lambda pair: pair)
        rows.append(
            {
                "annotator": int(ann),
                "name": str(name),
                "claims": len(mine),
                "answers": len(asg),
                "median_minutes": stat(np.median(secs) / 60) if len(secs) else not_computable("no answers"),
                "agreed_only": circular,  # gold is this annotator's own agreed labels: its figures say nothing
                "vs_gold": mark(pair_stats(m, gold)),
                "per_verdict": [
                    {"verdict": v, "said": int((m == v).sum()), "gold": int((gold == v).sum())}
                    | mark(_one_vs_rest(m, gold, v))
                    for v in VERDICTS
                ],
            }
        )
    return rows


def pair_rows(claims):
    """claims: one row per claim both labelled: ann_a, ann_b, name_a, name_b, A, B, answer_id."""
    if not len(claims):
        return []
    ann_a, ann_b = claims["ann_a"].to_numpy(dtype=int), claims["ann_b"].to_numpy(dtype=int)
    first, second = np.minimum(ann_a, ann_b), np.maximum(ann_a, ann_b)
    names = dict(zip(ann_a, claims["name_a"], strict=True)) | dict(zip(ann_b, claims["name_b"], strict=True))
    a, b = claims["A"].to_numpy(dtype=str), claims["B"].to_numpy(dtype=str)
    answers = claims["answer_id"].to_numpy()
    rows = []
    for x, y in sorted(set(zip(first.tolist(), second.tolist(), strict=True))):
        m = (first == x) & (second == y)
        rows.append(
            {"first": x, "second": y, "names": [str(names[x]), str(names[y])], "answers": len(set(answers[m]))}
            | pair_stats(a[m], b[m])
        )
    return rows
