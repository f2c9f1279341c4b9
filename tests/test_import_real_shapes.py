"""Acceptance: files as real tools write them, imported through the web form and the API, then read back from
the database (question, answer, passages, meta, claims, created_at), or refused naming line and field as the
file spells them. The files under tests/fixtures/formats/real/ are hand-made in each tool's export shape:
Ragas (pandas CSV and JSONL), DeepEval (save_as json/csv/jsonl, a test run), LangSmith runs, a Langfuse
trace, Hugging Face JSONL, RAGTruth, Excel CSV and edge cases."""

import json
import tempfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase
from django_tasks_db.models import DBTaskResult

from audit.models import Answer, ImportBatch, JudgeVerdict
from claimaudit.services import api_token_create
from tests.factories import make_user, worker_run

REAL = Path(__file__).resolve().parent / "fixtures" / "formats" / "real"
DEMO = Path(__file__).resolve().parent.parent / "claimaudit" / "demo_data" / "ragtruth_qa_visible.jsonl"
LANGFUSE = "id=id\nquestion=input.question\nanswer=output.answer\ncreated_at=timestamp\n"
LANGFUSE += "passages=observations.0.output.documents\npassage.text=content"
UNITS = "seconds, milliseconds, microseconds, nanoseconds"


def passages(answer):
    return list(answer.passages.values_list("external_id", "source", "text", "meta"))


def passages_of(answer):
    return list(answer.passages.values_list("external_id", "text"))


def texts(answer):
    return list(answer.passages.values_list("text", flat=True))


class Upload(TestCase):
    def setUp(self):
        self.client.force_login(make_user("lead", "lead"))

    def upload(self, name, data=None, status=200, dataset="real", **fields):
        data = (REAL / name).read_bytes() if data is None else data
        file = SimpleUploadedFile(name, data)
        r = self.client.post("/import/", {"file": file, "new_dataset": dataset, **fields})
        self.assertEqual(r.status_code, status, r.content.decode()[-1500:])
        return ImportBatch.objects.latest("id")

    def refused(self, name, data=None, **fields):
        before = Answer._base_manager.count()
        batch = self.upload(name, data, status=400, **fields)
        self.assertEqual(Answer._base_manager.count(), before)  # nothing written, nothing left staged
        return [(e["line"], e["field"], e["message"]) for e in batch.errors]


class RagasTests(Upload):
    def test_it_imports_a_pandas_results_csv_with_python_list_cells_and_empty_nan_cells(self):
        self.assertEqual(self.upload("ragas_results.csv").created, 3)
        a = Answer.objects.get(question="Can I get a refund after 30 days?")
        self.assertEqual(
            a.text, "No. Returns are accepted within 30 days of delivery.\nRefunds then take 5–7 working days."
        )
        self.assertEqual(
            texts(a),
            [
                "Returns are accepted within 30 days of delivery.",
                "If the item doesn't work, contact support: we'll arrange a \"no questions asked\" replacement.",
                "Rückerstattungen dauern 5–7 Werktage (München-Lager).",
            ],
        )
        # a CSV cell is text: metrics stay as written, a NaN (an empty cell) is "", an empty list cell is left out
        self.assertEqual(
            a.meta,
            {"reference": "No; the return window is 30 days.", "faithfulness": "", "answer_relevancy": "0.8812"}
            | {"context_precision": "0.5"},
        )
        first = Answer.objects.get(question__startswith="How long")
        self.assertEqual(first.meta["reference_contexts"], [texts(first)[0]])

    def test_it_gives_the_same_passages_from_to_jsonl_and_from_pandas_json_lines(self):
        self.upload("ragas_results.csv", dataset="csv")
        self.upload("ragas_dataset.jsonl", dataset="samples")
        self.upload("ragas_results.jsonl", dataset="results")
        q = "Can I get a refund after 30 days?"
        rows = {ds: passages(Answer.objects.get(dataset__name=ds, question=q)) for ds in ("csv", "samples", "results")}
        self.assertEqual(rows["csv"], rows["samples"])
        self.assertEqual(rows["csv"], rows["results"])  # pandas' \u00fc and \/ escapes decode alike
        a = Answer.objects.get(dataset__name="results", question=q)
        self.assertEqual((a.meta["faithfulness"], a.meta["answer_relevancy"]), (None, 0.8812))  # NaN as null

    def test_it_refuses_a_bare_nan_naming_the_line_and_every_field_holding_one(self):
        nan = "malformed JSON: NaN is not allowed (in {}: write null for a missing value)"
        self.assertEqual(
            self.refused("ragas_results_nan.jsonl"),
            [
                (2, "", nan.format("reference_contexts, faithfulness")),
                (3, "", nan.format("reference, answer_relevancy")),
            ],
        )

    def test_it_keeps_a_ragas_file_own_id_and_created_at(self):
        rec = {"id": "q-17", "created_at": "2025-02-11T08:42:17Z", "question": "stray", "user_input": "Q?"}
        rec |= {"response": "A.", "retrieved_contexts": ["A."]}
        self.upload("own.jsonl", json.dumps(rec).encode())
        a = Answer.objects.get()
        self.assertEqual((a.external_id, a.created_at.isoformat()), ("q-17", "2025-02-11T08:42:17+00:00"))
        self.assertEqual((a.question, a.meta), ("Q?", {"question": "stray"}))  # ragas takes question from user_input


