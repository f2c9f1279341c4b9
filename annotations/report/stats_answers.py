"""The answer-level faithfulness figures of one audit: from complete gold, and provisional while gold is
incomplete. Pure: one row per sampled answer in, plain dicts out.

Input columns: stratum, stratum_population, the gold counts (COUNT_COLUMNS), complete (every claim has
gold), labelled (both annotators submitted), n_open (claims both labelled, still without gold: open
disputes), a_bad / b_bad (annotator A's / B's labels make the answer fail); optional: reopened (an assignment
was reopened and is not submitted again).

Before adjudication, the answers with complete gold are the ones on which both annotators agreed
everywhere: a passing-heavy subset. So while gold is incomplete the headline is provisional and covers
every answer labelled by both: the fail rate if every open dispute resolves as pass (only settled bad
claims fail an answer) and as fail (any open dispute fails it), and each annotator's own fail rate.

`unsampled`: (stratum, N_h) of the design's strata drawn with no answer at all. They have no row, yet they
are part of the population: every population figure lists them among the strata without data."""

from annotations.report.stats_common import not_computable, shared_why, stat
from annotations.report.stats_faithfulness import (
    COMPLETE,
    COUNT_COLUMNS,
    answer_outcomes,
    mean_with_ci,
    strata_groups,
    stratified_mean,
    stratified_proportion,
    wilson,
)

SCORED_ANSWER = f"{COMPLETE} and a scored claim"  # the unit of the weighted claim ratio (no ratio without one)


def _strata(f, done, min_share, unsampled=()):
    total = float(f.groupby("stratum")["stratum_population"].first().sum()) + sum(N for _, N in unsampled)
    out = []
    for name, g in f.groupby("stratum", sort=True):
        d = g[done[g.index]]
        N = int(g["stratum_population"].iloc[0])
        out.append(
            {
                "stratum": str(name),
                "population": N,
                "share": N / total if total else None,
                "sampled": len(g),
                "answers": len(d),
                "fails": int(d["fail"].sum()),
                "fail_rate": wilson(int(d["fail"].sum()), len(d)) if len(d) else not_computable(f"no {COMPLETE}"),
                "claim_ratio_mean": stat(d["ratio"].mean())
                if d["ratio"].notna().any()
                else not_computable("no scored claim"),
                "contradicted": int(d["n_contradicted"].sum()),
                "unsupported": int(d["n_unsupported"].sum()),
                "small": bool(len(d) == 0 and total and N / total <= min_share),
            }
        )
    none = not_computable("no answer was drawn from this stratum")
    for name, N in unsampled:
        out.append(
            {"stratum": str(name), "population": int(N), "share": N / total if total else None, "sampled": 0}
            | {"answers": 0, "fails": 0, "fail_rate": none, "claim_ratio_mean": none, "contradicted": 0}
            | {"unsupported": 0, "small": bool(total and N / total <= min_share)}
        )
    return out


def _s(n, one, many):
    return f"{n} {one if n == 1 else many}"


def pending_label(open_n, reopened, waiting):
    """What keeps the headline provisional, from the counts: open disputes, answers reopened and waiting for
    their annotator, other answers not labelled by both (never "0 disputes open" while something else waits)."""
    parts = [_s(open_n, "dispute open", "disputes open")] if open_n or not (reopened or waiting) else []
    if reopened:
        parts.append(
            _s(reopened, "answer reopened, waiting for its annotator", "answers reopened, waiting for their annotators")
        )
    if waiting:
        parts.append(_s(waiting, "answer not labelled by both yet", "answers not labelled by both yet"))
    return "provisional: " + "; ".join(parts)


def provisional(f, min_share, unsampled=()):
    lab = f["labelled"].astype(bool)
    low = f["fail"].astype(bool)
    high = low | (f["n_open"] > 0)
    rate = lambda flags: wilson(int(flags[lab].sum()), int(lab.sum()))  # noqa: E731
    weighted = lambda flags: stratified_proportion(  # noqa: E731
        strata_groups(f, flags.astype(int), lab, unsampled), min_share, "answer labelled by both"
    )
    if_pass, if_fail = weighted(low), weighted(high)
    open_n = int(f.loc[lab, "n_open"].sum())
    reopened = int((~lab & f["reopened"].astype(bool)).sum()) if "reopened" in f.columns else 0
    return {
        "open_disputes": open_n,
        "label": pending_label(open_n, reopened, int((~lab).sum()) - reopened),
        "answers": int(lab.sum()),
        "not_labelled": int((~lab).sum()),
        "reopened": reopened,
        "fails_if_pass": int((low & lab).sum()),
        "fails_if_fail": int((high & lab).sum()),
        "if_pass": rate(low),
        "if_fail": rate(high),
        "weighted_if_pass": if_pass,
        "weighted_if_fail": if_fail,
        "weighted_why": shared_why(if_pass, if_fail),  # both ends not computable for one reason: say it once
        "annotators": [
            {"slot": s, "fails": int((f[col].astype(bool) & lab).sum()), "fail_rate": rate(f[col].astype(bool))}
            for s, col in (("A", "a_bad"), ("B", "b_bad"))
        ],
    }


def faithfulness(frame, *, seed=0, min_share=0.05, resampler=None, unsampled=()):
    f = answer_outcomes(frame.reset_index(drop=True))
    done = f["complete"].astype(bool)
    d = f[done]
    scored = int(d["scored"].sum())
    why = "no answer has complete gold labels yet"
    out = {
        "complete": bool(len(f) and done.all()),
        "sampled": len(f),
        "answers": int(done.sum()),
        "fails": int(d["fail"].sum()),
        "fail_rate": wilson(int(d["fail"].sum()), len(d)) if len(d) else not_computable(why),
        "claim_ratio_mean": mean_with_ci(d["ratio"], seed, ids=d.get("answer_id"), resampler=resampler)
        if len(d)
        else not_computable(why),
        "claim_ratio_pooled": stat(d["n_supported"].sum() / scored, n=scored)
        if scored
        else not_computable("no scored claims" if len(d) else why),
        "counts": {c: int(d[c].sum()) for c in COUNT_COLUMNS} | {"scored": scored},
        "strata": _strata(f, done, min_share, unsampled),
    }
    what = COMPLETE
    out["weighted"] = {
        "fail_rate": stratified_proportion(strata_groups(f, f["fail"], done, unsampled), min_share, what)
        if len(d)
        else not_computable(why),
        "claim_ratio_mean": stratified_mean(strata_groups(f, f["ratio"], done, unsampled), min_share, SCORED_ANSWER)
        if len(d)
        else not_computable(why),
    }
    out["headline"] = "gold" if out["complete"] else "provisional"
    out["provisional"] = provisional(f, min_share, unsampled) if len(f) else None
    return out
