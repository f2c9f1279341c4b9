"""Judge versus gold section: confusion matrix, agreement, precision/recall, answer level and the
noise floor (judge against gold next to each annotator against gold), with the links behind each count;
and the version's latest run over these answers when it is not done (the figures are then partial)."""

import numpy as np
import pandas as pd
from django.conf import settings
from django.urls import reverse

from annotations.report import selectors
from annotations.report.sections.agreement import PASS_FAIL, pass_fail
from annotations.report.stats_agreement import agreement, table_from_pairs
from annotations.report.stats_common import BAD, VERDICTS, clean, not_computable, stat, withheld
from annotations.report.stats_faithfulness import uncovered
from annotations.report.stats_judge import (
    bad_claim_table,
    classification_summary,
    domain_weights,
    precision_recall,
    weighted_table,
)
from annotations.report.stats_noise import noise_floor

JUDGE_ROWS = (*VERDICTS, "none")


def _matrix(g, L, why=None):
    """Counts and population-weighted sums per cell; the weighted sums are withheld (None, and `weighted_why`)
    with the section's weighted figures: they are the same estimate, cell by cell."""
    counts = pd.crosstab(g["judge"], g["gold"]).reindex(index=JUDGE_ROWS, columns=VERDICTS, fill_value=0)
    wsum = pd.crosstab(g["judge"], g["gold"], values=g["weight"], aggfunc="sum") if len(g) else counts * 0.0
    wsum = wsum.reindex(index=JUDGE_ROWS, columns=VERDICTS).fillna(0.0)
    return {
        "columns": list(VERDICTS),
        "rows": [
            {
                "judge": r,
                "cells": [
                    {
                        "gold": c,
                        "count": int(counts.loc[r, c]),
                        "weighted": None if why else float(wsum.loc[r, c]),
                        "url": L.claims(judge=r, gold=c),
                    }
                    for c in VERDICTS
                ],
            }
            for r in JUDGE_ROWS
        ],
        "weighted_why": f"not computable: {why}" if why else None,
    }


def _prf_rows(t, sampled, weighted, L):
    rows = []
    for name, table, i, yes, no in [("bad", bad_claim_table(t, VERDICTS).astype(int), 0, "bad", "not_bad")] + [
        (v, t, i, v, f"not_{v}") for i, v in enumerate(VERDICTS)
    ]:
        tp, said, true = int(table[i, i]), int(table[i].sum()), int(table[:, i].sum())
        src = (lambda s: s["bad_claim"]) if name == "bad" else (lambda s, n=name: s["per_verdict"][n])
        rows.append(
            {
                "class": name,
                "tp": tp,
                "judge_total": said,
                "gold_total": true,
                "fp": said - tp,
                "fn": true - tp,
                "fp_url": L.claims(judge=yes, gold=no),
                "judge_total_url": L.claims(judge=yes, gold="any"),
                "fn_url": L.claims(gold=yes, judge=no),
                "gold_total_url": L.claims(gold=yes, judge="any"),
                "sampled": src(sampled),
                "weighted": src(weighted),
            }
        )
    return rows


def _population(x, key):
    """(units, N_h by stratum) behind the population-weighted figures: the sampled answers and their strata's
    populations, or (key "claim_id") a calibration sample's claims, whose own design weights sum to N_h."""
    if key == "claim_id":
        return x.cl, x.cl.groupby("stratum")["weight"].sum()
    return x.answers, x.answers.groupby("stratum")["stratum_population"].first()


def _seen(x, ids, key):
    """Units per stratum whose data are in: those among ids, and answers without a claim labelled by both (every
    claim they have, none, is there: they are no missing data)."""
    units = _population(x, key)[0]
    seen = units[key].isin(set(ids))
    if key == "answer_id":
        seen |= (units["n_claims"] == 0) & units["complete"].astype(bool)
    return units[seen].groupby("stratum").size()


def _weighted(x, rows, key="answer_id"):
    """rows with their weight recomputed over the units with data (stats_judge.domain_weights)."""
    N, seen = _population(x, key)[1], _seen(x, rows[key], key)
    return rows.assign(weight=domain_weights(rows["stratum"], N, seen) if len(rows) else [])


def _uncovered(x, ids, what, key="answer_id"):
    """Why the population-weighted figures over these units (answer ids; claim ids of a calibration sample, whose
    claims carry their own stratum and weight) are not computable: a large stratum has none of them. Weighting the
    other strata alone would read as the population's figure. None when they cover it."""
    N, seen = _population(x, key)[1], _seen(x, ids, key)
    groups = [(h, float(n), int(seen.get(h, 0))) for h, n in N.items()]
    return uncovered(groups + [(h, n, 0) for h, n in x.unsampled], settings.REPORT_MIN_STRATUM_SHARE, what)


