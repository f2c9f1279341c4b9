"""Settings for building a test database straight from the models (`migrate --run-syncdb`), as the suite's
--nomigrations does: subprocess tests use it for their schema step only, then run the real settings."""

from claimaudit.settings import *  # noqa: F403
from claimaudit.settings import INSTALLED_APPS

MIGRATION_MODULES = {app.rsplit(".", 1)[-1]: None for app in INSTALLED_APPS} | {"django_tasks_database": None}
