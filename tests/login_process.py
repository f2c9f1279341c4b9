"""The app in a process of its own, for the cross-process throttle test:

    python -m tests.login_process '{"database_url": ..., "setup": true, "attempts": [["ann1", "wrong"], ...]}'

Each attempt is POSTed to /login/ through the whole middleware stack (a Django test client inside this
process: its own memory, cache and database connection). With "setup", the tables are created from the
models (for a fresh SQLite file) and the user ann1 exists. Prints the status codes as JSON."""

import json
import os
import sys


def main(spec):
    os.environ["DATABASE_URL"] = spec["database_url"]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
    import django

    django.setup()
    from django.apps import apps
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    if spec.get("setup"):
        settings.MIGRATION_MODULES = {app.label: None for app in apps.get_app_configs()}
        call_command("migrate", run_syncdb=True, verbosity=0)
        if not get_user_model().objects.filter(username="ann1").exists():
            get_user_model().objects.create_user("ann1", password=spec["password"])
    client = Client()
    codes = [client.post("/login/", {"username": u, "password": p}).status_code for u, p in spec["attempts"]]
    print(json.dumps(codes))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
