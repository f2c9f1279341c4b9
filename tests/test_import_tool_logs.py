"""Acceptance, third round of real shapes (fixtures under tests/fixtures/formats/real/, hand-made in each tool's
export shape): a TruLens records table (its record_json a string of JSON the mapping reads through), an Arize
Phoenix span table of a LlamaIndex app (each document's metadata a string of JSON), a Ragas results CSV read back
by pandas and saved as JSON lines (its lists are the strings pandas wrote), DeepEval's evaluate() result dumped, a
frame saved by pandas' to_json in its default (columns) orient, a 5,000-word answer in an Excel-style CSV, and the
sets that are not answer logs (LLM-AggreFact, FaithBench, RAGTruth's response.jsonl alone, a LangSmith chain run
without its documents), refused naming what is missing."""

import json

import pandas as pd

from audit.models import Answer
from tests.test_import_more_shapes import PHOENIX as PHOENIX_SPANS
from tests.test_import_real_shapes import REAL, Upload, passages, texts

TRULENS = "\n".join(
    [
        "id=record_id",
        "question=record_json.main_input",
        "answer=record_json.main_output",
        "passages=record_json.calls.0.rets",
        "created_at=record_json.ts",
    ]
)
PHOENIX = PHOENIX_SPANS + "\npassage.source=document.metadata.file_path"  # LlamaIndex's metadata, as JSON text


class ToolLogTests(Upload):
    def test_it_maps_a_trulens_records_table_through_its_record_json_string(self):
        batch = self.upload("trulens_records.jsonl", format="mapping", mapping=TRULENS)
        self.assertEqual((batch.created, batch.errors), (2, []))
        a = Answer.objects.get(external_id="record_hash_0c8e5b1a3f")
        self.assertEqual(  # main_input, not the input column, which holds the question as JSON ('"When ...?"')
            (a.question, a.text, a.created_at.isoformat()),
            (
                "When was the University of Washington founded?",
                "The University of Washington was founded in 1861 in Seattle.",
                "2025-03-11T14:02:51.331712+00:00",
            ),
        )
        self.assertEqual(
            texts(a),
            [
                "The University of Washington, founded in 1861 in Seattle, is a public research university.",
                "Washington State University was founded in 1890 in Pullman.",
            ],
        )
        self.assertEqual((a.meta["Groundedness"], a.meta["Context Relevance"]), (0.95, 0.5))
        record = a.meta["record_json"]  # kept as its object, without what became the answer
        self.assertEqual((record["cost"]["n_tokens"], "main_input" in record), (412, False))
        self.assertEqual(("rets" in record["calls"][0], record["calls"][1]["args"]["query"]), (False, a.question))

    def test_it_reads_a_phoenix_documents_metadata_written_as_a_string_of_json(self):
        batch = self.upload("phoenix_spans_llamaindex.jsonl", format="mapping", mapping=PHOENIX)
        self.assertEqual((batch.created, batch.errors), (1, []))
        first, second = passages(Answer.objects.get())
        self.assertEqual(
            first[:3],
            (
                "5c0b9a7e-3f21-4c58-9d0e-6a1f2b7c8d90",
                "/data/kb/security/data-residency.md",
                "Enterprise customers can request a dedicated EU data region. Data at rest is encrypted with AES-256.",
            ),
        )
        self.assertEqual(first[3]["document.metadata"]["file_name"], "data-residency.md")
        self.assertNotIn("file_path", first[3]["document.metadata"])  # it is the source, not stored twice
        self.assertEqual((second[1], second[3]["document.score"]), ("/data/kb/security/backups.md", 0.7912))

    def test_it_reads_a_deepeval_evaluation_result_dumped_with_its_test_results(self):
        self.assertEqual(self.upload("deepeval_evaluation_result.json").created, 2)
        a = Answer.objects.get(meta__name="test_case_0")
        self.assertEqual(
            (a.question, texts(a)),
            (
                "How fast does support answer?",
                ["Premium support is available 24/7 by phone.", "Standard support answers within one business day."],
            ),
        )
        self.assertEqual((a.meta["metrics_data"][0]["score"], a.meta["additional_metadata"]["plan"]), (0.5, "standard"))
        self.assertEqual(a.meta["file"], {"confident_link": None, "test_run_id": None})

    def test_it_splits_a_list_pandas_wrote_as_text_into_passages_not_one_passage(self):
        self.assertEqual(self.upload("ragas_csv_reread.jsonl").created, 2)
        a = Answer.objects.get(question__startswith="Which regions")
        self.assertEqual(
            texts(a),
            [
                "Workspaces can be hosted in the US (Virginia) or the EU (Frankfurt).",
                "Moving a workspace between regions isn't supported after creation.",
            ],
        )
        self.assertEqual(a.meta["context_precision"], None)
        scim = Answer.objects.get(question__startswith="Is SCIM")  # a JSON list as text
        self.assertEqual(texts(scim), ["SCIM provisioning is included on the Enterprise plan."])

    def test_it_keeps_a_context_string_that_only_looks_like_a_list_as_one_passage(self):
        rec = {"input": "Which footnote?", "output": "Footnote 2.", "context": "[2] See the appendix.", "id": "fn"}
        self.upload("fn.jsonl", json.dumps(rec).encode())
        self.assertEqual(texts(Answer.objects.get()), ["[2] See the appendix."])


