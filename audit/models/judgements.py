from django.db import models


class AnswerJudgement(models.Model):
    """The judge's answer-level outcome under one judge version: fail if any of the answer's claims has a
    bad verdict (contradicted, unsupported), else pass; no row means unjudged. Derived data, rebuilt from
    JudgeVerdict by audit.sampling.judgements.judgements_sync (verdicts stay the source of truth): it exists
    so that stratifying a million answers by the judge is one indexed LEFT JOIN, not subqueries per answer."""

    class Outcome(models.TextChoices):
        PASS = "pass", "Pass"
        FAIL = "fail", "Fail"

    judge_version = models.ForeignKey("audit.JudgeVersion", models.CASCADE, related_name="answer_judgements")
    answer = models.ForeignKey("audit.Answer", models.CASCADE, related_name="judgements")
    outcome = models.CharField(max_length=4, choices=Outcome.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judge_version", "answer"], name="answerjudgement_unique"),
        ]


class AnswerJudgementSync(models.Model):
    """How far AnswerJudgement rows of a version are up to date: the count and the largest id of the
    version's verdicts when they were last derived. Verdicts are insert-only, so a larger count with
    only newer ids means 'recompute the answers of the new verdicts'; anything else means 'rebuild'."""

    judge_version = models.OneToOneField(
        "audit.JudgeVersion", models.CASCADE, primary_key=True, related_name="judgement_sync"
    )
    verdicts = models.BigIntegerField(default=0)
    last_verdict_id = models.BigIntegerField(default=0)
