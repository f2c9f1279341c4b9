"""Answer import: all or nothing, streaming, bounded memory.

`answers_import(...)` never raises on bad input: it returns the ImportBatch with status `done`, `noop`
or `failed` (with `errors`: [{"line", "field", "message"}]). On failure everything is rolled back; the
failed batch row is then recorded for the history only when the dataset already existed (a failed
import into a new dataset name leaves no row at all, and the returned batch is unsaved: `pk is None`).

Web uploads over IMPORT_INLINE_BYTES run in the background (`import_upload` -> `import_enqueue` ->
the task worker -> `import_run`): the file is spooled, the dataset and a `queued` batch row are created
at once, and that row is kept and filled in (done, noop or failed with its errors) whatever happens.
"""

import hashlib

from django.conf import settings
from django.db import DatabaseError, reset_queries, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from audit.ingest.parse import RecordError
from audit.ingest.read import CountingReader, file_kind, read_records
from audit.ingest.spool import SpoolError, max_upload_bytes, progress_write, spool_open, spool_remove, spool_save
from audit.ingest.write import BatchWriter
from audit.models import Dataset, ImportBatch, JudgeVersion


class _Rollback(Exception):
    pass


def external_judge_version(name):
    """The JudgeVersion standing for an external judge named at import."""
    digest = hashlib.sha256(f"external:{name}".encode()).hexdigest()
    return JudgeVersion.objects.get_or_create(
        content_hash=digest, defaults={"kind": JudgeVersion.Kind.EXTERNAL, "name": name}
    )[0]


def answers_import(
    fileobj, *, dataset_name, file_name, user=None, update=False, judge_name="external", progress=None, batch=None
):
    """Import a JSONL/CSV binary file object into the dataset `dataset_name` (created if new).

    progress(bytes_read, records_read) is called every few thousand records and at the end.
    batch: a saved ImportBatch of `dataset_name` (a background import) to fill in instead of a new row; it is
    kept, as failed, when the import fails.
    """
    max_errors = settings.IMPORT_MAX_ERRORS
    batch_size = settings.IMPORT_BATCH_SIZE
    every = settings.IMPORT_PROGRESS_RECORDS  # records between progress reports
    dataset_name, judge_name = (dataset_name or "").strip(), (judge_name or "").strip() or "external"
    keep = batch is not None
    if not keep:
        batch = ImportBatch(
            dataset=Dataset(name=dataset_name),
            user=user,
            file_name=(file_name or "")[:255],
            status=ImportBatch.Status.FAILED,
        )
    errors = _check_names(dataset_name, judge_name)
    if errors:
        batch.errors = [e.as_dict() for e in errors]
        return _failed(batch, errors, "", keep) if keep else batch
    reader = CountingReader(fileobj)
    complete, records = False, 0
    try:
        with transaction.atomic():
            if not keep:  # a new row now, as the answers point at it; a kept row stays running till the end
                batch.dataset = Dataset.objects.get_or_create(name=dataset_name)[0]
                batch.status = ImportBatch.Status.DONE
                batch.save()
            writer = BatchWriter(
                batch, update=update, judge=lambda: external_judge_version(judge_name), now=timezone.now()
            )
            for line, rec, errs in read_records(reader, file_name):
                batch.lines = line
                errors += errs or writer.add(line, rec)
                records += rec is not None
                if len(writer.pending) >= batch_size:
                    errors += writer.flush()
                    if settings.DEBUG:  # DEBUG keeps every SQL text in memory: drop it per batch
                        reset_queries()
                if len(errors) >= max_errors:
                    errors.append(RecordError(line, "", f"stopped reading after {max_errors} errors"))
                    break
                if progress and records % every == 0 and rec is not None:
                    progress(reader.bytes_read, records)
            else:
                complete = True
                errors += writer.flush()
                if not records and not errors:
                    errors.append(RecordError(0, "file", "no records found (the file is empty)"))
            if progress:
                progress(reader.bytes_read, records)
            if errors:
                raise _Rollback
            batch.created, batch.updated, batch.unchanged = writer.created, writer.updated, writer.unchanged
            batch.status = ImportBatch.Status.DONE if writer.created + writer.updated else ImportBatch.Status.NOOP
            batch.file_sha256 = reader.sha.hexdigest()
            _progress_end(batch, reader.bytes_read, records)
            batch.save()
            return batch
    except _Rollback:
        pass
    except ProtectedError:
        errors.append(RecordError(batch.lines, "id", "an answer to update has labels or history: not replaced"))
    except DatabaseError as e:
        errors.append(RecordError(batch.lines, "", f"the database refused the batch ending here: {e}"))
    _progress_end(batch, reader.bytes_read, records)
    return _failed(batch, errors, reader.sha.hexdigest() if complete and reader.bytes_read else "", keep)


def _progress_end(batch, bytes_read, records):
    batch.bytes_done, batch.records_done, batch.finished_at = bytes_read, records, timezone.now()
    batch.bytes_total = max(batch.bytes_total, bytes_read)


