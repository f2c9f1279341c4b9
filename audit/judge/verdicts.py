"""Reads: the per-answer verdict of any judge version, whatever its level. An answer-level (rubric) version
fails an answer with score 0; a claim-level version fails it when a claim verdict fails under the policy."""

from audit.models import AnswerVerdict, JudgeVerdict
from audit.policy import FAILING


def answer_fails(version, answers, policy="strict"):
    """{answer_id: True when it fails} for the answers (a queryset) that the version has judged."""
    if version.level == "answer":
        rows = AnswerVerdict.objects.filter(judge_version=version, answer__in=answers.values("id"))
        return {a: score == 0 for a, score in rows.values_list("answer_id", "score")}
    out = {}
    failing = FAILING[policy]
    rows = JudgeVerdict.objects.filter(judge_version=version, claim__answer__in=answers.values("id"))
    for answer_id, verdict in rows.values_list("claim__answer_id", "verdict"):
        out[answer_id] = out.get(answer_id, False) or verdict in failing
    return out
