"""Running one import: fills in a batch row that exists already (see services.import_begin).

All or nothing for the user, short write locks for the database: the answers are committed chunk by chunk
(IMPORT_BATCH_SIZE records per transaction) while the batch is `running`, which hides them (staging, see
Answer.objects); the last short transaction replaces the changed answers (update mode) and marks the batch
done, which shows them all at once. On any error the staged answers are deleted chunk by chunk, the batch is
marked failed with its errors, and a dataset this import created is removed again.
"""

import hashlib

from django.conf import settings
from django.db import DatabaseError, reset_queries, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from audit.busy import retry_when_locked
from audit.ingest.parse import RecordError
from audit.ingest.read import CountingReader, read_records
from audit.ingest.spool import SpoolError, progress_write, spool_open, spool_remove
from audit.ingest.write import BatchWriter
from audit.models import Answer, Dataset, ImportBatch, JudgeVersion


class _Rollback(Exception):
    pass


def import_fill(fileobj, batch, *, progress=None):
    """Import a JSONL/CSV binary file object into `batch` (saved, `running`); return the batch filled in.

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
            with transaction.atomic():
                errors += writer.replace_changed(settings.IMPORT_BATCH_SIZE)
                if errors:
                    raise _Rollback
                _finish(batch, writer, reader, records)
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
    _end(batch, reader.bytes_read, records)
    return import_failed(batch, errors, reader.sha.hexdigest() if complete and reader.bytes_read else "")


def external_judge_version(name):
    """The JudgeVersion standing for an external judge named at import."""
    digest = hashlib.sha256(f"external:{name}".encode()).hexdigest()
    return JudgeVersion.objects.get_or_create(
        content_hash=digest, defaults={"kind": JudgeVersion.Kind.EXTERNAL, "name": name}
    )[0]


def _stage(reader, writer, errors, progress):
    """Read the file, committing a chunk of staged answers every IMPORT_BATCH_SIZE records: (complete, records)."""
    batch, records = writer.batch, 0
    opts = batch.options
    for line, rec, errs in read_records(reader, batch.file_name, opts.get("fmt", "auto"), opts.get("mapping")):
        batch.lines = line
        errors += errs or writer.add(line, rec)
        records += rec is not None
        if len(writer.pending) >= settings.IMPORT_BATCH_SIZE:
            errors += _commit(writer)
        if len(errors) >= settings.IMPORT_MAX_ERRORS:
            errors.append(RecordError(line, "", f"stopped reading after {settings.IMPORT_MAX_ERRORS} errors"))
            return False, records
        if progress and rec is not None and records % settings.IMPORT_PROGRESS_RECORDS == 0:
            progress(reader.bytes_read, records)
    errors += _commit(writer)
    if not records and not errors:
        errors.append(RecordError(0, "file", "no records found (the file is empty)"))
    if progress:
        progress(reader.bytes_read, records)
    return True, records


def _commit(writer):
    """One chunk in its own short transaction; the write lock is taken when it begins, so a busy SQLite
    refusal happens before anything is written and the chunk can simply be tried again."""

    def write():
        with transaction.atomic():
            return writer.flush()

    errors = retry_when_locked(write)
    if settings.DEBUG:  # DEBUG keeps every SQL text in memory: drop it per chunk
        reset_queries()
    return errors


def _finish(batch, writer, reader, records):
    batch.created, batch.updated, batch.unchanged = writer.created, writer.updated, writer.unchanged
    batch.status = ImportBatch.Status.DONE if writer.created + writer.updated else ImportBatch.Status.NOOP
    batch.file_sha256 = reader.sha.hexdigest()
    _end(batch, reader.bytes_read, records)
    batch.save()


def _end(batch, bytes_read, records):
    batch.bytes_done, batch.records_done, batch.finished_at = bytes_read, records, timezone.now()
    batch.bytes_total = max(batch.bytes_total, bytes_read)


def import_failed(batch, errors, sha=""):
    """Delete what the batch staged (chunk by chunk, still hidden), then mark it failed with its errors."""
    chunk = settings.IMPORT_BATCH_SIZE
    while ids := list(Answer._base_manager.filter(import_batch=batch).values_list("pk", flat=True)[:chunk]):
        with transaction.atomic():
            Answer._base_manager.filter(pk__in=ids).delete()  # cascades to passages, claims, verdicts
    batch.status = ImportBatch.Status.FAILED
    batch.created = batch.updated = batch.unchanged = 0
    batch.errors = [e.as_dict() for e in errors]
    batch.file_sha256, batch.finished_at = sha, timezone.now()
    with transaction.atomic():
        batch.save()
        if batch.new_dataset and batch.dataset_id:
            _remove_dataset(batch)
    return batch


def _remove_dataset(batch):
    """The dataset this import created, unless another import has used it since."""
    others = ImportBatch.objects.filter(dataset_id=batch.dataset_id).exclude(pk=batch.pk)
    answers = Answer._base_manager.filter(dataset_id=batch.dataset_id)
    if not others.exists() and not answers.exists():
        Dataset.objects.filter(pk=batch.dataset_id).delete()  # the batch keeps dataset_name
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
