from django.conf import settings
from django.db import models
from django.utils import timezone

from audit.models.answers import Verdict
from audit.models.definitions import JudgeLevel


class JudgeVersion(models.Model):
    """Who produced a verdict: an external judge named at import, the offline baseline,
    or one LLM prompt version (prompts, schemas, model and effort hashed together)."""

    class Kind(models.TextChoices):
        EXTERNAL = "external", "External (imported)"
        OFFLINE = "offline", "Offline baseline"
        ANTHROPIC = "anthropic", "Anthropic LLM"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=200)
    content_hash = models.CharField(max_length=64, unique=True)
    model = models.CharField(max_length=100, blank=True)
    effort = models.CharField(max_length=20, blank=True)
    spec = models.JSONField(default=dict, blank=True)  # prompts and schemas as sent
    # Editable definitions (audit.judge.definitions): the level says which runner judges with it, the
    # definition and previous version trace every wording change.
    level = models.CharField(max_length=6, choices=JudgeLevel.choices, default=JudgeLevel.CLAIM)
    definition = models.ForeignKey(
        "audit.JudgeDefinition", models.PROTECT, null=True, blank=True, related_name="versions"
    )
    previous = models.ForeignKey("self", models.PROTECT, null=True, blank=True, related_name="next_versions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.content_hash[:8]})"

    @property
    def label(self):
        if self.kind == self.Kind.OFFLINE:
            return f"{self.name} [offline baseline]"
        return str(self)


class JudgeVerdict(models.Model):
    claim = models.ForeignKey("audit.Claim", models.CASCADE, related_name="judge_verdicts")
    judge_version = models.ForeignKey(JudgeVersion, models.PROTECT, related_name="verdicts")
    raw_verdict = models.CharField(max_length=15, choices=Verdict.choices)
    # Verdict after the evidence guard: a supported/contradicted verdict whose evidence is
    # not verbatim in the named passage is scored as unsupported.
    verdict = models.CharField(max_length=15, choices=Verdict.choices, db_index=True)
    evidence = models.TextField(blank=True)
    passage_external_id = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)
    guard_passed = models.BooleanField(null=True)  # None: no evidence needed
    # The numeric guard (audit.judge.numeric): False flags a supported verdict whose evidence lacks one of
    # the claim's numbers, dates or quantities; None when it does not apply. A flag for humans, not a rescore.
    numeric_passed = models.BooleanField(null=True)
    run = models.ForeignKey("audit.JudgeRun", models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["claim", "judge_version"], name="judgeverdict_unique"),
        ]


class JudgeRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        BATCH_SUBMITTED = "batch", "Batch submitted"
        DONE = "done", "Done"
        BUDGET = "budget", "Stopped: budget reached"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING, Status.BATCH_SUBMITTED)

    judge_version = models.ForeignKey(JudgeVersion, models.PROTECT, related_name="runs")
    backend = models.CharField(max_length=10, choices=JudgeVersion.Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    dataset = models.ForeignKey("audit.Dataset", models.CASCADE, null=True, blank=True)
    audit = models.ForeignKey("audit.Audit", models.CASCADE, null=True, blank=True, related_name="judge_runs")
    # An explicit set of answers (neither a dataset nor an audit): their ids.
    answer_ids = models.JSONField(default=list, blank=True)
    use_batch = models.BooleanField(default=False)
    batch_ids = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Seconds some execution was working on the run: each adds its own, from taking the lease to its last heartbeat
    # (store.Recorder.flush), so a stall or a stop before a resume is not counted. None: a run from before this was
    # recorded (it shows started to finished, labelled as such).
    active_seconds = models.FloatField(null=True, blank=True, default=0.0)
    answers_total = models.PositiveIntegerField(default=0)
    answers_done = models.PositiveIntegerField(default=0)
    claims_done = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    # Answers whose passages were too short for the model to cache (their verify calls paid full input).
    uncached_answers = models.PositiveIntegerField(default=0)
    # The bill before the run (audit.judge.estimate.Estimate.as_dict), computed when the run is created.
    estimate = models.JSONField(default=dict, blank=True)
    budget_usd = models.FloatField(null=True, blank=True)
    budget_tokens = models.BigIntegerField(null=True, blank=True)
    message = models.TextField(blank=True)
    # The executing worker writes heartbeat_at as it progresses; a run that stops beating is stalled
    # (its worker was killed) and can be resumed. lease names the execution that owns the run: a resume
    # writes a new one, and an older execution still alive stops at its next heartbeat.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    lease = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]

    @property
    def is_active(self):
        return self.status in self.ACTIVE

    @property
    def stalled_minutes(self):
        """Minutes without a sign of life when an active run has had none for JUDGE_STALL_SECONDS, else None."""
        last = self.heartbeat_at or self.started_at or self.created_at
        if not self.is_active or last is None:
            return None
        quiet = (timezone.now() - last).total_seconds()
        return int(quiet // 60) if quiet > settings.JUDGE_STALL_SECONDS else None

    @property
    def cache_minimum(self):
        """The shortest prefix (tokens) the run's model caches."""
        table = settings.JUDGE_MIN_CACHE_TOKENS
        return table.get(self.judge_version.model, max(table.values()))

    @property
    def estimated_claims(self):
        """The claims the estimate expected: those stored plus those the decomposer should cut, rounded."""
        e = self.estimate or {}
        return round(e.get("claims_known", 0) + e.get("claims_expected", 0.0))

    def wall_seconds(self):
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None

    @property
    def stalled_seconds(self):
        """Seconds of a finished run's start-to-finish time that no execution was working (stalled, stopped before
        a resume); None without a record of its active time."""
        wall = self.wall_seconds()
        if wall is None or self.active_seconds is None:
            return None
        return max(0.0, wall - self.active_seconds)

    @property
    def is_stalled(self):
        return self.stalled_minutes is not None


class JudgeFailure(models.Model):
    class Stage(models.TextChoices):
        DECOMPOSE = "decompose", "Decompose"
        VERIFY = "verify", "Verify"
        RUBRIC = "rubric", "Answer-level rubric"

    run = models.ForeignKey(JudgeRun, models.CASCADE, related_name="failures")
    answer = models.ForeignKey("audit.Answer", models.CASCADE)
    claim = models.ForeignKey("audit.Claim", models.CASCADE, null=True, blank=True)
    stage = models.CharField(max_length=10, choices=Stage.choices)
    error = models.TextField()
    raw = models.TextField(blank=True)
    resolved = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
