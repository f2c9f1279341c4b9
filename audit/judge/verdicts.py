"""Reads: the per-answer verdict of any judge version, whatever its level. An answer-level (rubric) version
fails an answer with score 0; a claim-level version fails it when a claim verdict fails under the policy, and
passes it only once it has a verdict on every claim of the answer (a run stopped part-way, or an item that
failed, leaves an answer it has not judged, never one that passes)."""

from django.db.models import Count

from audit.models import AnswerVerdict, Claim, JudgeVerdict
from audit.policy import FAILING


def answer_fails(version, answers, policy="strict"):
    """{answer_id: True when it fails} for the answers (a queryset) that the version has judged."""
    if version.level == "answer":
        rows = AnswerVerdict.objects.filter(judge_version=version, answer__in=answers.values("id"))
        return {a: score == 0 for a, score in rows.values_list("answer_id", "score")}
    seen, failing = {}, FAILING[policy]
    rows = JudgeVerdict.objects.filter(judge_version=version, claim__answer__in=answers.values("id"))
    for answer_id, verdict in rows.values_list("claim__answer_id", "verdict"):
        n, fails = seen.get(answer_id, (0, False))
        seen[answer_id] = (n + 1, fails or verdict in failing)
    claims = Claim.objects.filter(answer__in=answers.values("id")).values_list("answer_id").annotate(n=Count("id"))
    counts = dict(claims.order_by())
    return {a: fails for a, (n, fails) in seen.items() if fails or n >= counts.get(a, 0)}
