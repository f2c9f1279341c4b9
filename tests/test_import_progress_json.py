"""A large .json file the worker reads whole (a pandas frame saved by to_json, a JSON array) reports its progress
as its records go, as a JSON lines file does: the bar is not full from the first report while most answers are
still to be checked. Uploaded through the web form, imported by a real task worker."""

import json

import pandas as pd

from audit.ingest import spool
from audit.models import ImportBatch
from tests.test_import_background import lead, run_queued_task, spool_dir, upload  # noqa: F401 (fixtures)


def frame(n):
    return pd.DataFrame(
        {
            "user_input": [f"Which plan has SSO? ({i})" for i in range(n)],
            "response": ["The Enterprise plan."] * n,
            "retrieved_contexts": [["SSO is on the Enterprise plan.", "SCIM comes with SSO."]] * n,
        }
    )


def progress_seen(client, data, name, settings, monkeypatch):
    settings.IMPORT_PROGRESS_RECORDS = 2
    upload(client, data, name=name)
    seen, real_write = [], spool.progress_write

    def watch(spool_name, done, records):
        real_write(spool_name, done, records)
        seen.append((records, done))

    monkeypatch.setattr("audit.ingest.run.progress_write", watch)
    run_queued_task()
    batch = ImportBatch.objects.get()
    assert (batch.status, batch.created, batch.bytes_done) == ("done", 9, len(data))
    return seen


def test_it_reports_a_pandas_frames_progress_row_by_row(lead, settings, monkeypatch):  # noqa: F811
    data = frame(9).to_json().encode()  # orient "columns": one line, read whole
    seen = progress_seen(lead, data, "results.json", settings, monkeypatch)
    assert [r for r, _ in seen] == [2, 4, 6, 8, 9]
    done = [d for _, d in seen]
    assert done == sorted(done) and done[0] < len(data) / 2 and done[-1] == len(data)


def test_it_reports_a_json_arrays_progress_record_by_record(lead, settings, monkeypatch):  # noqa: F811
    data = json.dumps(frame(9).to_dict(orient="records"), indent=1).encode()
    seen = progress_seen(lead, data, "results.json", settings, monkeypatch)
    done = [d for _, d in seen]
    assert done == sorted(done) and done[0] < len(data) / 2 and done[-1] == len(data)
