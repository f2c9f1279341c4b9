"""Drill-down filters: which claims or answers stand behind a number of the report. Pure (pandas frames
from build.tables in, masks out), so a list is computed from exactly the frames the figure came from and
its row count equals the number on the page.

A verdict class (gold=, judge=) is a verdict, "not_<verdict>" (present and different), "bad" / "not_bad"
(unsupported or contradicted, or present and neither), "any" (present) or "none" (absent)."""

import numpy as np

from annotations.report.stats_common import BAD, VERDICTS

VERDICT_CLASSES = (*VERDICTS, *(f"not_{v}" for v in VERDICTS), "bad", "not_bad", "any", "none")
CLAIM_CHOICES = {
    "gold": VERDICT_CLASSES,
    "judge": VERDICT_CLASSES,
    "a": VERDICTS,
    "b": VERDICTS,
    "either": VERDICTS,
    "disagree": ("annotators", "judge", "a_gold", "b_gold", "annotator"),
    "both": ("1",),
    "guard": ("failed", "passed"),
    "scope": ("complete",),
    "open": ("1",),
    "said": VERDICTS,
}
ANSWER_CHOICES = {
    "gold": ("fail", "pass", "any"),
    "judge": ("fail", "pass", "any"),
    "disagree": ("annotators", "judge"),
    "both": ("1",),
    "labelled": ("both",),
    "bound": ("pass", "fail"),
    "a": ("fail",),
    "b": ("fail",),
}
WORDS = {
    "gold": "gold verdict",
    "judge": "judge verdict",
    "a": "annotator A",
    "b": "annotator B",
    "either": "either annotator said",
    "disagree": "disagreement",
    "both": "labelled by both annotators",
    "guard": "evidence guard",
    "scope": "answers with",
    "stratum": "stratum",
    "open": "open dispute (labelled by both, no gold yet)",
    "said": "the annotator said",
    "annotator": "annotator (user id)",
    "pair": "annotator pair (user ids)",
    "labelled": "labelled by",
    "bound": "fails if every open dispute resolves as",
}


class BadFilter(ValueError):
    pass


def parse(params, choices, dynamic):
    """params: a QueryDict/dict; dynamic: {name: values of this audit} (stratum, annotator, pair).
    Returns {name: value} for the filters given; unknown values raise BadFilter naming the filter and
    what it accepts. Other parameters (page, version) are ignored."""
    out = {}
    for name, allowed in (*choices.items(), *((k, tuple(v)) for k, v in dynamic.items())):
        value = params.get(name, "")
        if value == "":
            continue
        if value not in allowed:
            shown = ", ".join(allowed) if len(allowed) <= 30 else f"{len(allowed)} values of this audit"
            raise BadFilter(f"{name}={value!r} is not a valid filter; {name} must be one of: {shown}.")
        out[name] = value
    return out


def describe(flt):
    return [f"{WORDS[k]}: {'gold complete' if v == 'complete' else 'yes' if v == '1' else v}" for k, v in flt.items()]


def verdict_mask(col, value):
    present = col.notna()
    if value == "any":
        return present
    if value == "none":
        return ~present
    if value == "bad":
        return col.isin(BAD)
    if value == "not_bad":
        return present & ~col.isin(BAD)
    if value.startswith("not_"):
        return present & (col != value[4:])
    return col == value


