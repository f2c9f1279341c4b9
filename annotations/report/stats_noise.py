"""The noise floor, fairly: the judge against gold next to each annotator against gold and A against B,
on the same claims (gold, a judge verdict and both labels). Gold is made from A and B, so each annotator
agrees with gold more than with the other annotator: the fair human benchmark for the judge is one
annotator against gold (optimistic for the human, since they helped make gold). The gap judge minus
the better annotator gets a paired cluster-bootstrap interval: answers are resampled, and the judge's
and the annotator's agreements are recomputed on the same resampled claims. Pure."""

import numpy as np
import pandas as pd

from annotations.report.stats_agreement import cohen_kappa, gwet_ac1, percent_agreement, table_from_pairs
from annotations.report.stats_bootstrap import RESAMPLES, ci_why, percentile_ci, resampler_for
from annotations.report.stats_common import VERDICTS, not_computable, stat


def pair_stats(a, b, categories=VERDICTS):
    t = table_from_pairs(a, b, categories)
    return {
        "agree": int(np.trace(t)),
        "n": int(t.sum()),
        "disagree": int(t.sum() - np.trace(t)),
        "percent_agreement": percent_agreement(t),
        "cohen_kappa": cohen_kappa(t),
        "gwet_ac1": gwet_ac1(t),
    }


def _reading(d, pj, pb, slot):
    if d["value"] is None:
        return "Whether the judge is distinguishable from a trained annotator is unknown: " + d["why"] + "."
    head = f"The judge agrees with gold on {pj:.1%} of these claims, annotator {slot} (the better one) on {pb:.1%}"
    if d["ci"] is None:
        return head + "; the gap has no interval (" + (d.get("ci_why") or "too few answers") + ")."
    lo, hi = d["ci"]
    gap = f"the gap {d['value']:+.3f} (95% CI {lo:+.3f} to {hi:+.3f})"
    if lo > 0:
        return f"{head}: {gap} excludes 0, so the judge agrees with gold MORE than a trained annotator does."
    if hi < 0:
        return f"{head}: {gap} excludes 0, so the judge agrees with gold LESS than a trained annotator does."
    return f"{head}: {gap} includes 0, so the judge is not distinguishable from a trained annotator here."


def noise_floor(answer_ids, judge, gold, a, b, *, seed=0, resamples=RESAMPLES, resampler=None):
    out = {
        "n": len(gold),
        "answers": len(set(answer_ids)),
        "judge": pair_stats(judge, gold),
        "A": pair_stats(a, gold),
        "B": pair_stats(b, gold),
        "annotators": pair_stats(a, b),
    }
    if not len(gold):
        out["gap"] = not_computable("no claim has gold, a judge verdict and both labels")
        out["reading"] = _reading(out["gap"], 0, 0, "A")
        return out
    slot = "A" if out["A"]["agree"] >= out["B"]["agree"] else "B"
    human = {"A": a, "B": b}[slot]
    per = (
        pd.DataFrame(
            {
                "answer": list(answer_ids),
                "n": 1.0,
                "j": np.asarray(judge) == np.asarray(gold),
                "h": np.asarray(human) == np.asarray(gold),
            }
        )
        .groupby("answer")[["n", "j", "h"]]
        .sum()
        .to_numpy(dtype=float)
    )
    pj, ph = per[:, 1].sum() / per[:, 0].sum(), per[:, 2].sum() / per[:, 0].sum()
    gap = {"better": slot, "judge": float(pj), "human": float(ph)}
    if len(per) < 2:
        out["gap"] = stat(pj - ph, ci_why="not computable: fewer than two answers to resample", **gap)
    else:
        rs = resampler_for(answer_ids, resampler, seed, resamples)
        sums = rs.sums(answer_ids, per)
        with np.errstate(divide="ignore", invalid="ignore"):  # a resample without these answers: NaN
            diffs = (sums[:, 1] - sums[:, 2]) / sums[:, 0]
        ci, mc = percentile_ci(diffs)
        method = f"paired percentile bootstrap over answers, {rs.resamples} resamples (seed {rs.seed})"
        out["gap"] = stat(pj - ph, ci, ci_mc_error=mc, ci_why=ci_why(diffs), ci_method=method, **gap)
    out["reading"] = _reading(out["gap"], pj, ph, slot)
    return out
