"""A benchmark's throwaway database gets its tables straight from the models, as the tests' --nomigrations
builds them (a benchmark then matches the code even before its migrations exist). Call after django.setup()."""

from django.conf import settings
from django.core.management import call_command


class _NoMigrations(dict):
    def __contains__(self, item):
        return True

    def __getitem__(self, item):
        return None


def create_tables():
    settings.MIGRATION_MODULES = _NoMigrations()
    call_command("migrate", run_syncdb=True, verbosity=0)