class NotAnswerLogTests(Upload):
    """Claim- or summary-level sets have no question: refused, the error naming the fields the record has."""

    def test_it_refuses_llm_aggrefact_faithbench_and_ragtruth_responses_naming_their_fields(self):
        hint = " (no known shape has these fields: {}; name yours with the mapping format, e.g. question=...)"
        for name, line, fields in (
            ("llm_aggrefact.jsonl", 1, "dataset, doc, claim, label"),
            ("faithbench.json", 1, "sample_id, source, summary, annotations, metadata"),
            ("ragtruth_response.jsonl", 1, "id, source_id, model, temperature, labels, split, quality, response"),
        ):
            with self.subTest(name):
                errors = self.refused(name)
                self.assertEqual(
                    errors[:3],
                    [
                        (line, "question", "missing" + hint.format(fields)),
                        (line, "answer", "missing"),
                        (line, "passages", "missing"),
                    ],
                )

    def test_it_names_the_columns_of_a_csv_no_shape_knows(self):
        data = b"dataset,doc,claim,label\r\nAggreFact-CNN,The vote was 7-2.,It was unanimous.,0\r\n"
        errors = {field: message for _, field, message in self.refused("aggrefact.csv", data)}
        self.assertEqual(
            errors["question"],
            "missing column in the CSV header"
            + " (no known shape has these fields: dataset, doc, claim, label; name yours with the mapping format, e.g."
            + " question=...)",
        )

    def test_it_keeps_the_plain_message_when_a_mapping_names_the_fields(self):
        errors = self.refused("llm_aggrefact.jsonl", format="mapping", mapping="answer=claim\npassages=doc")
        self.assertEqual(errors, [(1, "question", "missing"), (2, "question", "missing")])

    def test_it_lists_the_names_it_looked_for_when_a_langsmith_run_has_no_documents(self):
        run = {"id": "1f0c2a9e-7b3d-4e15-9c8a-2d4b6f8e0a13", "name": "RunnableSequence", "run_type": "chain"}
        run |= {"inputs": {"input": "How do I reset MFA?"}, "outputs": {"output": "Ask an admin."}, "error": None}
        [(line, field, message)] = self.refused("runs.jsonl", json.dumps(run).encode())
        self.assertEqual((line, field), (1, "context"))
        self.assertEqual(
            message,
            "missing (looked for context, source_documents, documents, outputs.source_documents, outputs.context, "
            "outputs.documents, contexts, passage, retrieved_context)",
        )

    def test_it_refuses_an_expertqa_example_naming_its_answers_and_systems(self):
        # ExpertQA's r2_compiled_anon.jsonl: one object per question, answers keyed by system, claims inside
        errors = self.refused("expertqa_r2.jsonl")
        self.assertEqual(
            errors,
            [
                (
                    1,
                    "answers",
                    "an ExpertQA example holds the answers of 2 systems (gpt4, rr_sphere_gpt4), each with its own"
                    " claims and evidence: not imported as one answer. Write one record per system first"
                    " (answer=answers.<system>.answer_string, passages from its claims' evidence):"
                    " see IMPORT_SHAPES.md",
                )
            ],
        )


