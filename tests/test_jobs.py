"""Job control: cancel a queued or running import or judge run (it stops at its next safe point and keeps
what is stored), retry a stalled one; runs show when work started; failed inline uploads stay listed."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.ingest import run as ingest_run
from audit.jobs.imports import import_cancel
from audit.jobs.judge import judge_run_cancel
from audit.judge import runner, store
from audit.judge.services import judge_run_create, judge_run_execute
from audit.judge.tasks import judge_run_enqueue
from audit.models import Answer, Dataset, ImportBatch, JudgeRun, JudgeVerdict
from tests.factories import make_answer, make_dataset, make_user
from tests.test_import import jsonl, rec
from tests.test_import_background import run_queued_task, spooled, upload

POLL = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def spool_dir(settings, tmp_path):
    settings.IMPORT_SPOOL_DIR = tmp_path / "spool"
    settings.IMPORT_INLINE_BYTES = 500
    settings.WORKER_COMMAND = "make worker"
    return settings.IMPORT_SPOOL_DIR


@pytest.fixture
def lead_user(db):
    return make_user("lead", "lead")


@pytest.fixture
def lead(client, lead_user):
    client.force_login(lead_user)
    return client


def claimed_answers(n):
    ds = make_dataset()
    return [make_answer(ds, n_claims=3) for _ in range(n)]


def test_it_cancels_a_running_judge_run_at_its_next_heartbeat_keeping_what_is_stored(lead_user, monkeypatch):
    answers = claimed_answers(40)  # 120 claims: two windows of offline work
    monkeypatch.setattr(store, "FLUSH_SECONDS", 0)  # every loop turn is a heartbeat: the cancel's safe point
    monkeypatch.setattr(runner, "OFFLINE_WINDOW", 32)
    run = judge_run_create(backend="offline", dataset=answers[0].dataset)
    seen = []

    def cancel_after_first_results(r):
        seen.append(r.claims_done)
        if len(seen) == 1:  # the lead presses Cancel while the first results are landing
            judge_run_cancel(JudgeRun.objects.get(pk=r.pk), lead_user)

    judge_run_execute(run.pk, progress=cancel_after_first_results)
    run.refresh_from_db()
    stored = JudgeVerdict.objects.filter(run=run).count()
    assert run.status == "cancelled" and seen == [stored] and 0 < stored < 120
    assert "Cancelled by lead" in run.message and "What was stored is kept" in run.message

    judge_run_enqueue(run)  # the page's Resume: only the rest, no duplicates
    run_queued_task()
    run.refresh_from_db()
    assert run.status == "done" and JudgeVerdict.objects.count() == 120 and run.claims_done == 120


def test_it_cancels_a_queued_judge_run_so_the_worker_never_starts_it(lead):
    answers = claimed_answers(2)
    run = judge_run_create(backend="offline", dataset=answers[0].dataset)
    judge_run_enqueue(run)
    page = lead.get(f"/judge/runs/{run.pk}/").content.decode()
    assert "Cancel run</button>" in page and "make worker" in page
    r = lead.post(f"/jobs/judge-runs/{run.pk}/cancel/", follow=True)
    assert "Cancelled by lead" in r.content.decode()
    run_queued_task()
    run.refresh_from_db()
    assert run.status == "cancelled" and not JudgeVerdict.objects.exists() and run.started_at is None
    page = lead.get(f"/judge/runs/{run.pk}/").content.decode()
    assert "Cancel run</button>" not in page and "Resume</button>" in page  # retry = resume


def test_it_refuses_cancel_to_non_leads_and_without_csrf(db, lead_user):
    run = judge_run_create(backend="offline", dataset=claimed_answers(1)[0].dataset)
    annotator = Client()
    annotator.force_login(make_user("ann", "annotator"))
    assert annotator.post(f"/jobs/judge-runs/{run.pk}/cancel/").status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(lead_user)
    assert strict.post(f"/jobs/judge-runs/{run.pk}/cancel/").status_code == 403
    assert Client().post(f"/jobs/judge-runs/{run.pk}/cancel/").status_code == 302  # to the login page
    run.refresh_from_db()
    assert run.status == "queued"


def test_it_shows_started_as_when_work_started_not_when_queued(lead):
    run = judge_run_create(backend="offline", dataset=claimed_answers(1)[0].dataset)
    assert "not yet (queued" in lead.get("/judge/runs/").content.decode()
    started = timezone.now() - timedelta(days=3)
    JudgeRun.objects.filter(pk=run.pk).update(started_at=started)
    page = lead.get("/judge/runs/").content.decode()
    assert started.strftime("%Y-%m-%d %H:%M") in page and "not yet" not in page


def test_it_cancels_a_queued_import_removing_its_file(lead, spool_dir):
    upload(lead, jsonl(rec(1), rec(2), rec(3)))
    batch = ImportBatch.objects.get()
    assert batch.status == "queued" and spooled(spool_dir)
    page = lead.post(f"/jobs/imports/{batch.pk}/cancel/", follow=True).content.decode()
    assert "Import cancelled: nothing was written" in page and "Cancelled by lead" in page
    assert not spooled(spool_dir)
    run_queued_task()  # the task still runs, and does nothing
    batch.refresh_from_db()
    assert batch.status == "cancelled" and not Answer.objects.exists()


def test_it_cancels_a_running_import_at_its_next_progress_report(lead, lead_user, settings, monkeypatch, spool_dir):
    settings.IMPORT_PROGRESS_RECORDS = 1
    upload(lead, jsonl(*(rec(i) for i in range(1, 6))))
    batch = ImportBatch.objects.get()
    real = ingest_run.progress_write
    reports = []

    def lead_cancels_at_first_report(name, done, records):
        real(name, done, records)
        reports.append(records)
        if len(reports) == 1:
            assert import_cancel(ImportBatch.objects.get(pk=batch.pk), lead_user).startswith("Cancel requested")

    monkeypatch.setattr(ingest_run, "progress_write", lead_cancels_at_first_report)
    run_queued_task()
    batch.refresh_from_db()
    assert reports == [1]  # stopped at the report right after the cancel: records 2..5 never read
    assert batch.status == "cancelled" and not Answer.objects.exists() and not spooled(spool_dir)
    page = lead.get(f"/import/{batch.pk}/").content.decode()
    assert "Import cancelled: nothing was written" in page


def test_it_retries_a_stalled_import_and_keeps_polling_slower_meanwhile(
    lead, spool_dir, django_capture_on_commit_callbacks
):
    upload(lead, jsonl(rec(1), rec(2)))
    batch = ImportBatch.objects.get()
    DBTaskResult.objects.all().delete()  # the worker lost it
    ImportBatch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(hours=1))
    r = lead.get(f"/import/{batch.pk}/", headers=POLL)
    body = r.content.decode()
    assert r.status_code == 200 and 'hx-trigger="every 10s"' in body  # still polling, slower
    assert "Start it with <code>make worker</code>" in body and "Retry</button>" in body
    with django_capture_on_commit_callbacks(execute=True):
        lead.post(f"/jobs/imports/{batch.pk}/retry/")
    run_queued_task()
    batch.refresh_from_db()
    assert batch.status == "done" and Answer.objects.count() == 2 and not spooled(spool_dir)


def test_it_refuses_to_retry_an_import_that_is_not_stalled(lead):
    upload(lead, jsonl(rec(1), rec(2)))
    batch = ImportBatch.objects.get()
    page = lead.post(f"/jobs/imports/{batch.pk}/retry/", follow=True).content.decode()
    assert "Only a stalled import can be retried" in page and DBTaskResult.objects.count() == 1


def test_it_lists_a_failed_inline_upload_into_a_new_dataset_with_its_errors(lead, django_assert_num_queries):
    r = upload(lead, b'{"id": "x"}\n', dataset="brand-new", name="bad.jsonl")
    assert r.status_code == 400
    batch = ImportBatch.objects.get()
    assert batch.status == "failed" and batch.dataset_name == "brand-new" and batch.errors
    assert not Dataset.objects.filter(name="brand-new").exists()  # a failed import leaves no dataset behind
    page = lead.get("/import/").content.decode()
    recent = page.split("<h2>Recent imports</h2>")[1]
    assert "bad.jsonl" in recent and "<strong>question</strong>" in recent
    for i in range(5):
        upload(lead, b'{"id": "y"}\n', dataset=f"other-{i}", name="bad.jsonl")
    with django_assert_num_queries(4):  # session, user with roles, datasets, recent imports: not per row
        lead.get("/import/")