class DeepEvalTests(Upload):
    def test_it_imports_goldens_saved_as_json(self):
        self.assertEqual(self.upload("deepeval_goldens.json").created, 2)
        a = Answer.objects.get(meta__name="key-rotation")
        self.assertEqual(a.question, "How do I rotate an API key without downtime?")
        self.assertEqual(len(texts(a)), 2)
        self.assertEqual(a.meta["additional_metadata"]["doc_type"], "how-to")
        self.assertEqual(a.meta["tools_called"][0]["inputParameters"], {"query": "rotate api key", "top_k": 2})
        self.assertEqual(a.meta["context"], ["Projects support two concurrent keys to allow zero-downtime rotation."])

    def test_it_splits_the_lists_save_as_joins_with_a_pipe_in_csv_and_jsonl(self):
        self.upload("deepeval_goldens.json", dataset="json")
        for name in ("deepeval_goldens.csv", "deepeval_goldens.jsonl"):
            self.assertEqual(self.upload(name, dataset=name).created, 2)
            for json_answer in Answer.objects.filter(dataset__name="json"):
                a = Answer.objects.get(dataset__name=name, question=json_answer.question)
                self.assertEqual(passages(a), passages(json_answer), name)
                self.assertEqual(a.meta["additional_metadata"], json_answer.meta["additional_metadata"], name)
        a = Answer.objects.get(dataset__name="deepeval_goldens.csv", meta__name="key-rotation")
        self.assertEqual(a.meta["tools_called"][0]["name"], "search_docs")  # a JSON cell, decoded
        self.assertEqual(a.meta["context"], ["Projects support two concurrent keys to allow zero-downtime rotation."])

    def test_it_imports_a_test_run_with_camel_case_fields_under_test_cases(self):
        self.assertEqual(self.upload("deepeval_test_run.json").created, 2)
        a = Answer.objects.get(meta__name="test_case_1")
        self.assertEqual(a.text, "Les journaux d'audit sont conservés 400 jours, puis supprimés définitivement.")
        self.assertEqual(
            texts(a), ["Audit logs are retained for 400 days on the Enterprise plan and 90 days on other plans."]
        )
        self.assertEqual((a.meta["metricsData"][0]["score"], a.meta["success"]), (0.5, False))
        self.assertEqual(a.meta["additionalMetadata"]["locale"], "fr-FR")
        self.assertEqual(a.meta["file"]["hyperparameters"], {"model": "gpt-4o-mini", "prompt_template": "rag-v3"})
        self.assertNotIn("metricsScores", a.meta["file"])  # the run's summary lists are not copied to each answer

    def test_it_names_the_line_and_camel_case_field_of_a_bad_test_case(self):
        run = json.loads((REAL / "deepeval_test_run.json").read_text())
        run["testCases"][1]["actualOutput"] = None
        data = json.dumps(run, indent=2).encode()
        line = data[: data.index(b'"name": "test_case_1"')].count(b"\n")  # its "{" is on the line before
        self.assertEqual(self.refused("run.json", data), [(line, "actualOutput", "missing")])

    def test_it_refuses_multi_turn_test_cases_instead_of_skipping_them(self):
        run = json.loads((REAL / "deepeval_test_run.json").read_text())
        run["conversationalTestCases"] = [{"name": "chat_0", "turns": []}]
        errors = self.refused("run.json", json.dumps(run, indent=2).encode())
        self.assertEqual(
            errors, [(1, "conversationalTestCases", "multi-turn test cases are not answers: not imported")]
        )


