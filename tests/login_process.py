"""The app in a process of its own, for the cross-process throttle test:

    python -m tests.login_process '{"database_url": ..., "attempts": [["ann1", "wrong"], ...]}'

Each attempt is POSTed to /login/ through the whole middleware stack (a Django test client inside this
process: its own memory, cache and database connection), against the calling test's database. Prints the
status codes as JSON."""

import json
import os
import sys


def main(spec):
    os.environ["DATABASE_URL"] = spec["database_url"]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
    import django

    django.setup()
    from django.test import Client

    client = Client()
    codes = [client.post("/login/", {"username": u, "password": p}).status_code for u, p in spec["attempts"]]
    print(json.dumps(codes))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
