"""Answer import: all or nothing, streaming, bounded memory.

`answers_import(...)` never raises on bad input: it returns the ImportBatch with status `done`, `noop`
or `failed` (with `errors`: [{"line", "field", "message"}]). On failure everything is rolled back; the
failed batch row is then recorded for the history only when the dataset already existed (a failed
import into a new dataset name leaves no row at all, and the returned batch is unsaved: `pk is None`).
"""
import hashlib

from django.conf import settings
from django.db import DatabaseError, reset_queries, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from audit.ingest.parse import RecordError
from audit.ingest.read import CountingReader, read_records
from audit.ingest.write import BatchWriter
from audit.models import Dataset, ImportBatch, JudgeVersion


class _Rollback(Exception):
    pass


def external_judge_version(name):
    """The JudgeVersion standing for an external judge named at import."""
    digest = hashlib.sha256(f"external:{name}".encode()).hexdigest()
    return JudgeVersion.objects.get_or_create(
        content_hash=digest, defaults={"kind": JudgeVersion.Kind.EXTERNAL, "name": name})[0]


def answers_import(fileobj, *, dataset_name, file_name, user=None, update=False, judge_name="external",
                   progress=None):
    """Import a JSONL/CSV binary file object into the dataset `dataset_name` (created if new).

    progress(bytes_read, records_read) is called every few thousand records and at the end.
    """
    max_errors = getattr(settings, "IMPORT_MAX_ERRORS", 50)
    batch_size = getattr(settings, "IMPORT_BATCH_SIZE", 2000)
    dataset_name, judge_name = (dataset_name or "").strip(), (judge_name or "").strip() or "external"
    batch = ImportBatch(dataset=Dataset(name=dataset_name), user=user, file_name=(file_name or "")[:255],
                        status=ImportBatch.Status.FAILED)
    errors = _check_names(dataset_name, judge_name)
    if errors:
        batch.errors = [e.as_dict() for e in errors]
        return batch
    reader = CountingReader(fileobj)
    complete = False
    try:
        with transaction.atomic():
            batch.dataset = Dataset.objects.get_or_create(name=dataset_name)[0]
            batch.status = ImportBatch.Status.DONE
            batch.save()
            writer = BatchWriter(batch, update=update, judge=lambda: external_judge_version(judge_name),
                                 now=timezone.now())
            records = 0
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
                if progress and records % 5000 == 0 and rec is not None:
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
            batch.save()
            return batch
    except _Rollback:
        pass
    except ProtectedError:
        errors.append(RecordError(batch.lines, "id", "an answer to update has labels or history: not replaced"))
    except DatabaseError as e:
        errors.append(RecordError(batch.lines, "", f"the database refused the batch ending here: {e}"))
    return _failed(batch, errors, reader.sha.hexdigest() if complete and reader.bytes_read else "")


def _check_names(dataset_name, judge_name):
    errors = []
    if not dataset_name:
        errors.append(RecordError(0, "dataset", "a dataset name is required"))
    elif len(dataset_name) > 100:
        errors.append(RecordError(0, "dataset", "dataset name longer than 100 characters"))
    if len(judge_name) > 200:
        errors.append(RecordError(0, "judge name", "judge name longer than 200 characters"))
    return errors


def _failed(batch, errors, sha):
    """After the rollback: keep the failure in the history when the dataset exists (see module doc)."""
    batch.pk, batch._state.adding = None, True  # the row saved inside the transaction is gone
    batch.status = ImportBatch.Status.FAILED
    batch.created = batch.updated = batch.unchanged = 0
    batch.errors = [e.as_dict() for e in errors]
    batch.file_sha256 = sha
    dataset = Dataset.objects.filter(name=batch.dataset.name).first()
    if dataset is None:
        batch.dataset, batch.created_at = Dataset(name=batch.dataset.name), timezone.now()
        return batch
    batch.dataset = dataset
    batch.save()
    return batch