class LangChainTests(Upload):
    def test_it_imports_langsmith_runs_with_their_ids_start_times_and_documents(self):
        self.assertEqual(self.upload("langsmith_runs.jsonl").created, 2)
        a = Answer.objects.get(external_id="0b7e4b5e-4c1a-4f3e-9a51-2f1d3c9b8e01")
        self.assertEqual(a.question, "Can I pay annually by bank transfer?")
        self.assertEqual(a.created_at.isoformat(), "2025-02-11T08:42:17.204000+00:00")
        p0, p1 = passages(a)
        self.assertEqual(p0[:2], ("billing-pm-2", "https://docs.example.com/billing/payment-methods"))
        self.assertEqual(p0[3], {"page": 2, "title": "Payment methods", "type": "Document"})
        self.assertEqual((p1[1], p1[3]["start_index"]), ("s3://kb-export/billing/invoices.pdf", 1380))
        # what the shape took is not stored twice; what else inputs held is kept
        self.assertEqual(a.meta["inputs"], {"chat_history": []})
        self.assertNotIn("outputs", a.meta)
        self.assertEqual(a.meta["extra"]["metadata"]["revision_id"], "rag-v7")
        self.assertEqual(a.meta["end_time"], "2025-02-11T08:42:19.871Z")
        qa = Answer.objects.get(external_id="7c9d2a10-88f3-4b6e-b0a2-51e6f7a8c902")  # query/result, dumpd documents
        self.assertEqual(
            (qa.question, qa.text),
            ("Is SSO available on the Team plan?", "SSO is available on the Enterprise plan only."),
        )
        ((_, source, text, meta),) = passages(qa)
        self.assertEqual(
            (source, text[:15], meta), ("docs/plans.md", "Single sign-on ", {"title": "Plans", "type": "Document"})
        )

    def test_it_maps_a_langfuse_documents_metadata_source_to_the_passage_source(self):
        doc = {"content": "Starter: 5 seats.", "metadata": {"source": "kb/pricing.md", "page": 2}}
        trace = {
            "id": "t-1",
            "input": {"question": "How many seats?"},
            "output": {"answer": "Five."},
            "observations": [{"name": "retrieve", "output": {"documents": [doc]}}],
        }
        mapping = LANGFUSE.replace("created_at=timestamp\n", "") + "\npassage.source=metadata.source"
        self.assertEqual(
            self.upload("lf.json", json.dumps([trace]).encode(), format="mapping", mapping=mapping).created, 1
        )
        [(_, source, text, meta)] = passages(Answer.objects.get())
        self.assertEqual((source, text, meta), ("kb/pricing.md", "Starter: 5 seats.", {"metadata": {"page": 2}}))

    def test_it_maps_a_langfuse_trace_through_a_list_index(self):
        self.assertEqual(self.upload("langfuse_traces.json", format="mapping", mapping=LANGFUSE).created, 1)
        a = Answer.objects.get()
        self.assertEqual(
            (a.external_id, a.created_at.isoformat()), ("trace-4f1a9c", "2025-03-14T16:20:05.331000+00:00")
        )
        self.assertEqual(a.text, "The Starter plan includes 5 seats; more can be added for $8 each.")
        self.assertEqual(
            passages(a)[0],
            ("pricing#starter", "", "Starter: 5 seats included. Extra seats are $8 per seat per month.")
            + ({"score": 0.83, "url": "https://example.com/pricing#starter"},),
        )
        retrieve, generate = a.meta["observations"]
        self.assertEqual((retrieve["name"], "output" in retrieve), ("retrieve", False))  # its documents are passages
        self.assertEqual(generate["usage"]["total"], 678)
        self.assertEqual((a.meta["scores"][0]["value"], a.meta["metadata"]["doc_type"]), (0.5, "pricing"))
        self.assertNotIn("input", a.meta)  # its only field became the question


