"""A web write that meets a locked SQLite database: retried with backoff inside the request, then 503 with
Retry-After, never a 500. The test holds the write lock from its own connection and decides, at each
backoff, whether to let go: no timing is involved."""

import sqlite3

import pytest
from django.db import connection

from annotations.models import Label
from audit.busy import BusyRetryMiddleware
from audit.models import Claim
from tests.factories import make_assigned_audit, make_user

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's single-writer lock"),
]


@pytest.fixture
def locker():
    """Another connection to the test database that holds the write lock until release()."""
    name = str(connection.settings_dict["NAME"])
    conn = sqlite3.connect(name, uri=name.startswith("file:"), isolation_level=None, timeout=0)

    class Lock:
        def hold(self):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE annotations_label SET note = note WHERE id < 0")  # a write: the lock is taken

        def release(self):
            conn.execute("ROLLBACK")

    yield Lock()
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


@pytest.fixture
def save(client, settings):
    settings.DB_BUSY_RETRY_DELAYS = (0.25, 0.5, 1.0)
    user = make_user("ann", "annotator")
    _, (assignment, *_) = make_assigned_audit(user, n_answers=1)
    claim = Claim.objects.filter(answer_id=assignment.audit_answer.answer_id).first()
    client.force_login(user)
    client.get(f"/label/{assignment.pk}/")  # the session and everything else read before the lock
    return lambda: client.post(f"/label/{assignment.pk}/claim/{claim.pk}/", {"verdict": "unsupported"})


def backoffs(monkeypatch, on_sleep):
    slept = []

    def sleep(delay):
        slept.append(delay)
        on_sleep(len(slept))

    monkeypatch.setattr(BusyRetryMiddleware, "sleep", staticmethod(sleep))
    return slept


def test_it_answers_503_with_retry_after_when_the_lock_outlasts_every_retry(save, locker, monkeypatch, settings):
    slept = backoffs(monkeypatch, lambda n: None)
    locker.hold()
    r = save()
    assert (r.status_code, r["Retry-After"]) == (503, str(settings.DB_BUSY_RETRY_AFTER))
    assert "database is busy" in r.content.decode()
    assert slept == [0.25, 0.5, 1.0]
    locker.release()
    assert not Label.objects.exists()


def test_it_saves_when_the_lock_is_released_during_a_backoff(save, locker, monkeypatch):
    slept = backoffs(monkeypatch, lambda n: locker.release() if n == 2 else None)
    locker.hold()
    r = save()
    assert r.status_code == 200 and slept == [0.25, 0.5]
    assert Label.objects.get().verdict == "unsupported"
