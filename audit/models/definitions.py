from django.conf import settings
from django.db import models


class JudgeLevel(models.TextChoices):
    CLAIM = "claim", "Claim-level (decompose + verify)"
    ANSWER = "answer", "Answer-level rubric"


class JudgeDefinition(models.Model):
    """A named judge whose wording leads edit: every save mints a content-hashed JudgeVersion under it
    (audit.judge.definitions); old versions stay read-only and every verdict keeps its version."""

    name = models.CharField(max_length=100, unique=True)
    level = models.CharField(max_length=6, choices=JudgeLevel.choices)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["level", "name"]

    def __str__(self):
        return self.name


class AnswerVerdict(models.Model):
    """One answer-level rubric verdict: score 1 passes (every claim supported), 0 fails."""

    answer = models.ForeignKey("audit.Answer", models.CASCADE, related_name="answer_verdicts")
    judge_version = models.ForeignKey("audit.JudgeVersion", models.PROTECT, related_name="answer_verdicts")
    score = models.PositiveSmallIntegerField(choices=[(0, "0: fails"), (1, "1: passes")])
    reason = models.TextField(blank=True)
    run = models.ForeignKey("audit.JudgeRun", models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "judge_version"], name="answerverdict_unique"),
        ]


class JudgeEdit(models.Model):
    """Who saved which version of a definition (the audit trail of wording changes)."""

    version = models.OneToOneField("audit.JudgeVersion", models.CASCADE, related_name="edit")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True)
    warnings = models.JSONField(default=list, blank=True)  # the scale / exclusion warnings acknowledged
    created_at = models.DateTimeField(auto_now_add=True)