class HuggingFaceTests(Upload):
    def test_it_imports_jsonl_with_a_bom_crlf_a_blank_last_line_and_unicode(self):
        batch = self.upload("hf_nq_ctxs.jsonl", format="mapping", mapping="answer=prediction\npassages=ctxs")
        self.assertEqual((batch.created, batch.errors), (2, []))
        a = Answer.objects.get(external_id="cmrc-0042")  # id and question keep their native meaning
        self.assertEqual((a.question, a.text), ("长城有多长？", "长城全长约21196公里 🧱，是世界上最长的建筑。"))
        self.assertEqual(a.meta, {"answers": ["21196.18公里"]})
        ar, he = passages(a)[1:]
        self.assertEqual(
            (ar[0], ar[2], ar[3]["title"]),
            ("arwiki:11", "يبلغ طول سور الصين العظيم حوالي 21 ألف كيلومتر.", "سور الصين العظيم"),
        )
        self.assertEqual((he[2], he[3]["score"]), ('אורך החומה כ־21,000 ק"מ.', "38.0"))
        nq = Answer.objects.get(external_id="nq-dev-00017")
        self.assertEqual(
            passages(nq)[1],
            ("wiki:2140126", "", "", {"has_answer": False, "score": "71.02", "title": "Committee of Five"}),
        )

    def test_it_keeps_a_passage_field_the_mapping_replaced_in_the_passage_meta(self):
        rec = {
            "id": "nq-1",
            "question": "q?",
            "prediction": "a.",
            "ctxs": [{"id": 628725, "pid": "w:628725", "text": "a."}],
        }
        mapping = "answer=prediction\npassages=ctxs\npassage.id=pid"
        self.upload("ids.jsonl", json.dumps(rec).encode(), format="mapping", mapping=mapping)
        self.assertEqual(passages(Answer.objects.get()), [("w:628725", "", "a.", {"id": 628725})])

    def test_it_refuses_nested_context_lists_naming_each_item(self):
        errors = self.refused("hf_nested_contexts.jsonl", format="mapping", mapping="passages=contexts")
        self.assertEqual(errors, [(1, f"contexts[{i}]", "must be an object, got list") for i in (0, 1)])

    def test_it_imports_a_long_expert_answer_with_every_claim_located_and_checked(self):
        claims, docs = [], []
        for i in range(17):
            fact = f"Valve V-{i:02d} must be torqued to {40 + i} Nm before the pressure test."
            docs.append(
                {
                    "id": f"manual-{i:02d}",
                    "source": f"manual.pdf#page={i + 3}",
                    "text": f"{'Context. ' * 220}{fact} {'More. ' * 40}",
                }
            )
            claims.append({"text": fact, "verdict": "supported", "evidence": fact, "passage_id": f"manual-{i:02d}"})
        rec = {
            "id": "expert-1",
            "question": "What are the torque values?",
            "answer": " ".join(c["text"] for c in claims),
        }
        rec |= {"passages": docs, "claims": claims}
        self.upload("expert.jsonl", json.dumps(rec).encode() + b"\n")
        a = Answer.objects.get()
        self.assertEqual([len(t) >= 2000 for t in texts(a)], [True] * 17)
        spans = [a.text[c.span_start : c.span_end] for c in a.claims.order_by("position")]
        self.assertEqual(spans, [c["text"] for c in claims])
        self.assertEqual(list(JudgeVerdict.objects.values_list("guard_passed", flat=True)), [True] * 17)


