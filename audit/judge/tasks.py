"""The judge run as a Django task on the database backend; `manage.py db_worker` executes it."""

from django.tasks import task


@task()
def judge_run_task(run_id, retry_failed=False):
    from audit.judge.services import judge_run_execute

    run = judge_run_execute(run_id, retry_failed=retry_failed)
    return {"run": run.pk, "status": run.status, "message": run.message}


@task()
def judge_recover_task():
    """The stalled check, scheduled by judge_runs_recover while runs are active."""
    from audit.judge.services import judge_runs_recover

    return {"resumed": judge_runs_recover()}
