from django.conf import settings
from django.db import models

from audit.models import Verdict


class Assignment(models.Model):
    """One answer of an audit given to one annotator. Each audit answer has two: slots A and B."""

    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Not started"
        STARTED = "started", "Started"
        SUBMITTED = "submitted", "Submitted"

    audit_answer = models.ForeignKey("audit.AuditAnswer", models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="assignments")
    slot = models.CharField(max_length=1, choices=[("A", "A"), ("B", "B")])
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.PositiveIntegerField(default=0)  # time on task: focus and activity only
    omission = models.BooleanField(default=False)  # the answer omits something the question needed
    note = models.TextField(blank=True)
    is_demo = models.BooleanField(default=False)
    reopen_reason = models.TextField(blank=True)  # the lead's reason at the latest reopen, shown to the annotator

    class Meta:
        ordering = ["audit_answer__position", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["audit_answer", "slot"], name="assignment_unique_slot"),
            models.UniqueConstraint(fields=["audit_answer", "annotator"], name="assignment_unique_annotator"),
        ]
        indexes = [models.Index(fields=["annotator", "status"], name="assignment_annotator_status")]


class Evidence(models.Model):
    """The evidence span of a verdict: passage.text[evidence_start:evidence_end] == evidence_text."""

    FIELDS = ("evidence_passage_id", "evidence_start", "evidence_end", "evidence_text")

    evidence_passage = models.ForeignKey("audit.Passage", models.PROTECT, null=True, blank=True)
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_text = models.TextField(blank=True)

    class Meta:
        abstract = True

    @property
    def has_evidence(self):
        return bool(self.evidence_text or self.evidence_passage_id)

    def evidence_fields(self):
        """{field: value} of the span, to copy onto another label or gold."""
        return {f: getattr(self, f) for f in self.FIELDS}

    def evidence_state(self):
        """The span as the audit trail keeps it: {passage, start, end, text}, or None."""
        if not self.evidence_passage_id:
            return None
        return {
            "passage": self.evidence_passage_id,
            "start": self.evidence_start,
            "end": self.evidence_end,
            "text": self.evidence_text,
        }

    def set_evidence(self, passage=None, start=None, end=None, text=""):
        self.evidence_passage, self.evidence_start, self.evidence_end, self.evidence_text = passage, start, end, text


class Label(Evidence):
    FLAGS = ("not_atomic", "needs_context", "true_not_in_passages")  # each a flag_<name> field below
    assignment = models.ForeignKey(Assignment, models.CASCADE, related_name="labels")
    claim = models.ForeignKey("audit.Claim", models.PROTECT, related_name="labels")
    verdict = models.CharField(max_length=15, choices=Verdict.choices, blank=True)
    flag_not_atomic = models.BooleanField(default=False)
    flag_needs_context = models.BooleanField(default=False)
    flag_true_not_in_passages = models.BooleanField(default=False)
    note = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "claim"], name="label_unique_claim"),
        ]


class GoldLabel(Evidence):
    class Source(models.TextChoices):
        AGREED = "agreed", "Agreed"
        ADJUDICATED = "adjudicated", "Adjudicated"

    audit = models.ForeignKey("audit.Audit", models.PROTECT, related_name="gold_labels")
    claim = models.ForeignKey("audit.Claim", models.PROTECT, related_name="gold_labels")
    verdict = models.CharField(max_length=15, choices=Verdict.choices)
    source = models.CharField(max_length=12, choices=Source.choices)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True)
    reason = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1)  # optimistic lock
    # Adjudicated gold only: the two labels ({"A": verdict, "B": verdict}) the adjudicator decided on, and
    # whether a label changed since (after a reopen), so the adjudicator must look at the claim again.
    basis = models.JSONField(null=True, blank=True)
    recheck = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["audit", "claim"], name="goldlabel_unique_claim"),
        ]


class GuidelinesSeen(models.Model):
    """A person has read an audit's guidelines (at this version) before starting to label or adjudicate it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="guidelines_seen")
    audit = models.ForeignKey("audit.Audit", models.CASCADE, related_name="+")
    version = models.PositiveIntegerField()
    seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "audit"], name="guidelinesseen_unique")]


class PendingAssignment(models.Model):
    """An audit made "like" another: assigned to these annotators once the judge run on its sample ends."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the judge run"
        DONE = "done", "Assigned"
        FAILED = "failed", "Not assigned"

    audit = models.OneToOneField("audit.Audit", models.CASCADE, related_name="pending_assignment")
    run = models.ForeignKey("audit.JudgeRun", models.CASCADE, related_name="+")
    annotator_ids = models.JSONField(default=list)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    message = models.TextField(blank=True)