class RagTruthTests(Upload):
    def test_it_imports_the_demo_file_through_the_form_with_its_human_spans(self):
        self.assertEqual(self.upload(DEMO.name, DEMO.read_bytes()).created, 108)
        labelled = [a for a in Answer.objects.all() if a.meta["human_labels"]]
        self.assertEqual(len(labelled), 19)
        for a in labelled:
            for label in a.meta["human_labels"]:
                self.assertEqual(a.text[label["start"] : label["end"]], label["text"], a.external_id)
        again = self.client.post(
            "/import/", {"file": SimpleUploadedFile(DEMO.name, DEMO.read_bytes()), "dataset": "real"}
        )
        self.assertEqual((again.status_code, ImportBatch.objects.latest("id").status), (200, "noop"))

    def test_it_splits_a_raw_ragtruth_records_one_string_of_passages_on_its_passage_markers(self):
        mapping = "question=source_info.question\nanswer=response\npassages=source_info.passages"
        self.assertEqual(self.upload("ragtruth_raw.jsonl", format="mapping", mapping=mapping).created, 1)
        raw = json.loads((REAL / "ragtruth_raw.jsonl").read_text().splitlines()[0])
        a = Answer.objects.get()
        self.assertEqual(
            list(a.passages.values_list("external_id", "text")),
            [
                ("passage 1", raw["source_info"]["passages"].split("\n\n")[0].removeprefix("passage 1:")),
                ("passage 2", "Many American Legion posts hold flag retirement ceremonies."),
            ],
        )
        self.assertEqual(a.meta["passages_raw"], raw["source_info"]["passages"])  # the string as written

    def test_it_detects_ragtruth_responses_joined_to_their_source_info_and_splits_their_passages(self):
        # line 1: response.jsonl merged with source_info.jsonl on source_id (pandas); line 2: the same for another
        # model as RAGTruth's baseline/prepare_dataset.py writes it (no prompt; question and reference copied out)
        lines = [json.loads(x) for x in (REAL / "ragtruth_joined.jsonl").read_text().splitlines()]
        demo = [json.loads(x) for x in DEMO.read_text().splitlines()]
        split = {d["meta"]["source_id"]: [(p["id"], p["text"]) for p in d["passages"]] for d in demo}
        self.assertEqual(self.upload("ragtruth_joined.jsonl").created, 2)
        for raw in lines:
            a = Answer.objects.get(external_id=raw["id"])
            self.assertEqual((a.question, a.text), (raw["source_info"]["question"], raw["response"]))
            self.assertEqual(passages_of(a), split[raw["source_id"]])  # as the demo sample split them
            self.assertEqual(a.meta["passages_raw"], raw["source_info"]["passages"])
            self.assertEqual(
                (a.meta["labels"], a.meta["model"], a.meta["quality"]), (raw["labels"], raw["model"], "good")
            )
            self.assertNotIn("question", a.meta)  # prepare_dataset.py's copies are not stored twice
            self.assertNotIn("reference", a.meta)
        flagged = Answer.objects.get(external_id=lines[1]["id"])
        for span in flagged.meta["labels"]:
            self.assertEqual(flagged.text[span["start"] : span["end"]], span["text"])
        self.assertEqual(flagged.meta["format_label"]["conflict"], [lines[1]["labels"][0]["text"]])
        self.assertIn(
            "Briefly answer the following question", Answer.objects.get(external_id=lines[0]["id"]).meta["prompt"]
        )

    def test_it_refuses_a_joined_ragtruth_summary_record_naming_the_missing_question(self):
        rec = {"id": "901", "source_id": "15001", "model": "gpt-4-0613", "labels": [], "quality": "good"}
        rec |= {"response": "The council approved the budget.", "task_type": "Summary", "source": "CNN/DM"}
        rec["source_info"] = "The city council met on Tuesday and approved next year's budget after a long debate."
        errors = self.refused("summary.jsonl", json.dumps(rec).encode())
        self.assertEqual(
            errors,
            [
                (1, "source_info.question", "missing (looked for source_info.question, question)"),
                (1, "source_info.passages", "missing (looked for source_info.passages, reference)"),
            ],
        )


