"""Acceptance: CSV files pandas writes from frames holding dicts and lists. `to_csv()` writes such a cell as its
Python repr (single quotes, True, None): a RAGTruth merged frame's `source_info` and `labels`, a Ragas frame's
`retrieved_contexts`, and a Hugging Face dataset's list column as a numpy array (`['a' 'b']`, no commas). Each
imports as its JSONL twin does; a cell that is no literal is refused naming its column and line. The CSVs are
written by pandas itself and uploaded through the web form."""

import io
import json

import numpy as np
import pandas as pd

from audit.models import Answer
from tests.test_import_real_shapes import REAL, Upload, passages_of


class PythonLiteralCellTests(Upload):
    def test_it_reads_a_ragtruth_merged_frames_dict_and_list_cells_as_its_jsonl_does(self):
        rows = [json.loads(x) for x in (REAL / "ragtruth_joined.jsonl").read_text().splitlines()]
        body = pd.DataFrame(rows).to_csv(index=False)
        self.assertIn("{'question': 'what is the proper way", body)  # a dict cell, as pandas writes it
        self.assertEqual(self.upload("ragtruth_joined.jsonl", dataset="jsonl").created, 2)
        self.assertEqual(self.upload("ragtruth_merged.csv", body.encode(), dataset="csv").created, 2)
        for raw in rows:
            a, b = (Answer.objects.get(dataset__name=ds, external_id=raw["id"]) for ds in ("jsonl", "csv"))
            self.assertEqual((b.question, b.text), (a.question, a.text))
            self.assertEqual(passages_of(b), passages_of(a))
            self.assertEqual(len(passages_of(b)), raw["source_info"]["passages"].count("passage "))
            self.assertEqual((b.meta["labels"], b.meta["passages_raw"]), (a.meta["labels"], a.meta["passages_raw"]))
        flagged = Answer.objects.get(dataset__name="csv", external_id=rows[1]["id"])
        self.assertEqual(flagged.meta["labels"][0]["implicit_true"], rows[1]["labels"][0]["implicit_true"])
        self.assertEqual(flagged.meta["format_label"], rows[1]["format_label"])

    def test_it_reads_a_numpy_array_of_strings_as_its_items_not_one_joined_string(self):
        contexts = [
            "Refunds are accepted within 30 days of delivery, unless the item is damaged.",
            "Shipping takes 3-5 days; it's free over 50 EUR and always tracked by the carrier.",
        ]
        frame = pd.DataFrame(
            {
                "user_input": ["Can I get a refund?"],
                "response": ["Yes, within 30 days."],
                "retrieved_contexts": [np.array(contexts, dtype=object)],  # Dataset.to_pandas() keeps arrays
                "reference": ["Within 30 days."],
            }
        )
        body = frame.to_csv(index=False)
        self.assertIn('damaged.\'\n ""Shipping', body)  # no comma between the items
        self.assertEqual(self.upload("ragas_hf.csv", body.encode()).created, 1)
        self.assertEqual([t for _, t in passages_of(Answer.objects.get())], contexts)

    def test_it_refuses_a_cell_that_is_no_literal_naming_column_and_line(self):
        rows = [json.loads(x) for x in (REAL / "ragtruth_joined.jsonl").read_text().splitlines()]
        frame = pd.DataFrame(rows)
        frame.at[1, "source_info"] = {"question": "q", "passages": "passage 1:a", "score": np.float64(0.5)}
        frame.at[0, "labels"] = "[{'start': 1, 'end': __import__('os').getpid()}]"
        body = frame.to_csv(index=False)
        second = body[: body.index("\n" + rows[1]["id"] + ",")].count("\n") + 2  # quoted cells span lines
        errors = self.refused("ragtruth_merged.csv", body.encode())
        self.assertEqual([(line, field) for line, field, _ in errors], [(2, "labels"), (second, "source_info")])
        self.assertIn("not a Python literal either: \"__import__('os').get\" is not a literal", errors[0][2])
        self.assertIn("not a Python literal either: 'np.float64(0.5)}' is not a literal", errors[1][2])

    def test_it_refuses_an_expression_before_python_parses_it_and_a_cell_over_the_bound(self):
        sums = "[" + "1+" * 200_000 + "1]"  # Python's parser would take gigabytes of memory on it
        huge = repr(["x" * 1000] * 2200)  # over 2 MiB
        body = pd.DataFrame({"user_input": ["Q?", "Q?"], "response": ["A.", "A."], "retrieved_contexts": [sums, huge]})
        with self.settings(IMPORT_INLINE_BYTES=8 << 20):  # imported in the request, not queued for the worker
            errors = self.refused("ragas.csv", body.to_csv(index=False).encode())
        self.assertEqual(
            [(line, field) for line, field, _ in errors], [(2, "retrieved_contexts"), (3, "retrieved_contexts")]
        )
        self.assertIn("not a Python literal either: '+1+1+1+1+1+1+1+1+1+1' is not a literal", errors[0][2])
        self.assertIn("not a Python literal either: over 2,097,152 characters", errors[1][2])

    def test_it_reads_through_a_dict_cell_pandas_read_back_and_saved_as_json_lines(self):
        rows = [json.loads(x) for x in (REAL / "ragtruth_joined.jsonl").read_text().splitlines()]
        merged = pd.read_csv(io.StringIO(pd.DataFrame(rows).to_csv(index=False)))
        body = merged.to_json(orient="records", lines=True)
        self.assertIn('"source_info":"{\'question\': ', body)  # the dict is now the string pandas wrote
        self.assertEqual(self.upload("ragtruth_joined.jsonl", dataset="jsonl").created, 2)
        self.assertEqual(self.upload("reread.jsonl", body.encode(), dataset="reread").created, 2)
        for raw in rows:
            a, b = (Answer.objects.get(dataset__name=ds, external_id=raw["id"]) for ds in ("jsonl", "reread"))
            self.assertEqual((b.question, passages_of(b)), (a.question, passages_of(a)))
