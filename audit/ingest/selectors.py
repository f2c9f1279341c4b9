import time

from django.conf import settings

from audit.ingest.spool import progress_read
from audit.models import Dataset, ImportBatch


def recent_imports(limit=20):
    return ImportBatch.objects.select_related("dataset", "user")[:limit]


def dataset_names():
    return list(Dataset.objects.values_list("name", flat=True))


def import_batch(batch_id):
    """One batch with its live progress (a running import reports to the spool, not the row: see spool.py)
    and `stalled_minutes`: minutes without a sign of life past IMPORT_STALL_SECONDS, else None."""
    batch = ImportBatch.objects.select_related("dataset", "user").get(pk=batch_id)
    last = (batch.started_at or batch.created_at).timestamp()
    if batch.status == ImportBatch.Status.RUNNING:
        live = progress_read(batch.spool_path)
        if live:
            batch.bytes_done, batch.records_done, last = live[0], live[1], max(last, live[2])
    quiet = time.time() - last
    stall = settings.IMPORT_STALL_SECONDS
    batch.stalled_minutes = max(1, int(quiet // 60)) if batch.is_active and quiet > stall else None
    return batch
