"""Effort and per-annotator figures: reviewer hours, and for each annotator claims and answers
labelled, median time, agreement with gold overall and per verdict; pairwise agreement of every pair
that shared answers. `only` restricts the figures to one annotator (an annotator sees only their own)."""

import pandas as pd

from annotations.report.stats_annotators import annotator_rows, pair_rows
from annotations.report.stats_common import clean
from annotations.report.stats_trend import effort


def labels_long(cl):
    """One row per label: who gave it, on which claim and answer, and the claim's gold."""
    parts = []
    for slot in ("A", "B"):
        s = slot.lower()
        g = cl[cl[slot].notna()]
        parts.append(
            pd.DataFrame(
                {
                    "annotator": g[f"ann_{s}"],
                    "claim_id": g["claim_id"],
                    "answer_id": g["answer_id"],
                    "verdict": g[slot],
                    "gold": g["gold"],
                    "gold_source": g["gold_source"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def annotators(x, only=None):
    subm = x.subm.merge(x.f["items"][["id", "answer_id"]], left_on="audit_answer_id", right_on="id")
    subm = subm.rename(columns={"annotator_id": "annotator"})
    if only is not None:
        subm = subm[subm["annotator"] == only]
    rows = annotator_rows(labels_long(x.cl), subm)
    L = x.links
    for r in rows:
        a = r["annotator"]
        r |= {
            "claims_url": L.claims(annotator=a),
            "answers_url": L.answers(annotator=a),
            "vs_gold_url": L.claims(annotator=a, gold="any"),
            "disagree_url": L.claims(annotator=a, disagree="annotator"),
        }
        for v in r["per_verdict"]:
            v |= {
                "said_url": L.claims(annotator=a, said=v["verdict"], gold="any"),
                "gold_url": L.claims(annotator=a, gold=v["verdict"]),
            }
    both = x.cl[x.cl["A"].notna() & x.cl["B"].notna() & x.cl["ann_a"].notna() & x.cl["ann_b"].notna()]
    if only is not None:
        both = both[(both["ann_a"] == only) | (both["ann_b"] == only)]
    pairs = [
        p
        | {
            "n_url": L.claims(pair=f"{p['first']}-{p['second']}"),
            "disagree_url": L.claims(pair=f"{p['first']}-{p['second']}", disagree="annotators"),
        }
        for p in pair_rows(both)
    ]
    return rows, pairs


def build(x):
    rows, pairs = annotators(x)
    return clean(effort(x.subm["active_seconds"].to_numpy(), x.audit.size) | {"annotators": rows, "pairs": pairs})
