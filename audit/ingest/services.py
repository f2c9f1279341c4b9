"""Answer import: all or nothing, streaming, bounded memory. One contract for both modes:

1. `import_begin(...)` commits the batch row (and the dataset, when the name is new) before any answer is
   read: `running` for an import done now, `queued` for the task worker;
2. `run.import_fill(file, batch)` fills that row in: `done`, `noop`, or `failed` with its errors (see run.py).

Inline (the command, web uploads under IMPORT_INLINE_BYTES): `answers_import` does both in the caller.
Background (larger uploads): `import_enqueue` spools the file, begins a `queued` batch and enqueues
`import_task` once that row is committed; the worker's `run.import_run` fills it in.
A failed import keeps its batch row (with `dataset_name`) in the history; a dataset it created is removed.
"""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.ingest.parse import RecordError
from audit.ingest.read import file_kind, inline_file
from audit.ingest.run import import_fill
from audit.ingest.spool import SpoolError, max_upload_bytes, spool_remove, spool_save
from audit.jobs.imports import import_task
from audit.models import Dataset, ImportBatch
from audit.validation import text_problem


def import_begin(
    *,
    dataset_name,
    file_name,
    user=None,
    update=False,
    judge_name="external",
    fmt="auto",
    mapping=None,
    status,
    **fields,
):
    """The saved batch row of a new import, or an unsaved `failed` one when the names are refused.
    fmt, mapping: the file's shape (see formats.py; "auto" detects it per record)."""
    dataset_name, judge_name = (dataset_name or "").strip(), (judge_name or "").strip() or "external"
    batch = ImportBatch(
        dataset_name=dataset_name[:100],
        user=user,
        file_name=(file_name or "")[:255],
        status=status,
        options={"update": bool(update), "judge_name": judge_name, "fmt": fmt, "mapping": mapping or {}},
        **fields,
    )
    errors = _check_names(dataset_name, judge_name, batch.file_name)
    if errors:
        batch.status, batch.errors = ImportBatch.Status.FAILED, [e.as_dict() for e in errors]
        return batch
    with transaction.atomic():
        batch.dataset, batch.new_dataset = Dataset.objects.get_or_create(name=dataset_name)
        batch.save()
    return batch


def _check_names(dataset_name, judge_name, file_name):
    errors = []
    if not dataset_name:
        errors.append(RecordError(0, "dataset", "a dataset name is required"))
    elif len(dataset_name) > 100:
        errors.append(RecordError(0, "dataset", "dataset name longer than 100 characters"))
    if len(judge_name) > 200:
        errors.append(RecordError(0, "judge name", "judge name longer than 200 characters"))
    for field, value in (("dataset", dataset_name), ("judge name", judge_name), ("file", file_name)):
        if text_problem(value):
            errors.append(RecordError(0, field, text_problem(value)))
    return errors


def answers_import(
    fileobj,
    *,
    dataset_name,
    file_name,
    user=None,
    update=False,
    judge_name="external",
    fmt="auto",
    mapping=None,
    progress=None,
):
    """Import a JSONL/JSON/CSV/Parquet binary file object now, into the dataset `dataset_name` (created if new)."""
    batch = import_begin(
        dataset_name=dataset_name,
        file_name=file_name,
        user=user,
        update=update,
        judge_name=judge_name,
        fmt=fmt,
        mapping=mapping,
        status=ImportBatch.Status.RUNNING,
        started_at=timezone.now(),
    )
    return import_fill(fileobj, batch, progress=progress) if batch.pk else batch


def import_upload(upload, *, dataset_name, user, update=False, judge_name="external", fmt="auto", mapping=None):
    """A web upload: imported in the request when small (IMPORT_INLINE_BYTES), else queued for the worker."""
    opts = {"update": update, "judge_name": judge_name, "fmt": fmt, "mapping": mapping}
    # A gzipped upload goes by the size it inflates to (inflated once, in memory); a bad type fails at once.
    small = upload if file_kind(upload.name) is None else inline_file(upload, upload.name, settings.IMPORT_INLINE_BYTES)
    if small is not None:
        return answers_import(small, dataset_name=dataset_name, file_name=upload.name, user=user, **opts)
    return import_enqueue(upload, dataset_name=dataset_name, user=user, **opts)


def import_enqueue(upload, *, dataset_name, user=None, update=False, judge_name="external", fmt="auto", mapping=None):
    """Spool the upload, begin a `queued` batch and enqueue `import_task` on commit: returns the batch."""
    try:
        name, size, sha = spool_save(upload, max_upload_bytes())
    except (SpoolError, OSError) as e:
        return ImportBatch(
            dataset_name=(dataset_name or "").strip()[:100],
            file_name=(upload.name or "")[:255],
            status=ImportBatch.Status.FAILED,
            errors=[RecordError(0, "file", f"the upload could not be stored: {e}").as_dict()],
        )
    try:
        batch = import_begin(
            dataset_name=dataset_name,
            file_name=upload.name,
            user=user,
            update=update,
            judge_name=judge_name,
            fmt=fmt,
            mapping=mapping,
            status=ImportBatch.Status.QUEUED,
            spool_path=name,
            bytes_total=size,
            file_sha256=sha,
        )
    except BaseException:
        spool_remove(name)
        raise
    if batch.pk is None:
        spool_remove(name)
        return batch
    transaction.on_commit(lambda: import_task.enqueue(batch.pk))
    return batch
