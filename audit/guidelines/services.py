"""Writes of guidelines: a new version per edit (with author and time), the restore of an earlier version (as a
new version), and inheritance by a new audit."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from audit import history
from audit.models import Audit, GuidelinesVersion

MAX_CHARS = 100_000
EMPTY = "Text: guidelines cannot be empty (annotators would read a blank page). Write them, or restore a version."


@transaction.atomic
def guidelines_save(audit, text, user=None, *, copied_from=None, restores=None):
    """A new version when the text changed; returns the current version. An empty text is refused: a blank
    version would replace the guidelines every annotator reads. `restores`: the number of the earlier version
    of this audit whose text this is (kept in the trail)."""
    text = (text or "").replace("\r\n", "\n").strip()
    if not text:
        raise ValidationError(EMPTY)
    if len(text) > MAX_CHARS:
        raise ValidationError(f"Guidelines are limited to {MAX_CHARS:,} characters; these have {len(text):,}.")
    Audit.objects.select_for_update().filter(pk=audit.pk).first()  # one version number per edit
    current = GuidelinesVersion.objects.filter(audit=audit).order_by("-version").first()
    if current and current.text == text:
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
        new={
            "version": number,
            "chars": len(text),
            "copied_from": copied_from.audit.name if copied_from else None,
            **({"restores": restores} if restores else {}),
        },
    )
    return version


@transaction.atomic
def guidelines_restore(audit, number, user=None):
    """Save the text of version `number` of this audit as its newest version; returns (version, restored):
    restored is False when that text is the current one already. A number the audit lacks is refused."""
    old = GuidelinesVersion.objects.filter(audit=audit, version=number).first()
    if old is None:
        raise ValidationError(f"Version: this audit has no version {number} of its guidelines.")
    current = GuidelinesVersion.objects.filter(audit=audit).order_by("-version").first()
    if current.text == old.text:
        return current, False
    return guidelines_save(audit, old.text, user, restores=old.version), True


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
    if not latest.text.strip():  # a blank version saved before blank ones were refused: nothing to inherit
        return None
    return guidelines_save(audit, latest.text, user, copied_from=latest)
