"""Assemble the audit report: plain frames from selectors, figures from the pure stats modules.
The result is a JSON-safe dict (NaN -> None) that both the page and the JSON download use."""

import numpy as np
import pandas as pd

from annotations.lab.policy import policy_headlines
from annotations.report import selectors
from annotations.report.stats_agreement import (
    agreement,
    cohen_kappa,
    gwet_ac1,
    percent_agreement,
    reliability_reading,
    table_from_pairs,
)
from annotations.report.stats_common import BAD, VERDICTS, clean, not_computable, stat
from annotations.report.stats_faithfulness import COUNT_COLUMNS, faithfulness
from annotations.report.stats_judge import classification_summary, precision_recall, weighted_table
from annotations.report.stats_trend import effort, fail_rate_series

JUDGE_ROWS = (*VERDICTS, "none")
JUDGE_COLUMNS = ["claim_id", "verdict", "raw_verdict", "guard_passed"]
PASS_FAIL = ["fail", "pass"]
METHODS = [
    "An answer fails when any gold claim is unsupported or contradicted; non_assertive claims are not scored; "
    "an answer with no scored claim passes. Only answers whose every claim has gold are counted (an answer "
    "without claims counts once both annotators submitted it).",
    "Fail-rate CIs: Wilson 95%. Population figures: stratified estimator sum W_h p_h with W_h = N_h/N; its CI "
    "is normal with variance sum W_h^2 p_h(1-p_h)/(n_h-1) (1-n_h/N_h), clipped to [0, 1]. A stratum sampled "
    "completely adds no variance (so a census has a zero-width population CI; the Wilson CI stays beside it).",
    "Agreement CIs: percentile bootstrap resampling answers (clusters), not claims.",
    "Judge statistics use claims with both gold and a judge verdict (after the evidence guard); a claim "
    "without a verdict appears in the matrix row 'none'. Population-weighted figures weight each claim by "
    "its answer's sampling weight.",
]


def answer_gold_table(answers, gold_long, submitted, keys):
    """Per answer: gold counts per verdict and whether gold is complete.
    answers: keys + n_claims; gold_long: keys + verdict + n; submitted: keys + n (submitted assignments)."""
    wide = (
        gold_long.pivot_table(index=keys, columns="verdict", values="n", aggfunc="sum", fill_value=0).reindex(
            columns=list(VERDICTS), fill_value=0
        )
        if len(gold_long)
        else pd.DataFrame(columns=list(VERDICTS), index=pd.MultiIndex.from_tuples([], names=keys))
    )
    wide.columns = list(COUNT_COLUMNS)
    out = answers.set_index(keys).join(wide.astype(int), how="left").fillna(dict.fromkeys(COUNT_COLUMNS, 0))
    out[list(COUNT_COLUMNS)] = out[list(COUNT_COLUMNS)].astype(int)
    subm = submitted.set_index(keys)["n"] if len(submitted) else pd.Series(dtype=int)
    out["submitted"] = subm.reindex(out.index).fillna(0).astype(int).to_numpy()
    n_gold = out[list(COUNT_COLUMNS)].sum(axis=1)
    out["complete"] = ((out["n_claims"] > 0) & (n_gold >= out["n_claims"])) | (
        (out["n_claims"] == 0) & (out["submitted"] >= 2)
    )
    return out.reset_index()


def claim_frame(f):
    """One row per claim of the audit: stratum, weight, gold (and its source), A, B, judge (raw, guard)."""
    cl = f["claims"].rename(columns={"id": "claim_id"})
    items = f["items"][["id", "answer_id", "position", "stratum", "weight"]]
    cl = cl.merge(items.rename(columns={"id": "item_id", "position": "item_position"}), on="answer_id", how="left")
    gold = f["gold"][["claim_id", "verdict", "source"]].rename(columns={"verdict": "gold", "source": "gold_source"})
    cl = cl.merge(gold, on="claim_id", how="left")
    labels = f["labels"].drop_duplicates(["claim_id", "slot"])
    labels = (
        labels.pivot(index="claim_id", columns="slot", values="verdict")
        if len(labels)
        else pd.DataFrame(index=pd.Index([], name="claim_id"))
    )
    cl = cl.merge(labels.reindex(columns=["A", "B"]), left_on="claim_id", right_index=True, how="left")
    judge = f["judge"] if f["judge"] is not None else pd.DataFrame(columns=JUDGE_COLUMNS)
    judge = judge[JUDGE_COLUMNS].rename(
        columns={"verdict": "judge", "raw_verdict": "judge_raw", "guard_passed": "guard"}
    )
    return cl.merge(judge, on="claim_id", how="left")


