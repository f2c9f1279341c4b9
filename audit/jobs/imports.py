"""Job control of background imports: cancel (queued or running) and retry (stalled).

The lead's cancel leaves a marker beside the spooled file (no database write competes with the import's
chunks); the import checks it at each progress report (its safe point, every IMPORT_PROGRESS_RECORDS records
and once before it makes its answers visible) and stops there: what it staged is deleted, nothing becomes
visible, the batch says who cancelled it."""

from contextlib import suppress

from django.db import transaction
from django.tasks import task
from django.utils import timezone

from audit.ingest.run import import_run
from audit.ingest.spool import SpoolError, _path, spool_remove
from audit.jobs.events import import_ended_send
from audit.models import ImportBatch


class ImportCancelled(Exception):
    pass


def _marker(name):
    return _path(name, ".cancel")


def import_cancel_check(name):
    """Called at each progress report of a background import: its safe point for a cancel."""
    if _marker(name).exists():
        raise ImportCancelled(_marker(name).read_text())


def import_run_cancellable(batch_id):
    """import_run, with a cancel recorded on the batch (the task worker calls this)."""
    try:
        batch = import_run(batch_id, check=import_cancel_check)
    except ImportCancelled as exc:
        batch = ImportBatch.objects.select_related("dataset", "user").get(pk=batch_id)
        _mark_cancelled(batch, str(exc))
    finally:
        _clear_marker(ImportBatch.objects.filter(pk=batch_id).values_list("spool_path", flat=True).first())
    import_ended_send(batch)
    return batch


@task()
def import_task(batch_id):
    """A background import, on the database task backend (`manage.py db_worker` executes it)."""
    batch = import_run_cancellable(batch_id)
    return {"batch": batch_id, "status": batch.status if batch else "gone"}


def _clear_marker(name):
    with suppress(SpoolError):
        _marker(name).unlink(missing_ok=True)


def _mark_cancelled(batch, message):
    batch.status, batch.finished_at = ImportBatch.Status.CANCELLED, timezone.now()
    batch.created = batch.updated = batch.unchanged = 0
    batch.errors = [{"line": 0, "field": "", "message": message}]
    batch.save(update_fields=["status", "finished_at", "created", "updated", "unchanged", "errors"])


def import_cancel(batch, user):
    """A queued import never starts; a running one stops at its next progress report. Returns a message."""
    who = user.get_username() if user else "command"
    message = f"Cancelled by {who} at {timezone.now():%Y-%m-%d %H:%M:%S} UTC: nothing was written."
    if batch.status == ImportBatch.Status.QUEUED:
        with transaction.atomic():
            taken = ImportBatch.objects.filter(pk=batch.pk, status=ImportBatch.Status.QUEUED).update(
                status=ImportBatch.Status.CANCELLED
            )
            if taken:
                batch.refresh_from_db()
                _mark_cancelled(batch, message)
        if taken:
            spool_remove(batch.spool_path)
            return "Import cancelled before it started: nothing was written."
        batch.refresh_from_db()  # the worker took it meanwhile: stop it like a running one
    if batch.status != ImportBatch.Status.RUNNING:
        return f"This import is {batch.get_status_display().lower()}: nothing to cancel."
    try:
        _marker(batch.spool_path).write_text(message)
    except (OSError, SpoolError):
        return "The import could not be reached (its spooled file is gone); it may have just finished."
    return "Cancel requested: the import stops at its next progress report and writes nothing."


def import_retry(batch, stalled):
    """A stalled import (its worker stopped, or none is running) is queued again from its spooled file."""
    if not (batch.is_active and stalled):
        return "Only a stalled import can be retried; a failed one needs its file uploaded again."
    try:
        if not _path(batch.spool_path).exists():
            return "The spooled file is gone: upload the file again."
    except SpoolError:
        return "This import has no spooled file: upload the file again."
    with transaction.atomic():
        ImportBatch.objects.filter(pk=batch.pk, status__in=[batch.Status.QUEUED, batch.Status.RUNNING]).update(
            status=ImportBatch.Status.QUEUED, started_at=None
        )
        transaction.on_commit(lambda: import_task.enqueue(batch.pk))
    return "Queued again for the task worker."
