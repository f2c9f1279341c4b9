"""Web uploads over IMPORT_INLINE_BYTES: spooled, queued, imported by a real task worker, progress polled."""

import hashlib
import stat
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import TestCase
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit.ingest import spool
from audit.ingest.run import import_run
from audit.models import Answer, Dataset, ImportBatch
from tests.factories import make_user, worker_run
from tests.test_import import counts, jsonl, rec

POLL = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def spool_dir(settings, tmp_path):
    settings.IMPORT_SPOOL_DIR = tmp_path / "spool"
    settings.IMPORT_INLINE_BYTES = 500  # two records are over it: the background path
    return settings.IMPORT_SPOOL_DIR


@pytest.fixture
def lead(client, db):
    client.force_login(make_user("lead", "lead"))
    return client


def upload(client, data, name="answers.jsonl", dataset="web", **fields):
    """POST a file; the task is enqueued when the batch row commits (the test's transaction never does)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post("/import/", {"file": SimpleUploadedFile(name, data), "new_dataset": dataset, **fields})


def spooled(path):
    return list(path.iterdir()) if path.exists() else []  # the spool directory is created on demand


def run_queued_task():
    task = worker_run(DBTaskResult.objects.get(status="READY"), "import-test")
    assert task.status == "SUCCESSFUL", task.traceback
    return task


def test_it_spools_an_upload_over_the_inline_size_and_queues_it(lead, spool_dir):
    data = jsonl(rec(1), rec(2))
    r = upload(lead, data, name="../../etc/passwd.jsonl", judge_name="vendor", update="on")
    assert r.status_code == 202
    assert "Queued: waiting for the task worker" in r.content.decode()
    batch = ImportBatch.objects.get()
    assert (batch.status, batch.bytes_total, batch.bytes_done, batch.dataset.name) == ("queued", len(data), 0, "web")
    assert batch.options == {"update": True, "judge_name": "vendor", "fmt": "auto", "mapping": {}}
    assert batch.file_sha256 == hashlib.sha256(data).hexdigest()
    (path,) = spool_dir.iterdir()
    assert path.name == batch.spool_path and "passwd" not in path.name and len(path.name) >= 30
    assert path.read_bytes() == data and stat.S_IMODE(path.stat().st_mode) == 0o600
    task = DBTaskResult.objects.get()
    assert task.task_path.endswith("import_task") and task.args_kwargs["args"] == [batch.pk]
    assert counts() == [0, 0, 0, 0]
    page = r.content.decode()
    assert f'hx-get="/import/{batch.pk}/" hx-trigger="every 1s"' in page and "<progress" in page
    assert 'class="tag warn">Queued</span>' in lead.get("/import/").content.decode()  # in the recent list


def test_it_keeps_a_small_upload_inline(lead, spool_dir, settings):
    settings.IMPORT_INLINE_BYTES = 1_000_000
    r = upload(lead, jsonl(rec(1), rec(2)))
    assert r.status_code == 200 and "Imported answers.jsonl into web" in r.content.decode()
    assert not DBTaskResult.objects.exists() and not spooled(spool_dir)


def test_it_imports_in_the_worker_reporting_progress_and_removes_the_spool(
    lead, spool_dir, settings, monkeypatch, django_assert_num_queries
):
    settings.IMPORT_PROGRESS_RECORDS = settings.IMPORT_BATCH_SIZE = 2  # a chunk is committed before each report
    data = jsonl(*[rec(i) for i in range(7)])
    upload(lead, data, judge_name="vendor")
    batch = ImportBatch.objects.get()
    seen = []
    real_write = spool.progress_write

    def watch(name, done, records):  # what the page shows while the worker runs
        real_write(name, done, records)
        r = lead.get(f"/import/{batch.pk}/", headers=POLL)
        listed = lead.get("/answers/").content.decode().count('<td><a href="/answers/')
        staged = Answer._base_manager.count()
        seen.append(
            (r.status_code, records, f'value="{done}"' in r.content.decode(), Answer.objects.count(), listed, staged)
        )

    monkeypatch.setattr("audit.ingest.run.progress_write", watch)
    run_queued_task()
    # committed chunk by chunk (staged), yet no answer is visible anywhere until the batch is done
    assert [s for s in seen if s[1] < 7] == [(200, 2, True, 0, 0, 2), (200, 4, True, 0, 0, 4), (200, 6, True, 0, 0, 6)]
    assert lead.get("/answers/").content.decode().count('<td><a href="/answers/') == 7
    batch.refresh_from_db()
    assert (batch.status, batch.created, batch.records_done) == ("done", 7, 7)
    assert batch.bytes_done == batch.bytes_total == len(data)
    assert batch.started_at <= batch.finished_at
    assert counts()[:2] == [7, 14] and not spooled(spool_dir)
    with django_assert_num_queries(3):  # session, user with roles, batch
        r = lead.get(f"/import/{batch.pk}/", headers=POLL)
    assert r.status_code == 286 and "Imported answers.jsonl into web" in r.content.decode()
    assert "hx-trigger" not in r.content.decode()
    assert "<html" in lead.get(f"/import/{batch.pk}/").content.decode()  # the page itself, without htmx


def test_it_keeps_the_poll_query_count_constant(lead, django_assert_num_queries):
    for n, dataset in ((1, "small"), (40, "large")):
        upload(lead, jsonl(*[rec(i) for i in range(n)]) + b"x" * 500, dataset=dataset)  # big enough, then bad
        run_queued_task()
    upload(lead, jsonl(*[rec(i) for i in range(30)]), dataset="ok")
    run_queued_task()
    batches = ImportBatch.objects.order_by("pk")
    assert [(b.status, len(b.errors)) for b in batches] == [("failed", 1), ("failed", 1), ("done", 0)]
    for b in batches:
        with django_assert_num_queries(3):
            assert lead.get(f"/import/{b.pk}/", headers=POLL).status_code == 286


def test_it_fails_a_bad_file_in_the_background_writing_nothing_and_keeping_the_errors(lead, spool_dir, settings):
    settings.IMPORT_BATCH_SIZE = 2  # batches already written before the bad line must be rolled back
    upload(lead, jsonl(*[rec(i) for i in range(5)], rec(9, answer=""), b"{oops"), dataset="brand-new")
    run_queued_task()
    batch = ImportBatch.objects.get()
    assert (batch.status, batch.dataset, batch.dataset_name) == ("failed", None, "brand-new")  # kept in the history
    assert not Dataset.objects.exists()  # ...but the dataset it created is gone
    assert [(e["line"], e["field"]) for e in batch.errors] == [(6, "answer"), (7, "")]
    assert counts() == [0, 0, 0, 0] and Answer._base_manager.count() == 0 and not spooled(spool_dir)
    r = lead.get(f"/import/{batch.pk}/", headers=POLL)
    page = r.content.decode()
    assert r.status_code == 286 and "Import failed: nothing was written" in page
    assert "line 6, <strong>answer</strong>: empty" in page and "line 7" in page
    assert "2 errors" in lead.get("/import/").content.decode()


def test_it_fails_a_batch_whose_spooled_file_is_gone_and_runs_a_batch_once(lead, spool_dir):
    upload(lead, jsonl(rec(1), rec(2)))
    batch = ImportBatch.objects.get()
    (spool_dir / batch.spool_path).unlink()
    run_queued_task()
    batch.refresh_from_db()
    assert batch.status == "failed" and "could not be read back" in batch.errors[0]["message"]
    assert import_run(batch.pk).status == "failed"  # a second delivery does nothing
    assert import_run(batch.pk + 1) is None


def test_it_shows_a_stalled_import(lead, settings):
    upload(lead, jsonl(rec(1), rec(2)))
    batch = ImportBatch.objects.get()
    ImportBatch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(minutes=7))
    page = lead.get(f"/import/{batch.pk}/", headers=POLL).content.decode()
    assert "no sign of progress for 7 minutes" in page and "Is the task worker" in page
    assert 'hx-trigger="every 10s"' in page  # slower, but it keeps looking: a worker may start later
    ImportBatch.objects.filter(pk=batch.pk).update(status="running", started_at=timezone.now())
    spool.progress_write(batch.spool_path, 300, 1)
    page = lead.get(f"/import/{batch.pk}/", headers=POLL).content.decode()
    assert "Stalled" not in page and 'value="300"' in page and "Started " in page
    ImportBatch.objects.filter(pk=batch.pk).update(started_at=timezone.now() - timedelta(minutes=9))
    settings.IMPORT_STALL_SECONDS = 0
    page = lead.get(f"/import/{batch.pk}/", headers=POLL).content.decode()
    assert "Stalled" in page and "The task worker may have stopped" in page


def test_it_lets_leads_only_see_imports(client, db):
    lead = make_user("lead", "lead")
    client.force_login(lead)
    upload(client, jsonl(rec(1), rec(2)))
    batch = ImportBatch.objects.get()
    client.force_login(make_user("ann", "annotator"))
    assert client.get(f"/import/{batch.pk}/").status_code == 403
    assert client.get(f"/import/{batch.pk}/", headers=POLL).status_code == 403
    assert client.get("/import/").status_code == 403
    client.force_login(make_user("lead2", "lead"))  # another lead may follow it
    assert client.get(f"/import/{batch.pk}/", headers=POLL).status_code == 200
    assert client.get(f"/import/{batch.pk + 1}/").status_code == 404


def test_it_refuses_to_spool_past_the_limit(spool_dir):
    with pytest.raises(spool.SpoolError, match="over the 10 bytes limit"):
        spool.spool_save(SimpleUploadedFile("a.jsonl", b"x" * 11), 10)
    assert not spooled(spool_dir)
    with pytest.raises(spool.SpoolError):
        spool.spool_open("../../etc/passwd")


@pytest.mark.django_db(transaction=True)
def test_it_is_imported_by_the_db_worker_command(client, spool_dir):
    client.force_login(make_user("lead", "lead"))
    data = jsonl(*[rec(i) for i in range(12)])
    assert upload(client, data).status_code == 202
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1", verbosity=0)
    batch = ImportBatch.objects.get()
    assert (batch.status, batch.created, batch.bytes_done, batch.bytes_total) == ("done", 12, len(data), len(data))
    assert Answer.objects.filter(dataset=Dataset.objects.get(name="web")).count() == 12
    assert DBTaskResult.objects.get().status == "SUCCESSFUL" and not spooled(spool_dir)


@pytest.mark.browser
def test_it_polls_a_background_import_to_its_result_in_chromium(
    live_server, page, login, transactional_db, tmp_path, spool_dir
):
    good = tmp_path / "big.jsonl"
    good.write_bytes(jsonl(*[rec(i) for i in range(5)]))
    login(page, make_user("lead", "lead"))
    page.goto(f"{live_server.url}/import/")
    page.set_input_files("input[name=file]", str(good))
    page.fill("input[name=new_dataset]", "browser")
    page.click("#import_panel button[type=submit]")
    page.wait_for_selector("text=Queued: waiting for the task worker")
    assert page.locator("#import_result progress").count() == 1
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1", verbosity=0)
    page.wait_for_selector("text=Imported big.jsonl into browser")  # the next poll swaps the result in
    assert "5\ncreated" in page.inner_text("#import_result")
    assert page.locator("#import_result[hx-trigger]").count() == 0 and page.js_errors == []


@pytest.mark.django_db(transaction=True)
def test_it_deletes_committed_chunks_of_a_failed_import_in_the_worker(client, spool_dir, settings):
    settings.IMPORT_BATCH_SIZE = 2  # real commits here: four chunks are in the database before line 9 fails
    client.force_login(make_user("lead", "lead"))
    assert upload(client, jsonl(*[rec(i) for i in range(8)], b"{oops"), dataset="fresh").status_code == 202
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1", verbosity=0)
    batch = ImportBatch.objects.get()
    assert (batch.status, batch.dataset_name, [e["line"] for e in batch.errors]) == ("failed", "fresh", [9])
    assert Answer._base_manager.count() == 0 and counts() == [0, 0, 0, 0] and not Dataset.objects.exists()
