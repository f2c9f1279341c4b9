"""Writes of guidelines: a new version per edit (with author and time), and inheritance by a new audit."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from audit import history
from audit.models import Audit, GuidelinesVersion

MAX_CHARS = 100_000


@transaction.atomic
def guidelines_save(audit, text, user=None, *, copied_from=None):
    """A new version when the text changed; returns the current version (None when there is none)."""
    text = (text or "").replace("\r\n", "\n").strip()
    if len(text) > MAX_CHARS:
        raise ValidationError(f"Guidelines are limited to {MAX_CHARS:,} characters; these have {len(text):,}.")
    Audit.objects.select_for_update().filter(pk=audit.pk).first()  # one version number per edit
    current = GuidelinesVersion.objects.filter(audit=audit).order_by("-version").first()
    if current and current.text == text or (not current and not text):
        return current
    number = (GuidelinesVersion.objects.filter(audit=audit).aggregate(n=Max("version"))["n"] or 0) + 1
    version = GuidelinesVersion.objects.create(
        audit=audit, version=number, text=text, author=user, copied_from=copied_from
    )
    history.record(
        audit,
        kind="audit",
        action="guidelines",
        user=user,
        old={"version": current.version} if current else None,
        new={"version": number, "chars": len(text), "copied_from": copied_from.audit.name if copied_from else None},
    )
    return version


def guidelines_inherit(audit, user=None, source=None):
    """A new audit starts from the guidelines of `source`, else of the latest other audit that has some
    (of the same dataset first)."""
    if source is None:
        others = GuidelinesVersion.objects.exclude(audit=audit).select_related("audit")
        latest = others.filter(audit__dataset_id=audit.dataset_id).order_by("-created_at", "-id").first()
        latest = latest or others.order_by("-created_at", "-id").first()
    else:
        latest = GuidelinesVersion.objects.filter(audit=source).select_related("audit").order_by("-version").first()
    if latest is None:
        return None
    latest = GuidelinesVersion.objects.filter(audit=latest.audit).select_related("audit").order_by("-version").first()
    return guidelines_save(audit, latest.text, user, copied_from=latest)