def pass_fail(flags):
    return ["fail" if x else "pass" for x in flags]


def annotator_agreement(cl, seed, resamples):
    both = cl[cl["A"].notna() & cl["B"].notna()]
    claims = agreement(
        both["answer_id"].tolist(), both["A"].tolist(), both["B"].tolist(), VERDICTS, seed=seed, resamples=resamples
    )
    per = both.assign(fa=both["A"].isin(BAD), fb=both["B"].isin(BAD)).groupby("answer_id")[["fa", "fb"]].any()
    answers = agreement(
        per.index.tolist(), pass_fail(per["fa"]), pass_fail(per["fb"]), PASS_FAIL, seed=seed, resamples=resamples
    )
    return {"claims": claims, "answers": answers, "reading": reliability_reading(claims["krippendorff_alpha"])}


def pair_stats(a, b):
    t = table_from_pairs(a, b, VERDICTS)
    return {
        "agree": int(np.trace(t)),
        "percent_agreement": percent_agreement(t),
        "cohen_kappa": cohen_kappa(t),
        "gwet_ac1": gwet_ac1(t),
    }


def judge_vs_gold(cl, answers, f, versions, version, seed, resamples):
    if version is None:
        return {"versions": versions, "version": None, "why": "not computable: no judge verdicts on this audit"}
    g = cl[cl["gold"].notna()].assign(judge=lambda d: d["judge"].fillna("none"))
    counts = pd.crosstab(g["judge"], g["gold"]).reindex(index=JUDGE_ROWS, columns=VERDICTS, fill_value=0)
    wsum = pd.crosstab(g["judge"], g["gold"], values=g["weight"], aggfunc="sum") if len(g) else counts * 0.0
    wsum = wsum.reindex(index=JUDGE_ROWS, columns=VERDICTS).fillna(0.0)
    s = g[g["judge"] != "none"]
    noise = s[s["A"].notna() & s["B"].notna()]
    per = cl.assign(jbad=cl["judge"].isin(BAD), jmiss=cl["judge"].isna()).groupby("answer_id")[["jbad", "jmiss"]].any()
    ans = answers[answers["complete"]].join(per, on="answer_id")
    ans = ans[~ans["jmiss"].fillna(False).astype(bool)]
    ans_j, ans_g = pass_fail(ans["jbad"].fillna(False)), pass_fail(ans["n_contradicted"] + ans["n_unsupported"] > 0)
    ans_w = weighted_table(ans_j, ans_g, ans["weight"], PASS_FAIL)
    guard = f["judge"]["guard_passed"]
    return {
        "versions": versions,
        "version": version,
        "matrix": {
            "columns": list(VERDICTS),
            "rows": [
                {
                    "judge": r,
                    "cells": [
                        {"gold": c, "count": int(counts.loc[r, c]), "weighted": float(wsum.loc[r, c])} for c in VERDICTS
                    ],
                }
                for r in JUDGE_ROWS
            ],
        },
        "without_verdict": int((g["judge"] == "none").sum()),
        "awaiting_gold": int((cl["judge"].notna() & cl["gold"].isna()).sum()),
        "guard_failed": int((guard == False).sum()),  # noqa: E712  (None: no evidence needed)
        "numeric_flagged": int((f["judge"]["numeric_passed"] == False).sum()),  # noqa: E712  (None: not applicable)
        "claims": agreement(
            s["answer_id"].tolist(), s["judge"].tolist(), s["gold"].tolist(), VERDICTS, seed=seed, resamples=resamples
        ),
        "sampled": classification_summary(table_from_pairs(s["judge"], s["gold"], VERDICTS), VERDICTS),
        "weighted": classification_summary(weighted_table(s["judge"], s["gold"], s["weight"], VERDICTS), VERDICTS),
        "answers": agreement(ans["answer_id"].tolist(), ans_j, ans_g, PASS_FAIL, seed=seed, resamples=resamples)
        | {
            "fail_detection": precision_recall(table_from_pairs(ans_j, ans_g, PASS_FAIL), PASS_FAIL)["fail"],
            "weighted_accuracy": stat(np.trace(ans_w) / ans_w.sum()) if ans_w.sum() else not_computable("no answers"),
        },
        "noise_floor": {
            "n": len(noise),
            "judge": pair_stats(noise["judge"], noise["gold"]),
            "annotators": pair_stats(noise["A"], noise["B"]),
        },
    }


