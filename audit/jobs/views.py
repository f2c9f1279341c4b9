"""Cancel and retry buttons of the import and judge run pages (leads only, POST with CSRF)."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from audit.ingest.selectors import import_batch
from audit.jobs.imports import import_cancel, import_retry
from audit.jobs.judge import judge_run_cancel
from audit.models import ImportBatch, JudgeRun
from audit.roles import lead_required


def _batch(batch_id):
    try:
        return import_batch(batch_id)
    except ImportBatch.DoesNotExist:
        raise Http404 from None


@lead_required
@require_POST
def import_cancel_view(request, batch_id):
    messages.info(request, import_cancel(_batch(batch_id), request.user))
    return redirect("import_batch", batch_id)


@lead_required
@require_POST
def import_retry_view(request, batch_id):
    batch = _batch(batch_id)
    messages.info(request, import_retry(batch, stalled=batch.stalled_minutes is not None))
    return redirect("import_batch", batch_id)


@lead_required
@require_POST
def judge_run_cancel_view(request, run_id):
    run = get_object_or_404(JudgeRun, pk=run_id)
    messages.info(request, judge_run_cancel(run, request.user))
    return redirect("judge_run", run_id)
