"""Acceptance, second round of real shapes (fixtures under tests/fixtures/formats/real/, hand-made in each
tool's export shape): Ragas 0.1 as its public sets are published (question, answer, contexts, ground_truths),
a pandas CSV of it, an Arize Phoenix span table flattened with dotted column names, a LangSmith run table
through pandas' json_normalize, HotpotQA's [title, sentences] context, RAGBench (question, documents, response
and its scores), HaluEval QA (one string of knowledge, a right and a hallucinated answer) and HaluBench (one
passage string and a PASS / FAIL label)."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from audit.models import Answer
from tests.test_import_real_shapes import REAL, Upload, passages, texts

PHOENIX = "\n".join(
    [
        "question=attributes.input.value",
        "answer=attributes.output.value",
        "passages=attributes.retrieval.documents",
        "passage.id=document.id",
        "passage.text=document.content",
    ]
)


class MoreShapesTests(Upload):
    def test_it_detects_ragas_0_1_samples_and_keeps_the_ground_truths_and_metrics(self):
        batch = self.upload("ragas_v01_amnesty.jsonl")
        self.assertEqual((batch.created, batch.errors), (2, []))
        a = Answer.objects.get(question__startswith="Which companies")
        self.assertEqual(a.text, "Fossil fuel companies such as Saudi Aramco are the main contributors.")
        self.assertEqual(texts(a), ["Fossil fuel companies account for most industrial GHG emissions since 1988."])
        self.assertEqual(
            a.meta, {"ground_truths": ["Fossil fuel companies."], "faithfulness": 1.0, "answer_relevancy": 0.9412}
        )
        first = Answer.objects.get(question__startswith="What are the global")
        self.assertEqual(len(texts(first)), 2)
        self.assertTrue(texts(first)[0].startswith("- In 2022, the USA Supreme Court"))

    def test_it_reads_ragchecker_results_a_file_of_one_object_holding_its_records(self):
        ragchecker = {  # the shape of RAGChecker's input and output file: records under "results", metrics beside
            "results": [
                {
                    "query_id": "q-7",
                    "query": "When was the Eiffel Tower completed?",
                    "gt_answer": "1889",
                    "response": "It was completed in 1889.",
                    "retrieved_context": [{"doc_id": "d-3", "text": "The tower was completed in March 1889."}],
                },
                {
                    "query_id": "q-8",
                    "query": "How tall is it?",
                    "gt_answer": "330 m",
                    "response": "About 330 metres.",
                    "retrieved_context": [{"doc_id": "d-4", "text": "It is 330 metres tall."}],
                },
            ],
            "metrics": {"overall_metrics": {"precision": 0.9}},
        }
        batch = self.upload("ragchecker.json", json.dumps(ragchecker).encode())
        self.assertEqual((batch.created, batch.errors), (2, []))
        a = Answer.objects.get(external_id="q-7")
        self.assertEqual((a.question, a.text), ("When was the Eiffel Tower completed?", "It was completed in 1889."))
        self.assertEqual(
            list(a.passages.values_list("external_id", "text")), [("d-3", "The tower was completed in March 1889.")]
        )
        self.assertEqual(a.meta["gt_answer"], "1889")

    def test_it_reads_a_long_one_line_results_file_and_keeps_a_records_own_data_field(self):
        results = [
            {
                "query_id": f"q-{i}",
                "query": f"Question {i}?",
                "response": "x" * 200,
                "retrieved_context": [{"doc_id": f"d-{i}", "text": "y" * 200}],
            }
            for i in range(300)
        ]
        one_line = json.dumps({"results": results}).encode()  # json.dump's default: one line, here over 64 KiB
        self.assertGreater(len(one_line), 1 << 16)
        self.assertEqual(self.upload("long.json", one_line, dataset="long").created, 300)
        record = {
            "id": "r-1",
            "question": "Q?",
            "answer": "A.",
            "passages": [{"id": "p", "text": "A."}],
            "data": [{"k": 1}, {"k": 2}],
        }  # a record's own list of objects is its field, not its file's records
        self.assertEqual(self.upload("one.json", json.dumps(record).encode(), dataset="one").created, 1)
        self.assertEqual(Answer.objects.get(external_id="r-1").meta, {"data": [{"k": 1}, {"k": 2}]})

    def test_it_reads_a_pandas_csv_of_ragas_0_1_with_python_list_cells(self):
        self.assertEqual(self.upload("ragas_v01_fiqa.csv").created, 1)
        a = Answer.objects.get()
        self.assertEqual(texts(a), ["A stock represents ownership in a corporation.", "Shares trade on exchanges."])
        self.assertEqual(a.meta, {"ground_truth": "A share of ownership.", "faithfulness": "1.0"})

    def test_it_maps_a_flattened_phoenix_span_table_by_its_dotted_column_names(self):
        batch = self.upload("phoenix_spans_flat.jsonl", format="mapping", mapping=PHOENIX)
        self.assertEqual((batch.created, batch.errors), (1, []))
        a = Answer.objects.get()
        self.assertEqual((a.question, a.text), ("What is the refund window?", "Refunds are accepted within 30 days."))
        self.assertEqual(
            passages(a),
            [
                (
                    "kb-12",
                    "",
                    "Refunds are accepted within 30 days of delivery.",
                    {"document.score": 0.82, "document.metadata": {"url": "https://help.example.com/refunds"}},
                ),
                ("kb-40", "", "Shipping takes 3-5 days.", {"document.score": 0.41}),
            ],
        )
        self.assertEqual(
            a.meta, {"context.span_id": "7f3a", "context.trace_id": "c91e", "name": "rag_query", "span_kind": "CHAIN"}
        )

    def test_it_detects_a_json_normalize_csv_of_langsmith_runs(self):
        batch = self.upload("langsmith_json_normalize.csv")
        self.assertEqual((batch.created, batch.errors), (1, []))
        a = Answer.objects.get()
        self.assertEqual((a.question, a.text), ("What is the refund window?", "Refunds are accepted within 30 days."))
        self.assertEqual(texts(a), ["Refunds are accepted within 30 days of delivery."])
        self.assertEqual(a.meta, {"run_id": "r1", "extra.latency": "0.41"})

    def test_it_joins_hotpotqa_sentences_into_one_passage_per_title(self):
        self.assertEqual(self.upload("hotpot_distractor.jsonl").created, 1)
        a = Answer.objects.get()
        self.assertEqual(
            [(text, meta) for _, _, text, meta in passages(a)],
            [
                (
                    "Ed Wood is a 1994 American biographical period comedy-drama film. It was directed by Tim Burton.",
                    {"title": "Ed Wood (film)"},
                ),
                (
                    "Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer.",
                    {"title": "Scott Derrickson"},
                ),
            ],
        )
        self.assertEqual(a.meta, {"_id": "5a8b57f25542995d1e6f1371", "type": "comparison"})

    def test_it_detects_a_ragbench_record_and_keeps_its_scores_for_strata(self):
        batch = self.upload("ragbench_covidqa.jsonl")
        self.assertEqual((batch.created, batch.errors), (1, []))
        a = Answer.objects.get()
        self.assertEqual(
            (a.external_id, a.text), ("1047", "The incubation period is up to 14 days, with a median of 4-5 days.")
        )
        self.assertEqual([t.split("\n")[0] for t in texts(a)], ["Title: Incubation", "Title: Symptoms"])
        self.assertEqual(
            (a.meta["dataset_name"], a.meta["generation_model_name"], a.meta["adherence_score"]),
            ("covidqa", "gpt-3.5-turbo-0125", True),
        )
        self.assertEqual(a.meta["response_sentences"], [["a", a.text]])

    def test_it_maps_halueval_knowledge_as_one_passage_and_either_answer(self):
        mapping = "answer=hallucinated_answer\npassages=knowledge"
        self.assertEqual(self.upload("halueval_qa.jsonl", format="mapping", mapping=mapping).created, 1)
        a = Answer.objects.get()
        self.assertEqual(a.text, "First for Women was started first.")
        self.assertEqual(len(texts(a)), 1)
        self.assertTrue(texts(a)[0].startswith("Arthur's Magazine (1844-1846)"))
        self.assertEqual(a.meta, {"right_answer": "Arthur's Magazine"})

    def test_it_reads_ragbench_as_hugging_face_publishes_it_in_parquet_like_its_json_lines(self):
        rows = [json.loads(line) for line in (REAL / "ragbench_covidqa.jsonl").read_text().splitlines()]
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buf)  # documents list<string>, sentence keys list<list<list>>
        self.upload("ragbench_covidqa.jsonl", dataset="jsonl")
        self.upload("train-00000-of-00001.parquet", buf.getvalue(), dataset="parquet")
        read = {
            a.dataset.name: (a.external_id, a.question, a.text, passages(a), a.meta)
            for a in Answer.objects.select_related("dataset")
        }
        self.assertEqual(read["parquet"], read["jsonl"])
        self.assertEqual(read["parquet"][4]["documents_sentences"][0][1][0], "0b")

    def test_it_detects_halubench_with_its_one_passage_and_keeps_the_label_for_strata(self):
        batch = self.upload("halubench.jsonl")
        self.assertEqual((batch.created, batch.errors), (2, []))
        a = Answer.objects.get(external_id="halueval-77")
        self.assertEqual((a.question, a.text), ("When did Arthur's Magazine stop?", "It stopped in 1850."))
        self.assertEqual(texts(a), ["Arthur's Magazine (1844-1846) was an American literary periodical."])
        self.assertEqual(a.meta, {"label": "FAIL", "source_ds": "halueval"})


class OddInputTests(Upload):
    """Values a file or a mapping can hold that must be a 400 naming the field, never a 500."""

    def test_it_takes_a_digit_that_is_not_ascii_as_a_key_not_a_list_index(self):
        rec = {"q": "Why?", "items": ["It is."], "ctx": ["It is, says the manual."]}
        errors = self.refused(
            "odd.jsonl", json.dumps(rec).encode(), format="mapping", mapping="question=q\nanswer=items.²\npassages=ctx"
        )
        self.assertEqual(errors, [(1, "items.²", "missing")])

    def test_it_refuses_a_csv_cell_python_cannot_build_naming_the_column(self):
        data = b'user_input,response,retrieved_contexts\nWhy?,Because.,"[{[]: 1}]"\n'
        [(line, field, message)] = self.refused("bad.csv", data)
        self.assertEqual((line, field), (2, "retrieved_contexts"))
        self.assertIn("not a Python literal either: a dict key that is not a string", message)

    def test_it_refuses_passage_metadata_the_database_cannot_store(self):
        rec = {
            "id": "a",
            "question": "Q?",
            "answer": "A.",
            "passages": [{"id": "p", "text": "T.", "title": "x\u0000y"}],
        }
        errors = self.refused("nul.jsonl", json.dumps(rec).encode())
        self.assertEqual([(line, field) for line, field, _ in errors], [(1, "passages[0].meta.title")])

    def test_it_leaves_out_of_meta_a_dotted_field_a_mapping_took_from_a_nested_object(self):
        rec = {"span": {"attributes.input.value": "Q?", "kind": "CHAIN"}, "out": "A.", "docs": ["A, says the doc."]}
        mapping = "question=span.attributes.input.value\nanswer=out\npassages=docs"
        self.assertEqual(
            self.upload("span.jsonl", json.dumps(rec).encode(), format="mapping", mapping=mapping).created, 1
        )
        a = Answer.objects.get()
        self.assertEqual((a.question, a.meta), ("Q?", {"span": {"kind": "CHAIN"}}))

    def test_it_refuses_a_parquet_map_keyed_by_lists_naming_the_file(self):
        kind = pa.map_(pa.list_(pa.string()), pa.string())
        table = pa.table(
            {"question": ["Q?"], "answer": ["A."], "passages": [["T."]], "tags": pa.array([[(["k"], "v")]], kind)}
        )
        buf = io.BytesIO()
        pq.write_table(table, buf)
        [(line, field, message)] = self.refused("map.parquet", buf.getvalue())
        self.assertEqual(field, "file")
        self.assertIn("map.parquet", message)