def trend(audit):
    d = selectors.dataset_gold_counts(audit.dataset_id)
    keys = ["audit_id", "answer_id"]
    table = answer_gold_table(d["answers"], d["gold"], d["submitted"], keys)
    done = table[table["complete"]].assign(fail=lambda t: (t["n_contradicted"] + t["n_unsupported"]) > 0)
    by_audit = done.groupby("audit_id")["fail"].agg(["sum", "count"])
    points = [
        {
            "audit_id": int(a.id),
            "name": a.name,
            "created_at": a.created_at.isoformat(),
            "status": a.status,
            "current": a.id == audit.id,
            "fails": int(by_audit["sum"].get(a.id, 0)),
            "n": int(by_audit["count"].get(a.id, 0)),
        }
        for a in d["audits"].itertuples()
    ]
    series = fail_rate_series(points)
    current = next((p for p in series if p["current"]), None)
    change = current["change"] if current else not_computable("audit not found")
    return {"points": series, "change": change, "regression": bool(change.get("regression"))}


def pick_version(versions, requested):
    """The requested version if it has verdicts here, else the latest one."""
    by_id = {v["id"]: v for v in versions}
    try:
        return by_id.get(int(requested)) or (versions[0] if versions else None)
    except (TypeError, ValueError):
        return versions[0] if versions else None


def tables(audit, version):
    """The frames every figure (and every drill-down list) is computed from: claims and answers."""
    f = selectors.audit_frames(audit, version["id"] if version else None)
    cl = claim_frame(f)
    items = f["items"].assign(n_claims=lambda t: t["answer_id"].map(cl.groupby("answer_id").size()).fillna(0))
    gold_long = cl[cl["gold"].notna()].groupby(["answer_id", "gold"]).size().rename("n").reset_index()
    subm = f["assignments"][f["assignments"]["status"] == "submitted"]
    submitted = (
        subm.groupby("audit_answer_id")
        .size()
        .rename("n")
        .reset_index()
        .merge(f["items"][["id", "answer_id"]], left_on="audit_answer_id", right_on="id")[["answer_id", "n"]]
    )
    answers = answer_gold_table(
        items.rename(columns={"id": "item_id"}), gold_long.rename(columns={"gold": "verdict"}), submitted, ["answer_id"]
    )
    return f, cl, answers, subm


def build_report(audit, judge_version_id=None, *, resamples=1000):
    versions = selectors.judge_versions(audit)
    version = pick_version(versions, judge_version_id)
    seed = int(audit.seed) % 2**32
    f, cl, answers, subm = tables(audit, version)
    report = {
        "audit": {
            "id": audit.id,
            "name": audit.name,
            "status": audit.status,
            "size": audit.size,
            "population_size": audit.population_size,
            "created_at": audit.created_at.isoformat(),
        },
        "coverage": {
            "answers": len(answers),
            "answers_complete_gold": int(answers["complete"].sum()),
            "claims": len(cl),
            "claims_with_gold": int(cl["gold"].notna().sum()),
            "claims_labelled_twice": int((cl["A"].notna() & cl["B"].notna()).sum()),
        },
        "faithfulness": faithfulness(answers[answers["complete"]], seed=seed),
        "policies": policy_headlines(answers[answers["complete"]], audit.policy),
        "agreement": annotator_agreement(cl, seed, resamples),
        "judge": judge_vs_gold(cl, answers, f, versions, version, seed, resamples),
        "trend": trend(audit),
        "effort": effort(subm["active_seconds"].to_numpy(), audit.size),
        "methods": METHODS,
    }
    return clean(report)
