"""django-tasks-db's worker, which first hands judge runs whose worker died back to the queue (a restarted
worker resumes them by itself). INSTALLED_APPS lists audit before django_tasks_db so this one is found."""

from django_tasks_db.management.commands import db_worker

from audit.judge.tasks import judge_runs_recover


class Command(db_worker.Command):
    help = f"{db_worker.Command.help}; at start-up it resumes judge runs whose worker stopped."

    def handle(self, *args, **options):
        judge_runs_recover()
        super().handle(*args, **options)
