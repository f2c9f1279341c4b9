"""Faithfulness section: the figures of stats_answers with the links behind each count. A calibration sample
(claims drawn, not answers) gets no answer-level figure, only what keeps its gold provisional."""

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


# Hidden rather than labelled: a calibration sample draws claims stratified by the judge's verdict, so its
# "answers" are only those holding a sampled claim, with gold on the sampled claims alone. A rate over them is
# not the population's, nor even those answers' own verdicts (their other claims were never labelled), and the
# verdict strata over-represent the judge's rare verdicts; under any caption a lead reads such a rate as the
# weekly fail rate. The calibration section's claim-level figures, weighted back, are the figures it supports.
CALIBRATION_WHY = (
    "Not shown for a calibration sample: it draws claims (stratified by the judge's verdict), not answers, so its "
    "answers are only those holding a sampled claim, and only the sampled claims have gold. No answer-level fail "
    "rate over them estimates the population's, or even those answers'. The calibration figures below are "
    "claim-level, weighted back by inverse inclusion probability."
)
PENDING = ("label", "open_disputes", "answers", "not_labelled", "reopened")


def _calibration(f, L):
    p = f["provisional"]
    pending = {k: p[k] for k in PENDING} | {"open_url": L.claims(open="1")} if p else None
    return {"headline": f["headline"], "complete": f["complete"], "why": CALIBRATION_WHY, "strata": []} | {
        "provisional": pending
    }


def build(x):
    min_share = settings.REPORT_MIN_STRATUM_SHARE
    f = faithfulness(x.answers, seed=x.seed, min_share=min_share, resampler=x.resampler, unsampled=x.unsampled)
    L = x.links
    if x.audit.is_calibration:
        return clean(_calibration(f, L))
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
