"""Acceptance: an answer's time as tools and pandas write it. pandas' `to_json()` writes a datetime as epoch
milliseconds (seconds with date_unit="s"), its `to_csv()` as "2026-11-30 09:15:00+00:00"; a LangSmith run's
start_time lands as created_at in each form. A number outside 1990..2100 in every unit is refused naming
created_at. The files are written by pandas itself and uploaded through the web form."""

import json
import warnings

import pandas as pd

from audit.models import Answer
from tests.test_import_real_shapes import Upload

WHEN = pd.Timestamp("2026-11-30 09:15:00.250", tz="UTC")


def runs_frame():
    """Two LangSmith runs as a frame (what `client.list_runs()` gives once turned into rows)."""
    return pd.DataFrame(
        {
            "id": ["run-1", "run-2"],
            "start_time": [WHEN, WHEN + pd.Timedelta(minutes=1)],
            "inputs": [{"question": "Which plan has SSO?"}, {"question": "Is SCIM included?"}],
            "outputs": [
                {"answer": "Enterprise.", "context": "SSO is on the Enterprise plan."},
                {"answer": "Yes.", "context": "SCIM comes with SSO."},
            ],
        }
    )


def to_json(frame, **kw):
    with warnings.catch_warnings():  # pandas 3 warns that its epoch default will change to ISO
        warnings.simplefilter("ignore")
        return frame.to_json(orient="records", lines=True, **kw).encode()


class PandasTimeTests(Upload):
    def times(self):
        return sorted(a.isoformat() for a in Answer.objects.values_list("created_at", flat=True))

    def test_it_reads_pandas_epoch_milliseconds_and_seconds_as_the_run_start_time(self):
        for unit, expected in (
            ("ms", ["2026-11-30T09:15:00.250000+00:00", "2026-11-30T09:16:00.250000+00:00"]),
            ("s", ["2026-11-30T09:15:00+00:00", "2026-11-30T09:16:00+00:00"]),
        ):
            with self.subTest(unit):
                body = to_json(runs_frame(), date_unit=unit)
                self.assertIn(b'"start_time":1796030100', body)  # an epoch number, as pandas writes it
                self.assertEqual(self.upload("runs.jsonl", body, dataset=unit).created, 2)
                self.assertEqual(self.times(), expected)
                Answer.objects.all().delete()

    def test_it_reads_pandas_iso_and_csv_text_times(self):
        frame = runs_frame()
        self.upload("runs.jsonl", to_json(frame, date_format="iso"), dataset="iso")
        iso = self.times()
        Answer.objects.all().delete()
        table = frame.assign(question=[r["question"] for r in frame.inputs])
        table = table.assign(answer=[r["answer"] for r in frame.outputs])
        table = table.assign(passages=['["SSO is on the Enterprise plan."]', '["SCIM comes with SSO."]'])
        csv = table.drop(columns=["inputs", "outputs"]).rename(columns={"start_time": "created_at"}).to_csv(index=False)
        self.assertIn("run-1,2026-11-30 09:15:00.250+00:00,", csv)  # pandas' text for a timestamp
        self.assertEqual(self.upload("runs.csv", csv.encode(), dataset="csv").created, 2)
        self.assertEqual(self.times(), iso)
        self.assertEqual(iso[0], "2026-11-30T09:15:00.250000+00:00")

    def test_it_maps_an_epoch_column_and_reads_a_string_of_epoch_digits(self):
        rec = {"prompt": "Q?", "completion": "A.", "ctx": ["A."], "ts": 1796030100}
        mapping = "question=prompt\nanswer=completion\npassages=ctx\ncreated_at=ts"
        for ts in (1796030100, 1796030100.5, "1796030100", 1796030100250000, 1796030100250000123):
            with self.subTest(ts):
                self.upload("m.jsonl", json.dumps(rec | {"ts": ts}).encode(), format="mapping", mapping=mapping)
                self.assertEqual(self.times()[0][:19], "2026-11-30T09:15:00")
                Answer.objects.all().delete()

    def test_it_refuses_numbers_that_are_no_time_between_1990_and_2100_naming_the_field(self):
        lines = [
            {"id": f"a{i}", "question": "Q?", "answer": "A.", "passages": [], "created_at": value}
            for i, value in enumerate((17, 4102444800, 631151999999, 1e30, True, -1796030100, "17960301x"), 1)
        ]
        body = "\n".join(json.dumps(r) for r in lines).encode()
        errors = self.refused("times.jsonl", body)
        self.assertEqual([(line, field) for line, field, _ in errors], [(i, "created_at") for i in range(1, 8)])
        self.assertEqual(
            errors[0][2],
            "epoch number 17 is not a time between 1990 and 2100 in seconds, milliseconds, microseconds, nanoseconds",
        )
        self.assertEqual(errors[4][2], "must be an ISO 8601 string or an epoch number, got bool")
        self.assertEqual(errors[6][2], "not an ISO 8601 date-time nor an epoch number: '17960301x'")

    def test_it_takes_an_empty_time_cell_as_no_time_in_a_mapped_csv_column(self):
        frame = runs_frame().assign(question=["Q1?", "Q2?"], answer=["A1.", "A2."], passages=['["P1."]', '["P2."]'])
        frame.loc[1, "start_time"] = pd.NaT  # pandas writes a missing time as an empty cell
        csv = frame.drop(columns=["inputs", "outputs"]).to_csv(index=False)
        self.assertIn("\nrun-2,,Q2?", csv)
        mapping = "id=id\nquestion=question\nanswer=answer\npassages=passages\ncreated_at=start_time"
        self.assertEqual(self.upload("runs.csv", csv.encode(), format="mapping", mapping=mapping).created, 2)
        batch_time = Answer.objects.get(external_id="run-2").import_batch.created_at
        self.assertEqual(Answer.objects.get(external_id="run-1").created_at.isoformat()[:19], "2026-11-30T09:15:00")
        self.assertLess(abs((Answer.objects.get(external_id="run-2").created_at - batch_time).total_seconds()), 60)
