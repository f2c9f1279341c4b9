"""Announce stalled judge runs and imports (once per stall): for cron, e.g. every 5 minutes. A dead worker
cannot report its own stall, so this runs outside it."""

from django.core.management.base import BaseCommand

from audit.ingest.selectors import import_batch
from audit.models import ImportBatch, JudgeRun
from audit.notify.events import notify_stalled_import, notify_stalled_run

ACTIVE_RUNS = [JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING, JudgeRun.Status.BATCH_SUBMITTED]


class Command(BaseCommand):
    help = "Email (and webhook) the people concerned about judge runs and imports that stopped progressing."

    def handle(self, **options):
        sent = 0
        for run in JudgeRun.objects.filter(status__in=ACTIVE_RUNS).select_related("audit", "dataset", "created_by"):
            sent += run.is_stalled and notify_stalled_run(run)
        active = ImportBatch.objects.filter(status__in=[ImportBatch.Status.QUEUED, ImportBatch.Status.RUNNING])
        for pk in active.values_list("pk", flat=True):
            batch = import_batch(pk)
            sent += batch.stalled_minutes is not None and notify_stalled_import(batch)
        self.stdout.write(f"{sent} stall notification{'s' if sent != 1 else ''} sent.")
