from django.conf import settings
from django.db import models
from django.utils.safestring import SafeString


class Verdict(models.TextChoices):
    SUPPORTED = "supported", "Supported"
    CONTRADICTED = "contradicted", "Contradicted"
    UNSUPPORTED = "unsupported", "Unsupported"
    NON_ASSERTIVE = "non_assertive", "Non-assertive"

    @property
    def needs_evidence(self):
        """A passage span settles the claim: the verdict quotes it."""
        return self in (Verdict.SUPPORTED, Verdict.CONTRADICTED)

    @property
    def is_bad(self):
        """The claim (and its answer) fails faithfulness."""
        return self in (Verdict.CONTRADICTED, Verdict.UNSUPPORTED)

    @property
    def is_scored(self):
        """Counted in the claim ratio (non-assertive text is not)."""
        return self != Verdict.NON_ASSERTIVE

    @classmethod
    def sets(cls):
        """{set name: [values]} for templates and JavaScript (json_script)."""
        return {name: [v.value for v in cls if getattr(v, name)] for name in ("needs_evidence", "is_bad", "is_scored")}


# The sets, defined by the properties above, as plain strings (safe as dict keys and in pandas).
VERDICTS = tuple(v.value for v in Verdict)
NEEDS_EVIDENCE = tuple(v.value for v in Verdict if v.needs_evidence)
BAD_VERDICTS = tuple(v.value for v in Verdict if v.is_bad)
SCORED_VERDICTS = tuple(v.value for v in Verdict if v.is_scored)


class Dataset(models.Model):
    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class ImportBatch(models.Model):
    class Status(models.TextChoices):
        DONE = "done", "Imported"
        NOOP = "noop", "Nothing new"
        FAILED = "failed", "Failed"
        QUEUED = "queued", "Queued"  # a web upload spooled to disk, waiting for the task worker
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"  # by a lead, while queued or running: nothing was written

    # The dataset is created with the batch; a failed import that created it removes it again (the
    # batch stays in the history, with dataset_name).
    dataset = models.ForeignKey(Dataset, models.SET_NULL, null=True, related_name="imports")
    dataset_name = models.CharField(max_length=100)
    new_dataset = models.BooleanField(default=False)  # this import created the dataset
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    file_name = models.CharField(max_length=255)
    file_sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    lines = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    # What the counts alone do not say, one sentence each (e.g. answers kept as stored: see ingest/unsplit.py).
    notes = models.JSONField(default=list, blank=True)
    # Background imports (web uploads over IMPORT_INLINE_BYTES): the spooled file's name under
    # IMPORT_SPOOL_DIR (a random token, never the user's file name), the options, and the progress.
    spool_path = models.CharField(max_length=100, blank=True)
    options = models.JSONField(default=dict, blank=True)  # {"update": bool, "judge_name": str}
    bytes_total = models.PositiveBigIntegerField(default=0)
    bytes_done = models.PositiveBigIntegerField(default=0)
    records_done = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def is_active(self):
        return self.status in ACTIVE_IMPORT


ACTIVE_IMPORT = (ImportBatch.Status.QUEUED, ImportBatch.Status.RUNNING)


class VisibleAnswers(models.Manager):
    """Answers of complete imports only: an import commits its answers in chunks while it runs (staging),
    and they appear together when its batch is marked done. Writes of the import use `_base_manager`."""

    def get_queryset(self):
        staging = ImportBatch.objects.filter(status__in=ACTIVE_IMPORT).values("pk")
        return super().get_queryset().exclude(import_batch__in=staging)


class Answer(models.Model):
    dataset = models.ForeignKey(Dataset, models.CASCADE, related_name="answers")
    external_id = models.CharField(max_length=200)
    question = models.TextField()
    text = models.TextField()
    created_at = models.DateTimeField(db_index=True)
    meta = models.JSONField(default=dict, blank=True)
    # sha256 of the normalised record: re-importing an unchanged record is a no-op.
    content_hash = models.CharField(max_length=64)
    length = models.PositiveIntegerField(default=0)  # characters of text, for the length stratum
    import_batch = models.ForeignKey(ImportBatch, models.SET_NULL, null=True, blank=True)

    objects = VisibleAnswers()

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="answer_unique_external_id"),
        ]
        indexes = [models.Index(fields=["dataset", "created_at"], name="answer_dataset_created")]

    def __str__(self):
        return self.external_id


class Passage(models.Model):
    answer = models.ForeignKey(Answer, models.CASCADE, related_name="passages")
    position = models.PositiveIntegerField()
    external_id = models.CharField(max_length=200)
    source = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    # What the retriever attached beyond id/source/text (title, url, score, rank, citation, metadata, ...).
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["answer_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "position"], name="passage_unique_position"),
        ]

    @property
    def title(self):  # the retriever's title, when it gave one as text
        title = self.meta.get("title") if isinstance(self.meta, dict) else None
        return title if isinstance(title, str) else ""

    @property
    def number(self):  # 1-based, as text: written unlocalised (a header per passage on every page that shows them)
        return SafeString(self.position + 1)

    @property
    def url(self):
        """The retriever's url when it is http(s): an imported url never becomes a javascript: link."""
        url = self.meta.get("url") if isinstance(self.meta, dict) else None
        ok = isinstance(url, str) and url[:8].lower().startswith(("http://", "https://")) and len(url) <= 2000
        return url if ok else ""


class ClaimOrigin(models.TextChoices):
    IMPORTED = "imported", "Imported"
    JUDGE = "judge", "Judge decomposition"
    EDITED = "edited", "Edited"


class Claim(models.Model):
    answer = models.ForeignKey(Answer, models.CASCADE, related_name="claims")
    position = models.PositiveIntegerField()
    text = models.TextField()
    # Character span in answer.text, when the claim can be located there.
    span_start = models.PositiveIntegerField(null=True, blank=True)
    span_end = models.PositiveIntegerField(null=True, blank=True)
    origin = models.CharField(max_length=10, choices=ClaimOrigin.choices)
    # The judge version whose decomposer produced the claim (None for imported claims).
    judge_version = models.ForeignKey("audit.JudgeVersion", models.PROTECT, null=True, blank=True)
    meta = models.JSONField(default=dict, blank=True)  # unknown fields of an imported claim

    class Meta:
        ordering = ["answer_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "position"], name="claim_unique_position"),
        ]

    def __str__(self):
        return self.text

    @property
    def number(self):  # 1-based, as text: written unlocalised (several times a claim on the workspace page)
        return SafeString(self.position + 1)
