"""Over time: every audit of the dataset summarised on its population (weighted fail rate with its
design-based variance), the sample rate beside it, and the change against the previous audit."""

from django.conf import settings

from annotations.report import selectors
from annotations.report.frames import answer_gold_table, unsampled_strata
from annotations.report.links import Links
from annotations.report.stats_answers import provisional
from annotations.report.stats_common import clean
from annotations.report.stats_faithfulness import (
    COMPLETE,
    answer_outcomes,
    strata_groups,
    stratified_proportion,
    wilson,
)
from annotations.report.stats_trend import fail_rate_series


def summary(table, min_share, unsampled=()):
    """One audit's answers -> the trend's figures and the comparison input (stats_trend.compare).
    unsampled: (stratum, N_h) of its design's strata drawn with no answer."""
    f = answer_outcomes(table.reset_index(drop=True))
    done = f["complete"].astype(bool)
    groups = strata_groups(f, f["fail"], done, unsampled)
    weighted = stratified_proportion(groups, min_share, COMPLETE)
    strata = [(str(name), int(N), len(v), int(v.sum())) for name, N, v in groups if len(v)]
    prov = None if done.all() else provisional(f.assign(a_bad=False, b_bad=False), min_share, unsampled)
    if prov:
        del prov["annotators"]  # this table has no annotator's labels: their rates are on the faithfulness section
    return {
        "fails": int(f.loc[done, "fail"].sum()),
        "n": int(done.sum()),
        "sampled": wilson(int(f.loc[done, "fail"].sum()), int(done.sum())),
        "weighted": weighted,
        "provisional": prov,
        "compare": {
            "value": weighted["value"],
            "variance": weighted.get("variance"),
            "strata": strata,
            "fails": int(f.loc[done, "fail"].sum()),
            "n": int(done.sum()),
            "provisional": prov["label"] if prov else None,
            "labelled": int(f["labelled"].sum()),
        },
    }


def _plot(s):
    """What the chart draws: the weighted rate (filled), or for a provisional audit the range between
    "every open dispute passes" and "every open dispute fails" (hollow)."""
    p = s["provisional"]
    if p is None:
        return {"value": s["weighted"]["value"], "ci": s["weighted"]["ci"], "hollow": False}
    lo, hi = p["weighted_if_pass"], p["weighted_if_fail"]
    if lo["value"] is None or hi["value"] is None:
        return {"value": None, "ci": None, "hollow": True}
    ci = [lo["ci"][0], hi["ci"][1]] if lo["ci"] and hi["ci"] else None
    return {"value": (lo["value"] + hi["value"]) / 2, "ci": ci, "hollow": True, "low": lo["value"], "high": hi["value"]}


def build(x):
    d = selectors.dataset_gold_counts(x.audit.dataset_id)
    table = answer_gold_table(d["answers"], d["gold"], d["submitted"], ["audit_id", "answer_id"])
    reopened = set(zip(d["reopened"]["audit_id"], d["reopened"]["answer_id"], strict=True))
    table["reopened"] = [k in reopened for k in zip(table["audit_id"], table["answer_id"], strict=True)]
    min_share = settings.REPORT_MIN_STRATUM_SHARE
    points = []
    for a in d["audits"].itertuples():
        rows = table[table["audit_id"] == a.id]
        s = summary(rows, min_share, unsampled_strata(a.design, set(rows["stratum"])))
        L = Links(int(a.id), None)
        points.append(
            {
                "audit_id": int(a.id),
                "name": a.name,
                "created_at": a.created_at.isoformat(),
                "status": a.status,
                "current": a.id == x.audit.id,
                "fails_url": L.answers(gold="fail"),
                "n_url": L.answers(gold="any"),
                "plot": _plot(s),
                "summary": s.pop("compare"),
            }
            | s
        )
    series = fail_rate_series(points, seed=x.seed)
    for p in series:
        p.pop("summary")
    current = next((p for p in series if p["current"]), None)
    why = "a calibration sample draws claims, not answers: it has no answer-level fail rate to compare"
    missing = {"value": None, "why": f"not computable: {why if x.audit.is_calibration else 'audit not found'}"}
    change = current["change"] if current else missing
    return clean({"points": series, "change": change, "regression": bool(change.get("regression"))})
