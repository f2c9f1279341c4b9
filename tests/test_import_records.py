"""The import page counts records, not physical lines; a pandas index column is no field of the answer; a
refused upload says its file must be chosen again; the form fits its card at 1280 px."""

import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import TestCase

from audit.ingest.services import answers_import
from audit.models import Answer, ImportBatch
from tests.factories import make_user

REAL = Path(__file__).resolve().parent / "fixtures" / "formats" / "real"
PASSAGES = '"[{""id"": ""p1"", ""text"": ""Paris is the capital of France.""}]"'


def csv_rows(header, rows):
    return (header + "\n" + "".join(r + "\n" for r in rows)).encode()


def native_rows(index=None):
    """Three native CSV rows, the second with a quoted newline in its answer; `index`: the leading cells."""
    answers = ['"Paris is the capital."', '"Paris is the capital.\nIt is in France."', '"Paris."']
    lead = index or ["", "", ""]
    return [f"{lead[i]}a{i},Q{i}?,{answers[i]},{PASSAGES}" for i in range(3)]


def table_counts(page):
    row = page.split("<tbody>")[-1].split("</tr>")[0]
    return [c.split("</td>")[0] for c in row.split('<td class="num">')[1:]]


class RecordsTests(TestCase):
    def setUp(self):
        self.client.force_login(make_user("lead", "lead"))

    def upload(self, name, data, **fields):
        file = SimpleUploadedFile(name, data)
        return self.client.post("/import/", {"file": file, "new_dataset": name, **fields})

    def test_it_counts_records_read_not_physical_lines(self):
        r = self.upload("run.json", (REAL / "deepeval_test_run.json").read_bytes())
        assert "Imported run.json" in r.content.decode() and ">2</div>records read" in r.content.decode()
        assert table_counts(self.client.get("/import/").content.decode())[:2] == ["2", "2"]
        self.upload("quoted.csv", csv_rows("id,question,answer,passages", native_rows()))
        page = self.client.get("/import/").content.decode()
        assert '<th class="num">Records</th>' in page and table_counts(page)[:2] == ["3", "3"]
        assert ImportBatch.objects.get(file_name="quoted.csv").lines == 5  # header and a quoted newline: 5 lines

    def test_it_says_a_refused_import_imported_no_records_not_how_many_it_read_before_stopping(self):
        rows = native_rows()[:2] + ["a2,Q2?,,[]"]  # two good records, then one without an answer
        r = self.upload("refused.csv", csv_rows("id,question,answer,passages", rows))
        assert r.status_code == 400 and ImportBatch.objects.get().records_done == 2
        counts = table_counts(self.client.get("/import/").content.decode())
        assert counts == ['<span class="muted">none imported</span>', "0", "0", "0"]

    def test_it_says_the_command_read_records(self):
        out = io.StringIO()
        path = REAL / "deepeval_test_run.json"
        call_command("import_answers", str(path), "--dataset", "cmd", stdout=out)
        assert "(2 records read," in out.getvalue()

    def test_it_drops_a_pandas_index_column(self):
        for header, index in (
            (",id,question,answer,passages", ["0,", "1,", "2,"]),  # df.to_csv()
            ("Unnamed: 0,id,question,answer,passages", ["0,", "1,", "2,"]),  # read_csv, then to_csv(index=False)
            (",Unnamed: 0,id,question,answer,passages", ["0,0,", "1,1,", "2,2,"]),  # both
        ):
            name = f"pandas{len(header)}.csv"
            batch = answers_import(io.BytesIO(csv_rows(header, native_rows(index))), dataset_name=name, file_name=name)
            assert (batch.status, batch.created) == ("done", 3), (header, batch.errors)
            metas = list(Answer.objects.filter(dataset__name=name).values_list("meta", flat=True))
            assert metas == [{}, {}, {}], (header, metas)

    def test_it_keeps_an_unnamed_column_the_mapping_names(self):
        data = csv_rows("Unnamed: 0,q,a,ctx", ['k1,Q?,"Paris.","[""Paris is the capital.""]"'])
        batch = answers_import(
            io.BytesIO(data),
            dataset_name="m",
            file_name="m.csv",
            fmt="mapping",
            mapping={"id": "Unnamed: 0", "question": "q", "answer": "a", "passages": "ctx"},
        )
        assert batch.status == "done", batch.errors
        assert Answer.objects.get(dataset__name="m").external_id == "k1"

    def test_it_says_the_file_must_be_chosen_again_after_a_refusal(self):
        assert 'id="choose_again"' not in self.client.get("/import/").content.decode()
        r = self.client.post("/import/", {"file": SimpleUploadedFile("a.jsonl", b'{"id": 1}\n')})  # no dataset
        assert r.status_code == 400 and "Choose the file again" in r.content.decode()
        r = self.upload("bad.jsonl", b"{oops\n")  # an import that failed
        assert r.status_code == 400 and "Choose the file again" in r.content.decode()
        r = self.upload("bad.jsonl", b"{oops\n", format="nope")
        assert r.status_code == 400 and "Choose the file again" in r.content.decode()
        r = self.upload("ok.jsonl", (REAL / "deepeval_goldens.jsonl").read_bytes())
        assert r.status_code == 200 and "Choose the file again" not in r.content.decode()


@pytest.mark.browser
def test_it_keeps_the_import_form_inside_its_card_at_1280_px(live_server, page, login, transactional_db):
    login(page, make_user("lead", "lead"))
    page.goto(f"{live_server.url}/import/")
    card = page.locator("form.import-form").bounding_box()
    for selector in ("#id_format", "#id_mapping", ".field-help"):
        box = page.locator(selector).bounding_box()
        assert box["x"] + box["width"] <= card["x"] + card["width"] + 0.5, selector
    mapping, help_ = page.locator("#id_mapping").bounding_box(), page.locator(".field-help").bounding_box()
    assert help_["y"] >= mapping["y"] + mapping["height"] - 0.5  # below the textarea, not beside it
    assert page.js_errors == []
