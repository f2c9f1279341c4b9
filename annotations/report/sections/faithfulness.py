"""Faithfulness section: the figures of stats_answers with the links behind each count."""

from django.conf import settings

from annotations.report.stats_answers import faithfulness
from annotations.report.stats_common import VERDICTS, clean


def _strata(strata, L):
    return [
        s
        | {
            "sampled_url": L.answers(stratum=s["stratum"]),
            "answers_url": L.answers(gold="any", stratum=s["stratum"]),
            "fails_url": L.answers(gold="fail", stratum=s["stratum"]),
            "contradicted_url": L.claims(gold="contradicted", scope="complete", stratum=s["stratum"]),
            "unsupported_url": L.claims(gold="unsupported", scope="complete", stratum=s["stratum"]),
        }
        for s in strata
    ]


def _provisional(p, L):
    if p is None:
        return None
    return p | {
        "open_url": L.claims(open="1"),
        "answers_url": L.answers(labelled="both"),
        "if_pass_url": L.answers(bound="pass"),
        "if_fail_url": L.answers(bound="fail"),
        "annotators": [a | {"fails_url": L.answers(**{a["slot"].lower(): "fail"})} for a in p["annotators"]],
    }


def _chart_rows(f):
    rows = []
    if f["provisional"] and f["headline"] == "provisional":
        p = f["provisional"]
        rows += [
            {"label": "provisional: if open disputes pass", **p["if_pass"]},
            {"label": "provisional: if open disputes fail", **p["if_fail"]},
        ]
    rows += [
        {"label": "complete gold (sampled)", **f["fail_rate"]},
        {"label": "complete gold, population-weighted", **f["weighted"]["fail_rate"]},
    ]
    return rows + [{"label": f"stratum {s['stratum']}", **s["fail_rate"]} for s in f["strata"]]


def build(x):
    min_share = settings.REPORT_MIN_STRATUM_SHARE
    f = faithfulness(x.answers, seed=x.seed, min_share=min_share, resampler=x.resampler, unsampled=x.unsampled)
    L = x.links
    return clean(
        f
        | {
            "sampled_url": L.answers(),
            "fails_url": L.answers(gold="fail"),
            "answers_url": L.answers(gold="any"),
            "counts_urls": {f"n_{v}": L.claims(gold=v, scope="complete") for v in VERDICTS}
            | {"scored": L.claims(gold="not_non_assertive", scope="complete")},
            "strata": _strata(f["strata"], L),
            "provisional": _provisional(f["provisional"], L),
            "chart_rows": _chart_rows(f),
        }
    )