def _answers(cl, answers, x, L):
    per = cl.assign(jbad=cl["judge"].isin(BAD), jmiss=cl["judge"].isna()).groupby("answer_id")[["jbad", "jmiss"]].any()
    ans = answers[answers["complete"]].join(per, on="answer_id")
    ans = _weighted(x, ans[~ans["jmiss"].fillna(False).astype(bool)])
    ans_j, ans_g = pass_fail(ans["jbad"].fillna(False)), pass_fail(ans["n_contradicted"] + ans["n_unsupported"] > 0)
    ans_w = weighted_table(ans_j, ans_g, ans["weight"], PASS_FAIL)
    a = agreement(ans["answer_id"].tolist(), ans_j, ans_g, PASS_FAIL, resampler=x.resampler)
    why = _uncovered(x, ans["answer_id"], "judged answer with complete gold")
    weighted = stat(np.trace(ans_w) / ans_w.sum()) if ans_w.sum() else not_computable("no answers")
    return a | {
        "fail_detection": precision_recall(table_from_pairs(ans_j, ans_g, PASS_FAIL), PASS_FAIL)["fail"],
        "weighted_accuracy": not_computable(why) if why else weighted,
        "disagree": a["n"] - a["agree"],
        "disagree_url": L.answers(disagree="judge"),
        "n_url": L.answers(judge="any"),
    }


def _waiting(cl):
    """Judged claims without gold: the open disputes (frames.tables' rule) and the others."""
    waiting = cl["judge"].notna() & cl["gold"].isna()
    disputed = int((waiting & cl["open"]).sum())
    return {"open_disputes": disputed, "not_labelled": int(waiting.sum()) - disputed}


def _noise(s, x, L):
    noise = s[s["A"].notna() & s["B"].notna()]
    waiting = _waiting(x.cl)
    out = noise_floor(
        noise["answer_id"].tolist(),
        noise["judge"].tolist(),
        noise["gold"].tolist(),
        noise["A"].tolist(),
        noise["B"].tolist(),
        adjudicated=(noise["gold_source"] == "adjudicated").tolist(),
        open_disputes=waiting["open_disputes"],
        resampler=x.resampler,
    )
    same = {"judge": "any", "gold": "any", "both": "1"}
    urls = {"judge": "judge", "A": "a_gold", "B": "b_gold", "annotators": "annotators"}
    for key, disagree in urls.items():
        out[key] = out[key] | {"disagree_url": L.claims(**same, disagree=disagree)}
    return out | waiting | {"n_url": L.claims(**same)}


def _unfinished_run(x):
    """The latest run of this version over the audit's answers, if it is not done: until it is, claims it has
    not reached yet have no verdict here, so every figure of the section covers only part of the claims."""
    run = selectors.judge_run_behind(x.audit, x.version["id"])
    if run is None or run.status == run.Status.DONE:
        return None
    return {
        "id": run.id,
        "status": run.status,
        "status_label": run.get_status_display(),
        "active": run.is_active,
        "answers_done": run.answers_done,
        "answers_total": run.answers_total,
        "claims_done": run.claims_done,
        "message": run.message,
        "url": reverse("judge_run", args=[run.id]),
        "audit_claims": len(x.cl),
        "audit_claims_judged": int(x.cl["judge"].notna().sum()),
    }


def build(x):
    L = x.links
    if x.version is None:
        return {"versions": x.versions, "version": None, "why": "not computable: no judge verdicts on this audit"}
    cl = x.cl
    key = "claim_id" if x.audit.is_calibration else "answer_id"
    g = _weighted(x, cl[cl["gold"].notna()].assign(judge=lambda d: d["judge"].fillna("none")), key)
    s = _weighted(x, g[g["judge"] != "none"], key)
    guard = x.f["judge"]["guard_passed"]
    claims = agreement(
        s["answer_id"].tolist(), s["judge"].tolist(), s["gold"].tolist(), VERDICTS, resampler=x.resampler
    )
    t = np.asarray(claims["table"], dtype=int)  # judge rows, gold columns
    sampled = classification_summary(table_from_pairs(s["judge"], s["gold"], VERDICTS), VERDICTS)
    weighted = classification_summary(weighted_table(s["judge"], s["gold"], s["weight"], VERDICTS), VERDICTS)
    if why := _uncovered(x, s[key], "judged claim with gold", key):
        weighted = withheld(weighted, why)
    return clean(
        {
            "versions": x.versions,
            "version": x.version,
            "unfinished_run": _unfinished_run(x),
            "matrix": _matrix(g, L, why),
            "without_verdict": int((g["judge"] == "none").sum()),
            "without_verdict_url": L.claims(judge="none", gold="any"),
            "awaiting_gold": int((cl["judge"].notna() & cl["gold"].isna()).sum()),
            "awaiting_gold_url": L.claims(judge="any", gold="none"),
            "guard_failed": int((guard == False).sum()),  # noqa: E712  (None: no evidence needed)
            "guard_failed_url": L.claims(guard="failed"),
            "numeric_flagged": int((x.f["judge"]["numeric_passed"] == False).sum()),  # noqa: E712  (None: not applicable)
            "claims": claims
            | {
                "disagree": claims["n"] - claims["agree"],
                "disagree_url": L.claims(disagree="judge"),
                "n_url": L.claims(judge="any", gold="any"),
            },
            "sampled": sampled,
            "weighted": weighted,
            "prf_rows": _prf_rows(t, sampled, weighted, L),
            "answers": _answers(cl, x.answers, x, L),
            "noise_floor": _noise(s, x, L),
        }
    )
