"""Acceptance: a frame saved by pandas with `to_json(orient="table")` ({"schema": {...}, "data": [rows]}) imports
one answer per row; the schema (it describes the file, not an answer) and pandas' default index column are not
kept in any answer's meta, a named index is. Written by pandas itself, uploaded through the web form."""

import json

import pandas as pd

from audit.models import Answer
from claimaudit.services import api_token_create
from tests.factories import make_user
from tests.test_import_real_shapes import Upload


def ragas_frame(rows=2):
    return pd.DataFrame(
        {
            "user_input": [f"Which plan has SSO? ({i})" for i in range(rows)],
            "response": ["The Enterprise plan."] * rows,
            "retrieved_contexts": [["SSO is on the Enterprise plan.", "SCIM comes with SSO."]] * rows,
            "faithfulness": [1.0] * rows,
        }
    )


class TableOrientTests(Upload):
    def test_it_leaves_the_schema_and_the_default_index_out_of_each_answers_meta(self):
        body = ragas_frame().to_json(orient="table").encode()
        self.assertTrue(body.startswith(b'{"schema":{"fields":[{"name":"index"'))
        self.assertEqual(self.upload("results.json", body).created, 2)
        a = Answer.objects.get(question="Which plan has SSO? (1)")
        self.assertEqual(a.meta, {"faithfulness": 1.0})
        self.assertEqual(list(a.passages.values_list("text", flat=True))[1], "SCIM comes with SSO.")

    def test_it_keeps_a_named_index_and_reads_a_long_one_line_file(self):
        frame = ragas_frame(400).rename_axis("row")
        body = frame.to_json(orient="table").encode()
        self.assertGreater(len(body), 1 << 16)  # longer than the head a .json file is first told by
        self.assertEqual(body.count(b"\n"), 0)
        self.assertEqual(self.upload("results.json", body).created, 400)
        self.assertEqual(Answer.objects.get(question="Which plan has SSO? (7)").meta, {"faithfulness": 1.0, "row": 7})


class TableOrientApiTests(Upload):
    def test_it_reads_the_same_rows_through_the_api_and_refuses_a_bad_row_by_its_number(self):
        token = api_token_create(make_user("bot", "lead"), "ci")[1]
        auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
        frame = ragas_frame(3)
        r = self.client.post("/api/v1/datasets/t/answers", frame.to_json(orient="table"), "application/json", **auth)
        self.assertEqual((r.status_code, r.json()["created"]), (200, 3), r.content)
        self.assertEqual({json.dumps(a.meta) for a in Answer.objects.all()}, {'{"faithfulness": 1.0}'})
        frame.loc[2, "response"] = None
        bad = frame.assign(created_at=[1796030100000, 17, None]).to_json(orient="table")
        r = self.client.post("/api/v1/datasets/u/answers", bad, "application/json", **auth)
        self.assertEqual(r.status_code, 400)
        self.assertEqual([(e["line"], e["field"]) for e in r.json()["errors"]], [(2, "created_at"), (3, "response")])
        self.assertFalse(Answer._base_manager.filter(dataset__name="u").exists())
