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

    class Meta:
        ordering = ["audit_answer__position", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["audit_answer", "slot"], name="assignment_unique_slot"),
            models.UniqueConstraint(fields=["audit_answer", "annotator"], name="assignment_unique_annotator"),
        ]
        indexes = [models.Index(fields=["annotator", "status"], name="assignment_annotator_status")]


class Label(models.Model):
    assignment = models.ForeignKey(Assignment, models.CASCADE, related_name="labels")
    claim = models.ForeignKey("audit.Claim", models.PROTECT, related_name="labels")
    verdict = models.CharField(max_length=15, choices=Verdict.choices, blank=True)
    evidence_passage = models.ForeignKey("audit.Passage", models.PROTECT, null=True, blank=True)
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_text = models.TextField(blank=True)
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


class GoldLabel(models.Model):
    class Source(models.TextChoices):
        AGREED = "agreed", "Agreed"
        ADJUDICATED = "adjudicated", "Adjudicated"

    audit = models.ForeignKey("audit.Audit", models.PROTECT, related_name="gold_labels")
    claim = models.ForeignKey("audit.Claim", models.PROTECT, related_name="gold_labels")
    verdict = models.CharField(max_length=15, choices=Verdict.choices)
    source = models.CharField(max_length=12, choices=Source.choices)
    evidence_passage = models.ForeignKey("audit.Passage", models.PROTECT, null=True, blank=True)
    evidence_start = models.PositiveIntegerField(null=True, blank=True)
    evidence_end = models.PositiveIntegerField(null=True, blank=True)
    evidence_text = models.TextField(blank=True)
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
