"""Notifications: email in the outbox (each person may turn it off) and signed webhooks, retried with
backoff by the real task worker, against a receiver on 127.0.0.1 that the test scripts."""

import hashlib
import hmac
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from annotations.adjudication.services import _advance_audit
from annotations.assignments.services import audit_assign
from annotations.models import Assignment
from audit.judge.services import judge_run_create, judge_run_execute
from audit.models import JudgeRun, NotificationSettings, WebhookDelivery
from tests.factories import make_answer, make_audit, make_dataset, make_user


class Receiver:
    """An HTTP server on 127.0.0.1 answering POSTs with scripted status codes (the last one repeats)."""

    def __init__(self, statuses):
        self.statuses, self.requests, self.cond = list(statuses), [], threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.cond:
                    status = receiver.statuses[min(len(receiver.requests), len(receiver.statuses) - 1)]
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    receiver.cond.notify_all()
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver_factory():
    made = []

    def make(*statuses):
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    for r in made:
        r.close()


@pytest.fixture(autouse=True)
def fast_backoff(settings):
    settings.WEBHOOK_BACKOFF_SECONDS = 0  # injectable backoff: retries are due at once, no waiting
    settings.WEBHOOK_MAX_ATTEMPTS = 3


def run_tasks(limit=20):
    """The real worker, task by task, until nothing is ready."""
    worker = Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="notify-test",
        excluded_queue_names=[],
    )
    for _ in range(limit):
        task = DBTaskResult.objects.ready().first()
        if task is None:
            return
        task.claim("notify-test")
        worker.run_task(task)
        task.refresh_from_db()
        assert task.status == "SUCCESSFUL", task.traceback
    raise AssertionError("tasks kept coming")


def team():
    lead = make_user("lead", "lead")
    anns = [make_user(f"ann{i}", "annotator") for i in (1, 2)]
    for u in (lead, *anns):
        u.email = f"{u.username}@example.org"
        u.save()
    return lead, anns


def assigned_audit(receiver_url="", secret="s3cret"):  # noqa: S107 - a test secret
    lead, anns = team()
    ds = make_dataset()
    audit = make_audit([make_answer(ds) for _ in range(2)], status="draft", webhook_url=receiver_url)
    audit.webhook_secret = secret
    audit.save()
    return audit, lead, anns


def test_it_emails_the_annotators_when_an_audit_is_assigned_unless_they_turned_email_off(
    db, django_capture_on_commit_callbacks
):
    audit, lead, (ann1, ann2) = assigned_audit()
    NotificationSettings.objects.create(user=ann2, email_enabled=False)
    with django_capture_on_commit_callbacks(execute=True):
        audit_assign(audit, [ann1, ann2], user=lead)
    assert sorted(m.to[0] for m in mail.outbox) == ["ann1@example.org", "lead@example.org"]
    assert all(f"Audit {audit.name} is assigned" in m.subject for m in mail.outbox)
    assert "http://127.0.0.1:8000/" in mail.outbox[0].body
    assert not WebhookDelivery.objects.exists()  # no webhook URL: nothing to POST


