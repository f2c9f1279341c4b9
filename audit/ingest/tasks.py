"""Background imports as a Django task on the database backend; `manage.py db_worker` executes them."""

from django.tasks import task


@task()
def import_task(batch_id):
    from audit.jobs.imports import import_run_cancellable

    batch = import_run_cancellable(batch_id)
    return {"batch": batch_id, "status": batch.status if batch else "gone"}
