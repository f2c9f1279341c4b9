"""Drill-down links next to the report's counts (for the page and the JSON download): each linked count
is the row count of the list it opens, and each count is shown beside its denominator, also linked.
The counts added here derive from tables the report already holds (no new statistics, no queries)."""

from urllib.parse import urlencode

import numpy as np
from django.urls import reverse

from annotations.report.stats_common import VERDICTS
from annotations.report.stats_judge import bad_claim_table


def add_links(r, audit_id):
    version = r["judge"].get("version")

    def url(name, **q):
        q |= {"version": version["id"]} if version else {}
        return f"{reverse(name, args=[audit_id])}?{urlencode(q)}"

    claims, answers = (lambda **q: url("report_claims", **q)), (lambda **q: url("report_answers", **q))
    _faithfulness(r["faithfulness"], claims, answers)
    _agreement(r["agreement"], claims, answers)
    if version:
        _judge(r["judge"], claims, answers)
    return r


def _faithfulness(f, claims, answers):
    f["fails_url"], f["answers_url"] = answers(gold="fail"), answers(gold="any")
    f["counts_urls"] = {f"n_{v}": claims(gold=v, scope="complete") for v in VERDICTS} | {
        "scored": claims(gold="not_non_assertive", scope="complete")
    }
    for s in f["strata"]:
        name = s["stratum"]
        s["fails"] = s["fail_rate"].get("x", 0)
        s |= {
            "answers_url": answers(gold="any", stratum=name),
            "fails_url": answers(gold="fail", stratum=name),
            "contradicted_url": claims(gold="contradicted", scope="complete", stratum=name),
            "unsupported_url": claims(gold="unsupported", scope="complete", stratum=name),
        }


def _counts(figure, disagree_url, n_url):
    figure |= {"disagree": figure["n"] - figure["agree"], "disagree_url": disagree_url, "n_url": n_url}


def _agreement(a, claims, answers):
    _counts(a["claims"], claims(disagree="annotators"), claims(both="1"))
    _counts(a["answers"], answers(disagree="annotators"), answers(both="1"))
    t = np.asarray(a["claims"]["table"], dtype=int)  # A rows, B columns
    a["specific_rows"] = [
        {
            "verdict": v,
            "stat": a["claims"]["specific"][v],
            "both": int(t[i, i]),
            "either": int(t[i].sum() + t[:, i].sum() - t[i, i]),
            "both_url": claims(a=v, b=v),
            "either_url": claims(either=v),
        }
        for i, v in enumerate(VERDICTS)
    ]


def _prf_row(name, t, i, claims, yes, no):
    tp, said, true = int(t[i, i]), int(t[i].sum()), int(t[:, i].sum())
    return {
        "class": name,
        "tp": tp,
        "judge_total": said,
        "gold_total": true,
        "fp": said - tp,
        "fn": true - tp,
        "fp_url": claims(judge=yes, gold=no),
        "judge_total_url": claims(judge=yes, gold="any"),
        "fn_url": claims(gold=yes, judge=no),
        "gold_total_url": claims(gold=yes, judge="any"),
    }


def _judge(j, claims, answers):
    _counts(j["claims"], claims(disagree="judge"), claims(judge="any", gold="any"))
    _counts(j["answers"], answers(disagree="judge"), answers(judge="any"))
    j["noise_floor"]["n_url"] = claims(judge="any", gold="any", both="1")
    j |= {
        "guard_failed_url": claims(guard="failed"),
        "without_verdict_url": claims(judge="none", gold="any"),
        "awaiting_gold_url": claims(judge="any", gold="none"),
    }
    for row in j["matrix"]["rows"]:
        for cell in row["cells"]:
            cell["url"] = claims(judge=row["judge"], gold=cell["gold"])
    t = np.asarray(j["claims"]["table"], dtype=int)  # judge rows, gold columns
    rows = [_prf_row("bad", bad_claim_table(t, VERDICTS).astype(int), 0, claims, "bad", "not_bad")]
    rows += [_prf_row(v, t, i, claims, v, f"not_{v}") for i, v in enumerate(VERDICTS)]
    for row in rows:
        src = "bad_claim" if row["class"] == "bad" else None
        row["sampled"] = j["sampled"][src] if src else j["sampled"]["per_verdict"][row["class"]]
        row["weighted"] = j["weighted"][src] if src else j["weighted"]["per_verdict"][row["class"]]
    j["prf_rows"] = rows
