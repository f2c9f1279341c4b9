"""The noise floor, fairly: the judge against gold next to each annotator against gold and A against B,
on the same claims (gold, a judge verdict and both labels). Gold is made from A and B, so each annotator
agrees with gold more than with the other annotator: the fair human benchmark for the judge is one
annotator against gold (optimistic for the human, since they helped make gold). The gap judge minus
the better annotator gets a paired cluster-bootstrap interval: answers are resampled, and the judge's
and the annotator's agreements are recomputed on the same resampled claims.

The comparison is circular until disputes are adjudicated: a gold label A and B agreed on equals both their
labels, so with no adjudicated gold among the claims each annotator (and A against B) agrees 100% by
construction and there is no human benchmark at all; and while disputes are open the claims the annotators
disagree on are missing, so every figure leans towards agreement. The reading then draws no conclusion. Pure."""

import numpy as np
import pandas as pd

from annotations.report.stats_agreement import cohen_kappa, gwet_ac1, percent_agreement, table_from_pairs
from annotations.report.stats_bootstrap import RESAMPLES, ci_why, percentile_ci, resampler_for
from annotations.report.stats_common import VERDICTS, not_computable, not_informative, stat

CIRCULAR = (
    "every gold label on these claims is one both annotators agreed on (no dispute adjudicated yet), "
    "so each annotator agrees with it by construction"
)
AGREED_ONLY = "gold here is only claims both annotators agreed on"  # CIRCULAR, short, for each table cell


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


def _human(slot, pb):
    who = "annotators A and B (tied)" if slot == "tied" else f"annotator {slot} (the better one)"
    return f"{who} on {pb:.1%}"


def _open(n):
    return f"{n} claim{' the annotators disagree on is' if n == 1 else 's the annotators disagree on are'}"


def _reading(d, pj, pb, slot, open_disputes=0):
    if d["value"] is None:
        return "Whether the judge is distinguishable from a trained annotator is unknown: " + d["why"] + "."
    head = f"The judge agrees with gold on {pj:.1%} of these claims, {_human(slot, pb)}"
    if open_disputes:
        gap = f"the gap {d['value']:+.3f}" + (" (95% CI {:+.3f} to {:+.3f})".format(*d["ci"]) if d["ci"] else "")
        return (
            f"Provisional, no conclusion yet: {head}, {gap}; but {_open(open_disputes)} still open and left "
            "out, so both agreements lean towards 100% until they are adjudicated."
        )
    if d["ci"] is None:
        return head + "; the gap has no interval (" + (d.get("ci_why") or "too few answers") + ")."
    lo, hi = d["ci"]
    gap = f"the gap {d['value']:+.3f} (95% CI {lo:+.3f} to {hi:+.3f})"
    if lo > 0:
        return f"{head}: {gap} excludes 0, so the judge agrees with gold MORE than a trained annotator does."
    if hi < 0:
        return f"{head}: {gap} excludes 0, so the judge agrees with gold LESS than a trained annotator does."
    return f"{head}: {gap} includes 0, so the judge is not distinguishable from a trained annotator here."


def agreed_only(adjudicated):
    """Whether the gold of these claims (adjudicated: per claim, whether an adjudicator set it; None: not known,
    taken as a finished adjudication) is only what both annotators agreed on: some gold, none adjudicated."""
    return adjudicated is not None and len(adjudicated) > 0 and not np.asarray(adjudicated, dtype=bool).any()


def by_construction(pair):
    """A pair's coefficients when gold is made only of agreed claims: its counts stay, its figures say nothing."""
    return pair | {k: not_informative(AGREED_ONLY) for k in ("percent_agreement", "cohen_kappa", "gwet_ac1")}


def _circular(out, pj, open_disputes):
    """The figures when no gold on these claims is adjudicated: only the judge's agreement says anything."""
    for key in ("A", "B", "annotators"):
        out[key] = by_construction(out[key])
    out["gap"] = not_informative("no dispute adjudicated yet, so there is no human benchmark", judge=float(pj))
    out["reading"] = (
        f"Not informative yet: the judge agrees with gold on {pj:.1%} of these claims, but {CIRCULAR} (100%), and "
        "these are the claims they found easy. Whether the judge is distinguishable from a trained annotator "
        "can be told once disputes are adjudicated."
        + (f" {_open(open_disputes)} waiting for adjudication." if open_disputes else "")
    )
    return out


def noise_floor(
    answer_ids, judge, gold, a, b, *, adjudicated=None, open_disputes=0, seed=0, resamples=RESAMPLES, resampler=None
):
    """adjudicated: per claim, whether its gold was set by an adjudicator (None: not known, taken as a finished
    adjudication); open_disputes: claims both annotators labelled that have no gold yet, left out here."""
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
    if agreed_only(adjudicated):
        return _circular(out, out["judge"]["agree"] / out["n"], open_disputes)
    tied = out["A"]["agree"] == out["B"]["agree"]
    slot = "A" if out["A"]["agree"] >= out["B"]["agree"] else "B"  # tied: A, whose agreement is B's
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
    gap = {"better": slot, "tied": tied, "judge": float(pj), "human": float(ph)}
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
    out["reading"] = _reading(out["gap"], pj, ph, "tied" if tied else slot, open_disputes)
    return out
