"""Running one import: fills in a batch row that exists already (see services.import_begin).

All or nothing for the user, short write locks for the database: the answers are committed chunk by chunk
(IMPORT_BATCH_SIZE records per transaction) while the batch is `running`, which hides them (staging, see
Answer.objects); the last short transaction replaces the changed answers (update mode) and marks the batch
done, which shows them all at once. On any error the staged answers are deleted chunk by chunk, the batch is
marked failed with its errors, and a dataset this import created is removed again.
"""

import hashlib
import time

from django.conf import settings
from django.db import DatabaseError, connection, reset_queries, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from audit.busy import retry_when_locked
from audit.ingest import unsplit
from audit.ingest.parse import RecordError
from audit.ingest.read import CountingReader, read_records
from audit.ingest.spool import SpoolError, progress_write, spool_open, spool_remove
from audit.ingest.write import BatchWriter
from audit.models import Answer, Dataset, ImportBatch, JudgeVersion


class _Rollback(Exception):
    pass


def import_fill(fileobj, batch, *, progress=None):
    """Import an answer file (a seekable binary file object, see read.py) into `batch` (saved, `running`); return
    the batch filled in.

    Never raises on bad input: the batch ends `done`, `noop` or `failed` (with `errors`: [{"line", "field",
    "message"}]). progress(bytes_read, records_read) is called every IMPORT_PROGRESS_RECORDS and at the end.
    """
    reader = CountingReader(fileobj)
    opts = batch.options
    writer = BatchWriter(
        batch,
        update=opts.get("update", False),
        judge=lambda: external_judge_version(opts.get("judge_name") or "external"),
        now=timezone.now(),
    )
    errors, complete, records = [], False, 0
    try:
        complete, records = _stage(reader, writer, errors, progress)
        if not errors:

            def show():  # the last short transaction: the staged answers appear together
                with transaction.atomic():
                    errors.extend(writer.replace_changed(settings.IMPORT_BATCH_SIZE))
                    if errors:
                        raise _Rollback
                    _finish(batch, writer, reader, records)

            retry_when_locked(show)
            return batch
    except _Rollback:
        pass
    except ProtectedError:
        errors.append(RecordError(batch.lines, "id", "an answer to update has labels or history: not replaced"))
    except DatabaseError as e:
        errors.append(RecordError(batch.lines, "", f"the database refused the batch ending here: {e}"))
    except BaseException:  # interrupted (Ctrl-C, worker shutdown): leave nothing staged behind
        import_failed(batch, [RecordError(batch.lines, "", "the import was interrupted")])
        raise
    size, sha = reader.sent()
    _end(batch, size, records)
    return import_failed(batch, errors, sha if complete and size else "")


def external_judge_version(name):
    """The JudgeVersion standing for an external judge named at import."""
    digest = hashlib.sha256(f"external:{name}".encode()).hexdigest()
    return JudgeVersion.objects.get_or_create(
        content_hash=digest, defaults={"kind": JudgeVersion.Kind.EXTERNAL, "name": name}
    )[0]


def _stage(reader, writer, errors, progress):
    """Read the file, committing a chunk of staged answers every IMPORT_BATCH_SIZE records: (complete, records)."""
    batch, records, size = writer.batch, 0, _chunk_size(settings.IMPORT_BATCH_SIZE, None)
    held = 0.0  # seconds this import has held SQLite's write lock so far
    opts = batch.options
    for line, rec, errs in read_records(reader, batch.file_name, opts.get("fmt", "auto"), opts.get("mapping")):
        batch.lines = line
        errors += errs or writer.add(line, rec)
        records += rec is not None
        if len(writer.pending) >= size:
            # A short import (under ~1 s of writing, e.g. one API batch) keeps writers waiting no longer than
            # that: it needs no pauses. A long one leaves the lock free after each chunk.
            chunk_errors, seconds = _commit(writer, pause=held > 4 * settings.IMPORT_LOCK_SECONDS)
            held += seconds
            errors += chunk_errors
            size = _chunk_size(size, seconds)
        if len(errors) >= settings.IMPORT_MAX_ERRORS:
            errors.append(RecordError(line, "", f"stopped reading after {settings.IMPORT_MAX_ERRORS} errors"))
            return False, records
        if progress and rec is not None and records % settings.IMPORT_PROGRESS_RECORDS == 0:
            progress(reader.bytes_read, records)
    errors += _commit(writer, pause=False)[0]
    if not records and not errors:
        errors.append(RecordError(0, "file", "no records found (the file is empty)"))
    if progress:
        progress(reader.bytes_read, records)
    return True, records