def _check_names(dataset_name, judge_name):
    errors = []
    if not dataset_name:
        errors.append(RecordError(0, "dataset", "a dataset name is required"))
    elif len(dataset_name) > 100:
        errors.append(RecordError(0, "dataset", "dataset name longer than 100 characters"))
    if len(judge_name) > 200:
        errors.append(RecordError(0, "judge name", "judge name longer than 200 characters"))
    return errors


def _failed(batch, errors, sha, keep=False):
    """After the rollback: keep the failure in the history when the dataset exists (see module doc)."""
    if not keep:
        batch.pk, batch._state.adding = None, True  # the row saved inside the transaction is gone
    batch.status = ImportBatch.Status.FAILED
    batch.created = batch.updated = batch.unchanged = 0
    batch.errors = [e.as_dict() for e in errors]
    batch.file_sha256 = sha
    batch.finished_at = timezone.now()
    if keep:  # the batch row (and its dataset) were committed before the import: they survive the rollback
        batch.save()
        return batch
    dataset = Dataset.objects.filter(name=batch.dataset.name).first()
    if dataset is None:
        batch.dataset, batch.created_at = Dataset(name=batch.dataset.name), timezone.now()
        return batch
    batch.dataset = dataset
    batch.save()
    return batch


def import_upload(upload, *, dataset_name, user, update=False, judge_name="external"):
    """A web upload: imported in the request when small (IMPORT_INLINE_BYTES), else queued for the worker."""
    inline = settings.IMPORT_INLINE_BYTES
    if upload.size < inline or file_kind(upload.name) is None:  # an unsupported type fails at once, unread
        from audit.jobs.imports import import_failure_keep

        return import_failure_keep(
            answers_import(
                upload,
                dataset_name=dataset_name,
                file_name=upload.name,
                user=user,
                update=update,
                judge_name=judge_name,
            )
        )
    return import_enqueue(upload, dataset_name=dataset_name, user=user, update=update, judge_name=judge_name)


def import_enqueue(upload, *, dataset_name, user=None, update=False, judge_name="external"):
    """Spool the upload and queue `import_task`: returns the `queued` batch (or an unsaved failed one).

    The dataset is created now (empty until the import commits), so the batch row, and a failure's
    errors, stay in the history even for a new dataset name.
    """
    from audit.ingest.tasks import import_task

    dataset_name, judge_name = (dataset_name or "").strip(), (judge_name or "").strip() or "external"
    batch = ImportBatch(
        dataset=Dataset(name=dataset_name),
        user=user,
        file_name=(upload.name or "")[:255],
        status=ImportBatch.Status.FAILED,
    )
    errors = _check_names(dataset_name, judge_name)
    try:
        name, size, sha = spool_save(upload, max_upload_bytes()) if not errors else (None, 0, "")
    except (SpoolError, OSError) as e:
        errors.append(RecordError(0, "file", f"the upload could not be stored: {e}"))
    if errors:
        batch.errors = [e.as_dict() for e in errors]
        return batch
    try:
        with transaction.atomic():
            batch.dataset = Dataset.objects.get_or_create(name=dataset_name)[0]
            batch.status, batch.spool_path, batch.bytes_total, batch.file_sha256 = (
                ImportBatch.Status.QUEUED,
                name,
                size,
                sha,
            )
            batch.options = {"update": bool(update), "judge_name": judge_name}
            batch.save()
            import_task.enqueue(batch.pk)
    except BaseException:
        spool_remove(name)
        raise
    return batch


def import_run(batch_id):
    """Run a queued background import (the task worker calls this); returns the batch, None if it is gone.

    Progress goes to the spool's progress file (see spool.py) every IMPORT_PROGRESS_RECORDS (5,000) records;
    the spooled file is removed at the end, whatever the outcome.
    """
    started = ImportBatch.objects.filter(pk=batch_id, status=ImportBatch.Status.QUEUED).update(
        status=ImportBatch.Status.RUNNING, started_at=timezone.now()
    )
    batch = ImportBatch.objects.select_related("dataset", "user").filter(pk=batch_id).first()
    if not started:  # deleted, or already run by another delivery of the task
        return batch
    from audit.jobs.imports import import_cancel_check

    name, opts = batch.spool_path, batch.options
    try:
        with spool_open(name) as f:
            return answers_import(
                f,
                dataset_name=batch.dataset.name,
                file_name=batch.file_name,
                user=batch.user,
                update=opts.get("update", False),
                judge_name=opts.get("judge_name", "external"),
                progress=lambda done, records: (progress_write(name, done, records), import_cancel_check(name)),
                batch=batch,
            )
    except (OSError, SpoolError) as e:
        error = RecordError(0, "file", f"the uploaded file could not be read back from the spool: {e}")
        return _failed(batch, [error], "", keep=True)
    finally:
        spool_remove(name)