def test_it_posts_a_signed_webhook_and_retries_after_a_failure(
    db, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory(500, 200)
    audit, lead, anns = assigned_audit(receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        audit_assign(audit, anns, user=lead)
    run_tasks()
    assert len(receiver.requests) == 2  # the 500, then the retry that got a 200
    (h1, body1), (h2, body2) = receiver.requests
    assert body1 == body2 and h1["x-claimaudit-delivery"] == h2["x-claimaudit-delivery"]
    expected = "sha256=" + hmac.new(b"s3cret", body2, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(h2["x-claimaudit-signature"], expected)
    assert h2["x-claimaudit-event"] == "audit.assigned" and h2["content-type"] == "application/json"
    payload = json.loads(body2)
    assert payload["event"] == "audit.assigned" and payload["audit"] == audit.name
    assert payload["annotators"] == ["ann1", "ann2"]
    d = WebhookDelivery.objects.get()
    assert (d.status, d.attempts, d.last_error) == ("delivered", 2, "")


def test_it_gives_up_after_the_last_attempt_and_shows_the_failure_on_the_audit_page(
    db, client, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory(503)
    audit, lead, anns = assigned_audit(receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        audit_assign(audit, anns, user=lead)
    run_tasks()
    assert len(receiver.requests) == 3  # WEBHOOK_MAX_ATTEMPTS
    d = WebhookDelivery.objects.get()
    assert (d.status, d.attempts) == ("failed", 3) and d.last_error.startswith("HTTP 503")
    client.force_login(lead)
    page = client.get(f"/audits/{audit.pk}/").content.decode()
    section = page.split('id="audit_webhook"')[1]
    assert "Failed (gave up)" in section and "HTTP 503" in section and "audit.assigned" in section


def test_it_signs_with_the_audit_secret_so_a_wrong_secret_does_not_verify(
    db, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory(200)
    audit, lead, anns = assigned_audit(receiver.url, secret="right")
    with django_capture_on_commit_callbacks(execute=True):
        audit_assign(audit, anns, user=lead)
    run_tasks()
    ((headers, body),) = receiver.requests
    wrong = "sha256=" + hmac.new(b"wrong", body, hashlib.sha256).hexdigest()
    assert headers["x-claimaudit-signature"] != wrong


def test_it_notifies_the_lead_and_the_webhook_when_a_judge_run_finishes(
    db, receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory(200)
    audit, lead, anns = assigned_audit(receiver.url)
    run = judge_run_create(backend="offline", audit=audit, user=lead)
    with django_capture_on_commit_callbacks(execute=True):
        judge_run_execute(run.pk)
    run_tasks()
    (m,) = mail.outbox
    assert m.to == ["lead@example.org"] and f"Judge run #{run.pk} on audit {audit.name}: done" in m.subject
    ((headers, body),) = receiver.requests
    assert headers["x-claimaudit-event"] == "judge_run.done" and json.loads(body)["run"] == run.pk


def test_it_notifies_a_stall_once_per_stall(db, django_capture_on_commit_callbacks):
    lead, _ = team()
    run = judge_run_create(backend="offline", dataset=make_answer(make_dataset()).dataset, user=lead)
    JudgeRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("notify_stalled", stdout=open("/dev/null", "w"))  # noqa: SIM115
        call_command("notify_stalled", stdout=open("/dev/null", "w"))  # noqa: SIM115
    (m,) = mail.outbox
    assert "is stalled" in m.subject and "Start it with: python manage.py db_worker" in m.body


def test_it_emails_adjudicators_when_every_assignment_is_submitted(db, django_capture_on_commit_callbacks):
    audit, lead, anns = assigned_audit()
    adj = make_user("adj", "adjudicator")
    adj.email = "adj@example.org"
    adj.save()
    audit_assign(audit, anns, user=lead)
    mail.outbox.clear()
    Assignment.objects.update(status=Assignment.Status.SUBMITTED)
    audit.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        _advance_audit(audit)
    assert sorted(m.to[0] for m in mail.outbox) == ["adj@example.org"]  # the lead did not create this audit
    assert "ready for adjudication" in mail.outbox[0].subject


def test_it_lets_each_person_turn_email_off(db, django_assert_num_queries):
    c = Client()
    c.force_login(make_user("ann", "annotator"))
    assert "checked" in c.get("/notifications/email/").content.decode()
    c.post("/notifications/email/", {})
    assert NotificationSettings.objects.get().email_enabled is False
    with django_assert_num_queries(3):  # session, user with roles (the menu), settings row
        assert "checked" not in c.get("/notifications/email/").content.decode()


def test_it_validates_the_webhook_url_and_lets_only_leads_set_it(db):
    audit, lead, anns = assigned_audit()
    c = Client()
    c.force_login(anns[0])
    assert c.post(f"/notifications/audits/{audit.pk}/webhook/", {"webhook_url": "https://x.org/h"}).status_code == 403
    c.force_login(lead)
    r = c.post(f"/notifications/audits/{audit.pk}/webhook/", {"webhook_url": "ftp://x.org/h"})
    assert r.status_code == 400 and "webhook_url" in r.content.decode()
    r = c.post(f"/notifications/audits/{audit.pk}/webhook/", {"webhook_url": "https://x.org/h", "new_secret": "on"})
    audit.refresh_from_db()
    assert r.status_code == 302 and audit.webhook_url == "https://x.org/h" and len(audit.webhook_secret) == 64


def test_it_says_once_why_a_webhook_url_is_refused(db):
    audit, lead, _ = assigned_audit()
    c = Client()
    c.force_login(lead)
    for bad in ("not a url", "ftp://x.org/h", "http://"):
        r = c.post(f"/notifications/audits/{audit.pk}/webhook/", {"webhook_url": bad})
        page = r.content.decode()
        assert r.status_code == 400 and page.count("Enter a valid URL.") == 1, (bad, page)
        assert "Webhook URL (webhook_url): Enter a valid URL." in page
        # The form comes back with what was typed, to correct it there (it offered only a link back to an empty form)
        assert f'action="/notifications/audits/{audit.pk}/webhook/"' in page
        assert f'value="{bad}"' in page and 'aria-invalid="true"' in page
    audit.refresh_from_db()
    assert audit.webhook_url == ""