def _chunk_size(size, seconds):
    """SQLite has one writer at a time: size the chunks so that each holds the lock for about
    IMPORT_LOCK_SECONDS, whatever the records' size and the machine's load (PostgreSQL: fixed chunks)."""
    if connection.vendor != "sqlite":
        return size
    if seconds is None:  # the first chunk: small, then grown while it stays well under the target
        return min(size, 100)
    target = settings.IMPORT_LOCK_SECONDS
    if seconds > target:
        return max(50, int(size * target / seconds))
    return min(settings.IMPORT_BATCH_SIZE, size * 2) if seconds < target / 2 else size


def _commit(writer, *, pause):
    """One chunk in its own short transaction: (errors, seconds the write lock was held). The lock is taken
    when the transaction begins, so a busy SQLite refusal comes before anything is written and the chunk
    can simply be tried again."""

    def write():
        with transaction.atomic():
            started = time.monotonic()  # the lock is held from here (BEGIN IMMEDIATE waited for it)
            errors = writer.flush()
        return errors, time.monotonic() - started

    result = retry_when_locked(write)
    if pause and connection.vendor == "sqlite" and not connection.in_atomic_block:  # committed: the lock is free
        # A writer waiting for the lock polls it every 100 ms at most: leave it a window before the next chunk.
        time.sleep(settings.IMPORT_LOCK_PAUSE)
    if settings.DEBUG:  # DEBUG keeps every SQL text in memory: drop it per chunk
        reset_queries()
    return result


def _finish(batch, writer, reader, records):
    batch.created, batch.updated, batch.unchanged = writer.created, writer.updated, writer.unchanged
    batch.notes = unsplit.notes(writer.resplit, writer.kept_unsplit, writer.kept_in_audit)
    batch.status = ImportBatch.Status.DONE if writer.created + writer.updated else ImportBatch.Status.NOOP
    size, batch.file_sha256 = reader.sent()
    _end(batch, size, records)
    batch.save()


def _end(batch, bytes_read, records):
    batch.bytes_done, batch.records_done, batch.finished_at = bytes_read, records, timezone.now()
    batch.bytes_total = max(batch.bytes_total, bytes_read)


def import_failed(batch, errors, sha=""):
    """Delete what the batch staged (chunk by chunk, still hidden), then mark it failed with its errors."""
    chunk = settings.IMPORT_BATCH_SIZE
    staged = Answer._base_manager.filter(import_batch=batch)
    while ids := list(staged.values_list("pk", flat=True)[:chunk]):
        retry_when_locked(lambda ids=ids: _delete(ids))
    batch.status = ImportBatch.Status.FAILED
    batch.created = batch.updated = batch.unchanged = 0
    batch.errors = [e.as_dict() for e in errors]
    batch.file_sha256, batch.finished_at = sha, timezone.now()
    retry_when_locked(lambda: _save_failed(batch))
    return batch


def _delete(ids):
    with transaction.atomic():
        Answer._base_manager.filter(pk__in=ids).delete()  # cascades to passages, claims, verdicts


def _save_failed(batch):
    with transaction.atomic():
        batch.save()
        if batch.new_dataset and batch.dataset_id:
            _remove_dataset(batch)


def _remove_dataset(batch):
    """The dataset this import created, unless another import has used it since."""
    others = ImportBatch.objects.filter(dataset_id=batch.dataset_id).exclude(pk=batch.pk)
    answers = Answer._base_manager.filter(dataset_id=batch.dataset_id)
    if others.exists() or answers.exists():
        return
    try:
        with transaction.atomic():
            Dataset.objects.filter(pk=batch.dataset_id).delete()  # the batch keeps dataset_name
    except ProtectedError:  # an audit was created on it meanwhile: keep it
        return
    batch.dataset = None


def import_run(batch_id, check=None):
    """Run a queued background import (the task worker calls this); returns the batch, None if it is gone.
    check(spool_name), when given, runs at each progress report: the import's safe point to be stopped.

    Progress goes to the spool's progress file (see spool.py); the spooled file is removed at the end,
    whatever the outcome.
    """
    started = ImportBatch.objects.filter(pk=batch_id, status=ImportBatch.Status.QUEUED).update(
        status=ImportBatch.Status.RUNNING, started_at=timezone.now()
    )
    batch = ImportBatch.objects.select_related("dataset", "user").filter(pk=batch_id).first()
    if not started:  # deleted, or already run by another delivery of the task
        return batch
    name = batch.spool_path
    try:
        with spool_open(name) as f:
            return import_fill(f, batch, progress=lambda done, records: _progress(name, done, records, check))
    except (OSError, SpoolError) as e:
        error = RecordError(0, "file", f"the uploaded file could not be read back from the spool: {e}")
        return import_failed(batch, [error])
    finally:
        spool_remove(name)


def _progress(name, done, records, check):
    progress_write(name, done, records)
    if check:
        check(name)
