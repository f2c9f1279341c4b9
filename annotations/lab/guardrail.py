"""The guardrail check: does a candidate (a dataset, or a metadata value such as meta.pipeline=v2, or a nested
one such as meta.run.pipeline=v2) fail more answers than its baseline on the answer-level verdict of one judge
version? Matched on the same questions where the two groups share questions. A significant regression (the
z-test, or the exact permutation test when an expected count is below 10) blocks."""

import re

from annotations.lab import stats
from audit.judge.verdicts import answer_fails
from audit.models import Answer, Dataset
from audit.sampling.population import meta_path_ok, meta_text

GROUP = re.compile(r"(?P<dataset>[^:]+?)(?::meta\.(?P<key>[A-Za-z0-9_.-]+)=(?P<value>.*))?")
ALPHA = 0.05


class GuardrailError(ValueError):
    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def group_answers(text, field):
    """'DATASET' or 'DATASET:meta.FIELD=VALUE' -> the answers of that group (a queryset)."""
    m = GROUP.fullmatch((text or "").strip())
    if not m:
        raise GuardrailError(field, "use DATASET or DATASET:meta.FIELD=VALUE")
    dataset = Dataset.objects.filter(name=m["dataset"]).first()
    if dataset is None:
        raise GuardrailError(field, f"no dataset named {m['dataset']!r}")
    qs = Answer.objects.filter(dataset=dataset)
    if not m["key"]:
        return qs
    if not meta_path_ok(m["key"]):
        raise GuardrailError(field, f"{m['key']!r} is not a metadata field or path (meta.FIELD, meta.FIELD.KEY)")
    return qs.alias(_meta=meta_text(m["key"])).filter(_meta=m["value"])  # as text, like the strata


def matched(base, cand):
    """Restrict both groups to the questions they share, when they share any."""
    shared = set(base.values_list("question", flat=True)) & set(cand.values_list("question", flat=True))
    if not shared:
        return base, cand, False
    return base.filter(question__in=shared), cand.filter(question__in=shared), True


def side(fails):
    n, x = len(fails), sum(fails.values())
    return {"n": n, "fails": x, "rate": x / n if n else None, "ci": stats.wilson(x, n)}


def guardrail_check(baseline, candidate, version, *, policy="strict", alpha=ALPHA):
    base, cand = group_answers(baseline, "baseline"), group_answers(candidate, "candidate")
    base, cand, is_matched = matched(base, cand)
    b, c = side(answer_fails(version, base, policy)), side(answer_fails(version, cand, policy))
    result = {"baseline": b, "candidate": c, "matched_on_questions": is_matched, "alpha": alpha, "policy": policy}
    if not b["n"] or not c["n"]:
        return result | {"test": None, "blocks": False, "why": "not computable: a group has no judged answers"}
    test = stats.compare_proportions(c["fails"], c["n"], b["fails"], b["n"])
    worse = c["rate"] > b["rate"]
    blocks = worse and test["p"] < alpha
    why = (
        f"candidate fails more answers ({c['rate']:.3f} vs {b['rate']:.3f}), p = {test['p']:.4f} < {alpha}"
        if blocks
        else f"no significant regression (p = {test['p']:.4f}{', candidate not worse' if not worse else ''})"
    )
    return result | {"test": test, "blocks": blocks, "why": why, "difference": c["rate"] - b["rate"]}
