from django.dispatch import receiver

from annotations.weekly.services import pending_assign
from audit.jobs.events import judge_run_ended


@receiver(judge_run_ended, dispatch_uid="annotations.weekly.pending_assign")
def _judge_run_ended(sender, run, **kwargs):
    if run.audit_id:
        pending_assign(run)