class LongAnswerTests(Upload):
    def test_it_reads_a_5000_word_answer_with_45_multi_line_passages_from_an_excel_csv(self):
        sentences = [
            f"Seal {i} must be inspected every {i % 4 + 1} quarters; replace it above {i} drops a minute."
            for i in range(550)
        ]
        answer = "\r\n\r\n".join(" ".join(sentences[i : i + 10]) for i in range(0, 550, 10))  # 55 paragraphs
        docs = [
            {
                "id": 1000 + i,
                "source": f"O&M manual rev. C, p. {12 + i}",
                "text": f'Section {i + 1}.\n"Note"; {sentences[i] * 20}',
                "score": None,
            }
            for i in range(45)
        ]
        cells = [
            "exp-1",
            "Wie oft muss die Pumpendichtung geprüft werden?",
            answer,
            json.dumps(docs, ensure_ascii=False),
            "gpt-4o",
        ]
        row = ";".join('"' + c.replace('"', '""') + '"' for c in cells)
        data = "\ufeffid;question;answer;passages;model\r\n" + row + "\r\n"
        self.assertEqual(self.upload("long.csv", data.encode()).created, 1)
        a = Answer.objects.get()
        self.assertGreater(len(a.text.split()), 5000)
        self.assertEqual((a.text, a.meta), (answer, {"model": "gpt-4o"}))
        stored = passages(a)
        self.assertEqual([p[0] for p in stored], [str(1000 + i) for i in range(45)])  # in order, integer ids as text
        self.assertEqual(stored[44][1:], (docs[44]["source"], docs[44]["text"], {"score": None}))


def stored(dataset):
    answers = Answer.objects.filter(dataset__name=dataset).order_by("question")
    return [(a.question, a.text, a.meta, passages(a)) for a in answers]


class PandasJsonTests(Upload):
    """`DataFrame.to_json(path)` without orient= writes columns ({column: {row: value}}), not records."""

    def frame(self):
        return pd.read_json(REAL / "ragas_results.jsonl", lines=True)

    def test_it_reads_the_rows_of_a_frame_saved_in_to_json_default_columns_orient_and_the_others(self):
        self.upload("ragas_results.jsonl", dataset="records")
        for orient in ("columns", "index", "split"):
            with self.subTest(orient):
                data = self.frame().to_json(orient=orient).encode()
                self.assertEqual(data.count(b"\n"), 0)
                self.assertEqual(self.upload("results.json", data, dataset=orient).created, 3)
                self.assertEqual(stored(orient), stored("records"))

    def test_it_names_a_bad_row_of_a_frame_by_its_number(self):
        frame = self.frame()
        frame.loc[1, "response"] = None
        errors = self.refused("results.json", frame.to_json().encode())
        self.assertEqual(errors, [(2, "response", "missing")])

    def test_it_reads_a_long_one_line_frame_by_how_it_starts(self):
        frame = self.frame()
        frame.loc[0, "reference"] = "x" * 70_000  # the file's first 64 KiB hold no whole line
        self.assertEqual(self.upload("results.json", frame.to_json().encode()).created, 3)
        self.assertEqual(len(Answer.objects.get(question__startswith="How long").meta["reference"]), 70_000)
