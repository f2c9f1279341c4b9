"""The app's settings with every app's tables created from the models (`migrate --run-syncdb`), not from
migration files: a benchmark's throwaway database then matches the code even before its migrations exist."""

from claimaudit.settings import *  # noqa: F403
from claimaudit.settings import INSTALLED_APPS

MIGRATION_MODULES = {name.rsplit(".", 1)[-1]: None for name in INSTALLED_APPS}
MIGRATION_MODULES["django_tasks_db"] = None
MIGRATION_MODULES["django_tasks_database"] = None