class EdgeCaseTests(Upload):
    def test_it_lands_null_fields_empty_passages_extra_keys_and_iso_forms(self):
        self.assertEqual(self.upload("edge_ok.jsonl").created, 5)
        when = dict(Answer.objects.values_list("external_id", "created_at"))
        self.assertEqual(
            {k: v.isoformat() for k, v in when.items()},
            {
                "log-1": "2025-02-11T08:42:17.204000+00:00",
                "log-2": "2025-02-11T09:00:00+00:00",  # no offset: UTC
                "log-3": "2025-02-11T09:15:00+00:00",  # +0100
                "log-4": "2025-03-03T12:00:00+00:00",  # basic format
                "log-5": "2025-03-04T00:00:00+00:00",  # a date
            },
        )
        first = Answer.objects.get(external_id="log-1")
        self.assertEqual(
            first.meta, {"model": "rag-v7", "latency_ms": 812, "retrieval": {"k": 4, "index": "kb-2025-02"}}
        )
        self.assertEqual(
            (passages(Answer.objects.get(external_id="log-2")), Answer.objects.get(external_id="log-2").meta), ([], {})
        )
        third = Answer.objects.get(external_id="log-3")
        self.assertEqual(
            (passages(third), third.meta),
            ([("dc", "", "Data is stored in Frankfurt.", {"title": None})], {"user": None}),
        )

    def test_it_refuses_duplicates_number_texts_and_no_time_numbers_each_by_line_but_takes_an_int_id(self):
        self.assertEqual(
            self.refused("edge_bad.jsonl"),
            [  # line 1's integer id 1042 is the id "1042"
                (3, "id", "duplicate id 'dup': already on line 2"),
                (4, "passages[0].text", "must be a string, got int"),
                (5, "answer", "missing"),
                (5, "passages", "missing"),
                (6, "created_at", "epoch number 1739263 is not a time between 1990 and 2100 in " + UNITS),
            ],
        )

    def test_it_reads_a_semicolon_excel_csv_with_a_bom_crlf_and_a_quoted_newline(self):
        self.assertEqual(self.upload("excel_semicolon.csv").created, 2)
        a = Answer.objects.get(external_id="de-1")
        self.assertEqual((a.question, a.text), ("Wie lange gilt die Garantie?", "Zwei Jahre.\r\nNur Hardwarefehler."))
        self.assertEqual(
            (passages(a), a.meta),
            ([("g1", "", "Zwei Jahre Garantie auf Hardwarefehler.", {})], {"faithfulness": "0,87"}),
        )
        b = Answer.objects.get(external_id="de-2")
        self.assertEqual(
            (texts(b), b.meta), (["Jahrespläne: 10 % Rabatt; monatlich: kein Rabatt."], {"faithfulness": ""})
        )

    def test_it_reads_the_delimiter_from_excels_sep_line_before_the_header(self):
        body = (REAL / "excel_semicolon.csv").read_bytes().removeprefix(b"\xef\xbb\xbf")
        self.assertEqual(self.upload("hinted.csv", b"\xef\xbb\xbfsep=;\r\n" + body).created, 2)
        a = Answer.objects.get(external_id="de-1")
        self.assertEqual((a.question, a.meta), ("Wie lange gilt die Garantie?", {"faithfulness": "0,87"}))
        self.assertEqual(  # with the hint, the header is line 2 and a record's line counts it
            self.refused("bad.csv", b"sep=,\nid,answer,passages\nx,y,[]\n"),
            [(2, "question", "missing column in the CSV header")],
        )

    def test_it_reads_an_excel_csv_with_a_bom_before_the_first_column_name(self):
        self.assertEqual(self.upload("excel_ragas.csv").created, 2)
        a = Answer.objects.get(question="Wie exportiere ich Rechnungen?")
        self.assertEqual(
            (a.text, texts(a), a.meta),
            (
                "Unter Abrechnung > Rechnungen > Export.",
                ["Abrechnung > Rechnungen > Export lädt eine CSV-Datei."],
                {"reference": "Export"},
            ),
        )

    def test_it_reads_a_json_file_holding_one_pretty_printed_record(self):
        rec = {"id": "one", "question": "q?", "answer": "a.", "passages": [{"id": "p", "text": "a."}], "team": "eu"}
        self.upload("one.json", json.dumps(rec, indent=2).encode())
        self.assertEqual(Answer.objects.get().meta, {"team": "eu"})
        broken = b'{\n  "id": "two",\n  "answer": oops\n}\n'
        self.assertEqual(self.refused("two.json", broken), [(3, "", "malformed JSON: Expecting value (column 13)")])

    def test_it_imports_a_large_real_file_the_same_in_the_background(self):
        self.upload("langsmith_runs.jsonl", dataset="inline")
        spool = Path(self.enterContext(tempfile.TemporaryDirectory()))
        with self.settings(IMPORT_SPOOL_DIR=spool, IMPORT_INLINE_BYTES=1000):
            with self.captureOnCommitCallbacks(execute=True):
                self.upload("langsmith_runs.jsonl", status=202, dataset="queued")
            task = worker_run(DBTaskResult.objects.get(status="READY"), "real-shapes")
        self.assertEqual((task.status, ImportBatch.objects.latest("id").status), ("SUCCESSFUL", "done"))
        rows = {
            ds: [(a.external_id, a.meta, passages(a)) for a in Answer.objects.filter(dataset__name=ds).order_by("id")]
            for ds in ("inline", "queued")
        }
        self.assertEqual(rows["inline"], rows["queued"])