def claim_mask(cl, answers, flt):
    """cl: build.claim_frame; answers: build.tables' answer table (for scope=complete)."""
    m = cl["claim_id"].notna()
    both = cl["A"].notna() & cl["B"].notna()
    for name in ("gold", "judge"):
        if name in flt:
            m &= verdict_mask(cl[name], flt[name])
    for name, slot in (("a", "A"), ("b", "B")):
        if name in flt:
            m &= cl[slot] == flt[name]
    if "either" in flt:
        m &= both & ((cl["A"] == flt["either"]) | (cl["B"] == flt["either"]))
    if flt.get("disagree") == "annotators":
        m &= both & (cl["A"] != cl["B"])
    if flt.get("disagree") == "judge":
        m &= cl["gold"].notna() & cl["judge"].notna() & (cl["gold"] != cl["judge"])
    if flt.get("disagree") in ("a_gold", "b_gold"):
        slot = cl[flt["disagree"][0].upper()]
        m &= slot.notna() & cl["gold"].notna() & (slot != cl["gold"])
    if "annotator" in flt or flt.get("disagree") == "annotator" or "said" in flt:
        mine = mine_verdict(cl, flt.get("annotator"))
        m &= mine.notna()
        if flt.get("disagree") == "annotator":
            m &= cl["gold"].notna() & (mine != cl["gold"])
        if "said" in flt:
            m &= mine == flt["said"]
    if "pair" in flt:
        x, y = (int(v) for v in flt["pair"].split("-"))
        m &= both & (((cl["ann_a"] == x) & (cl["ann_b"] == y)) | ((cl["ann_a"] == y) & (cl["ann_b"] == x)))
    if "open" in flt:
        m &= cl["open"]
    if "both" in flt:
        m &= both
    if "guard" in flt:
        want = flt["guard"] == "passed"  # None/NaN: no evidence needed, neither passed nor failed
        m &= cl["guard"].map(lambda g: isinstance(g, (bool, np.bool_)) and bool(g) == want).astype(bool)
    if "stratum" in flt:
        m &= cl["stratum"] == flt["stratum"]
    if "scope" in flt:
        m &= cl["answer_id"].isin(answers.loc[answers["complete"], "answer_id"])
    return m


def mine_verdict(cl, annotator):
    """The verdict the given annotator (user id as text; None: nobody) gave each claim, NaN if none."""
    if annotator is None:
        return cl["A"].where(False)
    who = int(annotator)
    return cl["A"].where(cl["ann_a"] == who).fillna(cl["B"].where(cl["ann_b"] == who))


def answer_flags(cl, answers):
    """Per answer, as the report computes them: gold fail (complete gold only), judged (complete gold and a
    verdict on every claim) and judge fail, annotator pass/fail over the claims both labelled."""
    bad = cl.assign(
        gbad=cl["gold"].isin(BAD),
        jbad=cl["judge"].isin(BAD),
        jmiss=cl["judge"].isna(),
        both=cl["A"].notna() & cl["B"].notna(),
    )
    bad = bad.assign(abad=bad["both"] & bad["A"].isin(BAD), bbad=bad["both"] & bad["B"].isin(BAD))
    per = bad.groupby("answer_id")[["gbad", "jbad", "jmiss", "both", "abad", "bbad"]].any()
    a = answers.join(per, on="answer_id")
    for c in per.columns:
        a[c] = a[c].fillna(False).astype(bool)
    a["judged"] = a["complete"] & ~a["jmiss"]
    return a


def answer_mask(a, flt):
    """a: answer_flags(...)."""
    m = a["answer_id"].notna()
    for name, done, failed in (("gold", a["complete"], a["gbad"]), ("judge", a["judged"], a["jbad"])):
        if name in flt:
            m &= done & {"fail": failed, "pass": ~failed, "any": done}[flt[name]]
    if flt.get("disagree") == "annotators":
        m &= a["both"] & (a["abad"] != a["bbad"])
    if flt.get("disagree") == "judge":
        m &= a["judged"] & (a["jbad"] != a["gbad"])
    if "both" in flt:
        m &= a["both"]
    if "labelled" in flt:
        m &= a["labelled"]
    if "bound" in flt:
        m &= a["labelled"] & (a["gbad"] | ((a["n_open"] > 0) & (flt["bound"] == "fail")))
    for name, col in (("a", "a_bad"), ("b", "b_bad")):
        if name in flt:
            m &= a["labelled"] & a[col]
    if "annotator" in flt:
        m &= a["submitted_by"].map(lambda s: int(flt["annotator"]) in s).astype(bool)
    if "stratum" in flt:
        m &= a["stratum"] == flt["stratum"]
    return m
