"""Background imports as a Django task on the database backend; `manage.py db_worker` executes them."""

from django.tasks import task

from audit.ingest.run import import_run


@task()
def import_task(batch_id):
    batch = import_run(batch_id)
    return {"batch": batch_id, "status": batch.status if batch else "gone"}
