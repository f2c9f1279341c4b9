"""The claims or answers behind a number of the report: the same frames as the figures (build.tables),
filtered by filters.py. Constant query count: judge versions, the audit's frames, one page of texts."""

import math

from annotations.report import filters, selectors
from annotations.report.frames import audit_unsampled, pick_version, tables

NEEDS_JUDGE = ("judge", "guard")


def _frames(audit, params):
    version = pick_version(selectors.judge_versions(audit), params.get("version"))
    _, cl, answers, _ = tables(audit, version)
    return version, cl, answers


def _dynamic(cl, answers, audit):
    """The values of this audit that stratum=, annotator= and pair= accept (a stratum of the design drawn
    with no answer too: the report lists it, and the list behind its counts is empty)."""
    ids = sorted({int(x) for x in (*cl["ann_a"].dropna(), *cl["ann_b"].dropna())})
    pairs = {f"{min(x, y)}-{max(x, y)}" for x, y in cl[["ann_a", "ann_b"]].dropna().astype(int).itertuples(index=False)}
    strata = [*answers["stratum"].unique(), *(s for s, _ in audit_unsampled(audit, set(answers["stratum"])))]
    return {"stratum": strata, "annotator": [str(i) for i in ids], "pair": sorted(pairs)}


def _check_judge(flt, version):
    if version is None and (any(k in flt for k in NEEDS_JUDGE) or flt.get("disagree") == "judge"):
        raise filters.BadFilter("This audit has no judge verdicts, so judge filters do not apply.")


def claims_behind(audit, params):
    version, cl, answers = _frames(audit, params)
    flt = filters.parse(params, filters.CLAIM_CHOICES, _dynamic(cl, answers, audit))
    _check_judge(flt, version)
    rows = cl[filters.claim_mask(cl, answers, flt)].sort_values(["item_position", "position"])
    return {"version": version, "filters": flt, "rows": rows}


def answers_behind(audit, params):
    version, cl, answers = _frames(audit, params)
    flt = filters.parse(params, filters.ANSWER_CHOICES, _dynamic(cl, answers, audit))
    _check_judge(flt, version)
    a = filters.answer_flags(cl, answers)
    return {"version": version, "filters": flt, "rows": a[filters.answer_mask(a, flt)].sort_values("position")}


def _plain(v):
    return None if isinstance(v, float) and math.isnan(v) else v


def page_records(rows, texts, key):
    """rows: one page of a filtered frame -> dicts for the template, with their texts joined on `key`."""
    out = []
    for r in rows.to_dict("records"):
        r = {k: _plain(v) for k, v in r.items()}
        out.append(r | {"t": texts.get(r[key], {})})
    return out
