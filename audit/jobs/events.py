"""Background work that ends (a judge run or an import: finished, failed, cancelled, stalled) is announced
here: a Django signal for the layers above (annotations assigns an audit whose sample was being judged),
and the notifications (email, webhooks)."""

from django.dispatch import Signal

from audit.models import JudgeRun
from audit.notify.events import notify_import, notify_judge_run

# sender: the JudgeRun model; run: the JudgeRun as stored.
judge_run_ended = Signal()


def judge_run_ended_send(run):
    run = JudgeRun.objects.select_related("audit", "dataset", "created_by").get(pk=run.pk)
    if run.is_active:  # taken over by another execution (a resume): that one announces its end
        return
    judge_run_ended.send(sender=JudgeRun, run=run)
    notify_judge_run(run)


def import_ended_send(batch):
    if batch is not None and not batch.is_active:
        notify_import(batch)
