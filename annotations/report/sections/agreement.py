"""Inter-annotator agreement section (annotator A against B), with the links behind each count."""

import numpy as np

from annotations.report.stats_agreement import agreement, reliability_reading
from annotations.report.stats_common import BAD, VERDICTS, clean

PASS_FAIL = ["fail", "pass"]


def pass_fail(flags):
    return ["fail" if x else "pass" for x in flags]


def _counts(figure, disagree_url, n_url):
    return figure | {"disagree": figure["n"] - figure["agree"], "disagree_url": disagree_url, "n_url": n_url}


def build(x):
    cl, L = x.cl, x.links
    both = cl[cl["A"].notna() & cl["B"].notna()]
    claims = agreement(
        both["answer_id"].tolist(), both["A"].tolist(), both["B"].tolist(), VERDICTS, resampler=x.resampler
    )
    per = both.assign(fa=both["A"].isin(BAD), fb=both["B"].isin(BAD)).groupby("answer_id")[["fa", "fb"]].any()
    answers = agreement(
        per.index.tolist(),
        pass_fail(per["fa"]),
        pass_fail(per["fb"]),
        PASS_FAIL,
        resampler=x.resampler,
    )
    t = np.asarray(claims["table"], dtype=int)  # A rows, B columns
    specific = [
        {
            "verdict": v,
            "stat": claims["specific"][v],
            "both": int(t[i, i]),
            "either": int(t[i].sum() + t[:, i].sum() - t[i, i]),
            "both_url": L.claims(a=v, b=v),
            "either_url": L.claims(either=v),
        }
        for i, v in enumerate(VERDICTS)
    ]
    return clean(
        {
            "claims": _counts(claims, L.claims(disagree="annotators"), L.claims(both="1")),
            "answers": _counts(answers, L.answers(disagree="annotators"), L.answers(both="1")),
            "reading": reliability_reading(claims["krippendorff_alpha"]),
            "specific_rows": specific,
        }
    )
