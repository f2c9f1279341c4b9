from django.conf import settings
from django.db import models

from audit.models.answers import Claim


class AuditStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    LABELLING = "labelling", "Labelling"
    ADJUDICATION = "adjudication", "Adjudication"
    CLOSED = "closed", "Closed"


class Policy(models.TextChoices):
    """Which claim verdicts fail an answer (audit.policy): strict for regulated answers, lenient for a
    general assistant. Both are computed from the same verdicts; the audit's choice is its headline."""

    STRICT = "strict", "Strict: unsupported or contradicted fails"
    LENIENT = "lenient", "Lenient: only contradicted fails"


class Audit(models.Model):
    class Allocation(models.TextChoices):
        PROPORTIONAL = "proportional", "Proportional"
        EQUAL = "equal", "Equal per stratum"
        NEYMAN = "neyman", "Neyman"

    name = models.CharField(max_length=100, unique=True)
    status = models.CharField(max_length=15, choices=AuditStatus.choices, default=AuditStatus.DRAFT)
    dataset = models.ForeignKey("audit.Dataset", models.PROTECT, related_name="audits")
    # The population filter as given: created_at range, metadata equalities, exclusions.
    population_filter = models.JSONField(default=dict, blank=True)
    strata_keys = models.JSONField(default=list, blank=True)
    allocation = models.CharField(max_length=15, choices=Allocation.choices, default=Allocation.PROPORTIONAL)
    expected_fail_rates = models.JSONField(default=dict, blank=True)  # Neyman input per stratum
    size = models.PositiveIntegerField(default=150)
    min_per_stratum = models.PositiveIntegerField(default=0)
    seed = models.BigIntegerField()
    population_size = models.PositiveIntegerField(default=0)
    # Per-stratum design table: [{"stratum", "population", "sample"}].
    design = models.JSONField(default=list, blank=True)
    evidence_required = models.BooleanField(default=True)
    policy = models.CharField(max_length=7, choices=Policy.choices, default=Policy.STRICT)
    # "claims": a calibration sample (audit.sampling.calibration): claims drawn by the judge's verdict,
    # annotators label only those (AuditClaim), figures weight each by its inverse inclusion probability.
    kind = models.CharField(
        max_length=7, choices=[("answers", "Answers"), ("claims", "Claim calibration")], default="answers"
    )
    calibration_judge = models.ForeignKey(
        "audit.JudgeVersion", models.PROTECT, null=True, blank=True, related_name="calibration_audits"
    )
    is_demo = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Optional: events of this audit are POSTed here as JSON, signed with HMAC-SHA256 of webhook_secret.
    webhook_url = models.URLField(max_length=500, blank=True)
    webhook_secret = models.CharField(max_length=64, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name

    @property
    def is_closed(self):
        return self.status == AuditStatus.CLOSED

    @property
    def is_calibration(self):
        return self.kind == "claims"

    def claims(self):
        """The claims to label: every claim of the sampled answers, or a calibration sample's claims."""
        if self.is_calibration:
            return Claim.objects.filter(calibration_items__audit=self)
        return Claim.objects.filter(answer__audit_items__audit=self)


class AuditAnswer(models.Model):
    audit = models.ForeignKey(Audit, models.CASCADE, related_name="items")
    answer = models.ForeignKey("audit.Answer", models.PROTECT, related_name="audit_items")
    position = models.PositiveIntegerField()  # queue order within the audit
    stratum = models.CharField(max_length=300)
    stratum_population = models.PositiveIntegerField()
    stratum_sample = models.PositiveIntegerField()
    inclusion_probability = models.FloatField()
    weight = models.FloatField()

    class Meta:
        ordering = ["audit_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["audit", "answer"], name="auditanswer_unique"),
        ]
        indexes = [models.Index(fields=["audit", "stratum"], name="auditanswer_stratum")]


class AuditClaim(models.Model):
    """One claim of a calibration sample, with its stratum (the judge's verdict, optionally x a metadata
    value), the stratum's population and sample sizes, and its inclusion probability and weight."""

    audit = models.ForeignKey(Audit, models.CASCADE, related_name="calibration_items")
    claim = models.ForeignKey("audit.Claim", models.PROTECT, related_name="calibration_items")
    stratum = models.CharField(max_length=300)
    stratum_population = models.PositiveIntegerField()
    stratum_sample = models.PositiveIntegerField()
    inclusion_probability = models.FloatField()
    weight = models.FloatField()

    class Meta:
        ordering = ["audit_id", "id"]
        constraints = [models.UniqueConstraint(fields=["audit", "claim"], name="auditclaim_unique")]
