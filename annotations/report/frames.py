"""The frames every figure and every drill-down list of the report is computed from: one row per claim
(stratum, weight, gold, annotator A and B with who they are, judge) and one row per answer (gold counts,
complete, labelled by both, open disputes, reopened and waiting for its annotator, each annotator's
pass/fail). Built from the selectors' plain frames; pure pandas after that."""

import pandas as pd

from annotations.report import selectors
from annotations.report.stats_common import BAD, VERDICTS
from annotations.report.stats_faithfulness import COUNT_COLUMNS

JUDGE_COLUMNS = ["claim_id", "verdict", "raw_verdict", "guard_passed"]


def pick_version(versions, requested):
    """The requested version if it has verdicts here, else the latest one."""
    by_id = {v["id"]: v for v in versions}
    try:
        return by_id.get(int(requested)) or (versions[0] if versions else None)
    except (TypeError, ValueError):
        return versions[0] if versions else None


def answer_gold_table(answers, gold_long, submitted, keys):
    """Per answer: gold counts per verdict and whether gold is complete.
    answers: keys + n_claims; gold_long: keys + verdict + n; submitted: keys + n (submitted assignments)."""
    wide = (
        gold_long.groupby([*keys, "verdict"])["n"]
        .sum()
        .unstack("verdict", fill_value=0)
        .reindex(columns=list(VERDICTS), fill_value=0)
        if len(gold_long)
        else pd.DataFrame(columns=list(VERDICTS), index=pd.MultiIndex.from_tuples([], names=keys))
    )
    wide.columns = list(COUNT_COLUMNS)
    out = answers.set_index(keys).join(wide.astype(int), how="left").fillna(dict.fromkeys(COUNT_COLUMNS, 0))
    out[list(COUNT_COLUMNS)] = out[list(COUNT_COLUMNS)].astype(int)
    subm = submitted.set_index(keys)["n"] if len(submitted) else pd.Series(dtype=int)
    out["submitted"] = subm.reindex(out.index).fillna(0).astype(int).to_numpy()
    n_gold = out[list(COUNT_COLUMNS)].sum(axis=1)
    out["labelled"] = out["submitted"] >= 2
    out["complete"] = ((out["n_claims"] > 0) & (n_gold >= out["n_claims"])) | ((out["n_claims"] == 0) & out["labelled"])
    # Agreed claims become gold when the second annotator submits: what is left is an open dispute.
    out["n_open"] = (out["n_claims"] - n_gold).clip(lower=0).where(out["labelled"], 0).astype(int)
    return out.reset_index()


def claim_frame(f):
    """One row per claim of the audit: stratum, weight, gold (and its source), A, B (verdicts and who),
    judge (raw, guard). Stratum and weight are the answer's, or in a calibration sample the claim's own."""
    cl = f["claims"].rename(columns={"id": "claim_id"})
    own = [c for c in ("stratum", "weight") if c in cl.columns]  # a calibration sample's claims carry their own
    items = f["items"][["id", "answer_id", "position", *(c for c in ("stratum", "weight") if c not in own)]]
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
    asg = f["assignments"]
    for slot in ("A", "B"):
        who = asg[asg["slot"] == slot].set_index("audit_answer_id")
        cl[f"ann_{slot.lower()}"] = cl["item_id"].map(who["annotator_id"]) if len(who) else None
        cl[f"name_{slot.lower()}"] = cl["item_id"].map(who["name"]) if len(who) else None
    judge = f["judge"] if f["judge"] is not None else pd.DataFrame(columns=JUDGE_COLUMNS)
    judge = judge[JUDGE_COLUMNS].rename(
        columns={"verdict": "judge", "raw_verdict": "judge_raw", "guard_passed": "guard"}
    )
    return cl.merge(judge, on="claim_id", how="left")


def unsampled_strata(design, sampled):
    """(stratum, N_h) of the strata of a design table (Audit.design) drawn with no answer: sampled is the set of
    strata that have one. They hold part of the population although no answer of the audit stands for them."""
    return [
        (str(r["stratum"]), int(r["population"]))
        for r in design or []
        if not r.get("sample") and r.get("population") and str(r["stratum"]) not in sampled
    ]


def audit_unsampled(audit, sampled):
    """unsampled_strata of an audit's design; none for a calibration sample, whose design counts claims (its
    answers all stand in one "calibration" stratum)."""
    return [] if audit.is_calibration else unsampled_strata(audit.design, sampled)


def tables(audit, version):
    """(frames, claims, answers, submitted assignments) for one audit and judge version."""
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
    # An open dispute: a claim of an answer both annotators submitted, still without gold (agreed claims become
    # gold on the second submission). The one rule behind every count and list of open disputes.
    cl["open"] = cl["gold"].isna() & cl["answer_id"].isin(answers.loc[answers["labelled"], "answer_id"])
    both = cl["A"].notna() & cl["B"].notna()
    per = cl.assign(a_bad=both & cl["A"].isin(BAD), b_bad=both & cl["B"].isin(BAD)).groupby("answer_id")
    answers["a_bad"] = answers["answer_id"].map(per["a_bad"].any()).fillna(False).astype(bool)
    answers["b_bad"] = answers["answer_id"].map(per["b_bad"].any()).fillna(False).astype(bool)
    answers["reopened"] = answers["answer_id"].isin(f["reopened"]["answer_id"])
    by_item = subm.groupby("audit_answer_id")["annotator_id"].agg(frozenset) if len(subm) else pd.Series(dtype=object)
    answers["submitted_by"] = [by_item.get(i, frozenset()) for i in answers["item_id"]]
    return f, cl, answers, subm
