"""SQLite allows one writer at a time. A write that still finds the database locked after the busy timeout
(the `timeout` option, SQLITE_BUSY_TIMEOUT) is tried again after DB_BUSY_RETRY_DELAYS; a web request that
stays locked out gets 503 "busy" with Retry-After, never a 500.

Retrying is safe because SQLite transactions here begin IMMEDIATE: the write lock is taken when a transaction
begins, so a refusal comes before anything is written.
"""

import time

from django.conf import settings
from django.db import OperationalError
from django.http import HttpResponse


def is_locked(exc):
    return isinstance(exc, OperationalError) and "locked" in str(exc)


def retry_when_locked(fn, sleep=time.sleep):
    """fn(), tried again after each of DB_BUSY_RETRY_DELAYS while the database is locked."""
    for delay in settings.DB_BUSY_RETRY_DELAYS:
        try:
            return fn()
        except OperationalError as e:
            if not is_locked(e):
                raise
        sleep(delay)
    return fn()


class BusyRetryMiddleware:
    """Runs the view with retry_when_locked; a view still locked out after the last try answers 503."""

    sleep = staticmethod(time.sleep)  # tests replace it to decide what happens between tries

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view, args, kwargs):
        try:
            return retry_when_locked(lambda: view(request, *args, **kwargs), sleep=self.sleep)
        except OperationalError as e:
            if not is_locked(e):
                raise
        response = HttpResponse(
            "The database is busy (a large import is being written). Please try again in a moment.",
            status=503,
            content_type="text/plain",
        )
        response["Retry-After"] = str(settings.DB_BUSY_RETRY_AFTER)
        return response