class ApiTests(Upload):
    """The API stores what the form stores, for every JSON and JSON lines file above."""

    FILES = {
        "ragas_dataset.jsonl": "",
        "ragas_results.jsonl": "",
        "deepeval_goldens.json": "",
        "deepeval_goldens.jsonl": "",
        "deepeval_test_run.json": "",
        "langsmith_runs.jsonl": "",
        "langfuse_traces.json": LANGFUSE,
        "hf_nq_ctxs.jsonl": "answer=prediction\npassages=ctxs",
        "edge_ok.jsonl": "",
    }

    def test_it_stores_the_same_through_the_api_as_through_the_form(self):
        token = api_token_create(make_user("bot", "lead"), "ci")[1]
        for name, mapping in self.FILES.items():
            with self.subTest(name):
                fields = {"format": "mapping", "mapping": mapping} if mapping else {}
                self.upload(name, dataset=f"web-{name}", **fields)
                query = "&".join(f"map={m}" for m in mapping.splitlines())
                r = self.client.post(
                    f"/api/v1/datasets/api-{name}/answers?{query}",
                    (REAL / name).read_bytes(),
                    content_type="application/x-ndjson",
                    HTTP_AUTHORIZATION=f"Bearer {token}",
                )
                self.assertEqual(r.status_code, 200, r.content[:500])
                rows = {
                    ds: [
                        (a.external_id, a.question, a.text, a.meta, passages(a))
                        for a in Answer.objects.filter(dataset__name=f"{ds}-{name}").order_by("external_id")
                    ]
                    for ds in ("web", "api")
                }
                self.assertTrue(rows["web"])
                self.assertEqual(rows["web"], rows["api"])

    def test_it_answers_a_refusal_with_its_lines_not_a_500(self):
        token = api_token_create(make_user("bot", "lead"), "ci")[1]
        r = self.client.post(
            "/api/v1/datasets/x/answers",
            (REAL / "ragas_results_nan.jsonl").read_bytes(),
            content_type="application/x-ndjson",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        self.assertEqual(r.status_code, 400)
        lines = [(e["line"], e["message"].startswith("malformed JSON: NaN is not allowed")) for e in r.json()["errors"]]
        self.assertEqual(lines, [(2, True), (3, True)])
        self.assertEqual(Answer._base_manager.count(), 0)
