"""Import of the shapes teams already have: native, Ragas, DeepEval, LangChain documents, a field mapping.

The samples under tests/fixtures/formats/ are hand-made to look like real logs: passages with title, url,
score, rank, citation and nested metadata; claims with leading and trailing whitespace; CRLF text.
"""

import io
import json
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import TestCase

from audit.ingest.export import dataset_jsonl
from audit.ingest.services import answers_import
from audit.models import Answer, Claim, Dataset, JudgeVerdict, Passage
from audit.selectors import dataset_counts
from tests.factories import make_user

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "formats"
MAP = ["question=prompt", "answer=completion", "passages=docs", "passage.text=content", "passage.id=doc_id"]


def run(name, dataset="ds", data=None, **kw):
    data = data if data is not None else (FIXTURES / name).read_bytes()
    return answers_import(io.BytesIO(data), dataset_name=dataset, file_name=name, **kw)


def ok(test, batch, created):
    test.assertEqual((batch.status, batch.errors, batch.created), ("done", [], created), batch.errors)


class NativeTests(TestCase):
    def test_it_keeps_unknown_passage_and_claim_fields_in_meta(self):
        ok(self, run("native.jsonl"), 2)
        a = Answer.objects.get(external_id="log-0001")
        p = a.passages.get(position=0)
        self.assertEqual(p.external_id, "doc-17#3")
        self.assertEqual(p.meta["title"], "Eiffel Tower - Wikipedia")
        self.assertEqual((p.meta["score"], p.meta["rank"], p.meta["citation"]), (0.873, 1, "[1]"))
        self.assertEqual(p.meta["metadata"]["crawl"]["lang"], "en")
        c = a.claims.get(position=1)
        self.assertEqual(c.meta, {"annotator_hint": {"numeric": True}})
        self.assertEqual(a.claims.get(position=0).meta, {"confidence": 0.93})
        self.assertEqual(a.claims.get(position=2).meta, {})
        self.assertEqual(a.meta, {"model": "rag-v7"})

    def test_it_locates_claims_with_stray_whitespace_in_crlf_text(self):
        run("native.jsonl")
        a = Answer.objects.get(external_id="log-0001")
        spans = [a.text[c.span_start : c.span_end] for c in a.claims.all()]
        # "It is 324" matches the answer's "It is  324" (two spaces): runs of whitespace are one.
        self.assertEqual(
            spans,
            [
                "The Eiffel Tower was completed in 1889.",
                "It is  324 metres tall.",
                "It was built for the World's Fair.",
            ],
        )

    def test_it_runs_the_evidence_guard_across_a_crlf_passage(self):
        run("native.jsonl")
        verdicts = dict(JudgeVerdict.objects.values_list("claim__position", "guard_passed"))
        self.assertEqual(verdicts, {0: True, 1: True})  # the second quote spans the passage's CRLF

    def test_it_is_a_noop_the_second_time(self):
        run("native.jsonl")
        again = run("native.jsonl")
        self.assertEqual((again.status, again.unchanged), ("noop", 2))

    def test_it_still_checks_known_fields_strictly(self):
        bad = {"id": "x", "question": "q", "answer": "a", "passages": [{"id": 7.5, "text": "t", "title": "T"}]}
        batch = run("bad.jsonl", data=json.dumps(bad).encode() + b"\n")
        self.assertEqual(batch.status, "failed")
        message = "must be a string or an integer, got float"
        self.assertEqual(batch.errors, [{"line": 1, "field": "passages[0].id", "message": message}])
        self.assertEqual(Answer.objects.count(), 0)

    def test_it_takes_integer_ids_in_every_format(self):
        native = {"id": 17, "question": "q", "answer": "a", "passages": [{"id": 7, "text": "t", "title": "T"}]}
        ok(self, run("n.jsonl", dataset="native", data=json.dumps(native).encode() + b"\n"), 1)
        doc = {"page_content": "t", "metadata": {"id": 8}}
        chain = {"id": 18, "input": "q", "answer": "a", "context": [doc]}
        ok(self, run("l.jsonl", dataset="langchain", data=json.dumps(chain).encode() + b"\n"), 1)
        mapped = {"n": 19, "prompt": "q", "completion": "a", "docs": [{"doc_id": 9, "content": "t"}]}
        mapping = {"id": "n", "question": "prompt", "answer": "completion", "passages": "docs"}
        mapping |= {"passage.text": "content", "passage.id": "doc_id"}
        ok(self, run("m.jsonl", dataset="mapping", data=json.dumps(mapped).encode() + b"\n", mapping=mapping), 1)
        ragas = {"id": 20, "user_input": "q", "response": "a", "retrieved_contexts": ["t"]}
        ok(self, run("r.json", dataset="ragas", data=json.dumps([ragas]).encode()), 1)
        rows = Answer.objects.order_by("external_id").values_list(
            "dataset__name", "external_id", "passages__external_id"
        )
        self.assertEqual(
            [r[:2] for r in rows], [("native", "17"), ("langchain", "18"), ("mapping", "19"), ("ragas", "20")]
        )
        self.assertEqual([r[2] for r in rows][:3], ["7", "8", "9"])  # Ragas contexts get ids from their text

    def test_it_refuses_a_float_or_bool_document_id_naming_the_passage(self):
        chain = {"input": "q", "answer": "a", "context": [{"page_content": "t", "metadata": {"id": True}}]}
        batch = run("l.jsonl", data=json.dumps(chain).encode() + b"\n")
        message = "must be a string or an integer, got bool"
        self.assertEqual(batch.errors, [{"line": 1, "field": "context[0].id", "message": message}])

    def test_it_refuses_a_passage_meta_that_is_not_an_object(self):
        bad = {"id": "x", "question": "q", "answer": "a", "passages": [{"id": "p", "text": "t", "meta": [1]}]}
        batch = run("bad.jsonl", data=json.dumps(bad).encode() + b"\n")
        self.assertEqual(batch.errors[0]["field"], "passages[0].meta")


class RagasTests(TestCase):
    def test_it_imports_ragas_samples_as_jsonl(self):
        ok(self, run("ragas.jsonl"), 2)
        a = Answer.objects.get(question__startswith="What is the warranty")
        self.assertTrue(a.external_id.startswith("a-"))  # derived from the content
        self.assertEqual(a.meta, {"reference": "Two years, hardware faults only."})
        self.assertEqual(list(a.passages.values_list("text", flat=True))[0][:20], "All X-series routers")
        # the same text twice in one answer: two distinct stable ids
        ids = list(Answer.objects.get(question__startswith="Can I").passages.values_list("external_id", flat=True))
        self.assertEqual(len(set(ids)), 2)
        self.assertEqual(run("ragas.jsonl").status, "noop")

    def test_it_imports_ragas_samples_as_csv_with_a_python_list_cell(self):
        ok(self, run("ragas.csv"), 2)
        a = Answer.objects.get(question__startswith="Can I")
        self.assertEqual(a.text, "No, returns are accepted within 30 days.\r\nRefunds take 5 working days.")
        self.assertEqual(a.passages.get(position=1).text, "Refunds take 5\r\nworking days.")
        self.assertEqual(a.meta, {"reference": ""})  # a CSV cannot tell an empty reference from none
        self.assertEqual(run("ragas.csv").status, "noop")

    def test_it_names_the_ragas_field_in_errors(self):
        data = json.dumps({"user_input": "q", "response": 3, "retrieved_contexts": ["c"]}).encode() + b"\n"
        batch = run("r.jsonl", data=data, fmt="ragas")
        self.assertEqual(batch.errors, [{"line": 1, "field": "response", "message": "must be a string, got int"}])

    def test_it_reports_a_missing_csv_column_of_the_forced_format(self):
        batch = run("r.csv", data=b"user_input,response\nq,a\n", fmt="ragas")
        self.assertEqual(batch.errors[0]["field"], "retrieved_contexts")


class DeepEvalTests(TestCase):
    def test_it_imports_a_json_array_of_test_cases(self):
        ok(self, run("deepeval.json"), 2)
        a = Answer.objects.get(question="How do I reset my password?")
        self.assertEqual(a.meta["additional_metadata"], {"ticket": "T-4411", "channel": "chat"})
        self.assertEqual(a.meta["expected_output"], "Settings > Security > Reset password.")
        self.assertEqual(a.passages.count(), 2)

    def test_it_gives_the_same_ids_from_json_lines(self):
        run("deepeval.json")
        self.assertEqual(run("deepeval.jsonl").status, "noop")  # same content, same derived ids

    def test_it_numbers_errors_by_the_line_a_record_starts_on(self):
        data = (
            b'[\n  {"input": "q", "actual_output": "a", "retrieval_context": ["c"]},\n'
            b'  {"input": "q2",\n   "actual_output": null, "retrieval_context": ["c"]}\n]\n'
        )
        batch = run("d.json", data=data)
        self.assertEqual(batch.errors, [{"line": 3, "field": "actual_output", "message": "missing"}])

    def test_it_refuses_an_unclosed_array(self):
        batch = run("d.json", data=b'[{"input": "q", "actual_output": "a", "retrieval_context": []}')
        self.assertEqual(batch.status, "failed")
        self.assertEqual(batch.errors[0]["message"], "malformed JSON: expected ',' or ']' after a record")


class LangChainTests(TestCase):
    def test_it_reads_documents_as_passages(self):
        ok(self, run("langchain.jsonl"), 1)
        a = Answer.objects.get()
        self.assertEqual(a.question, "What does the Pro plan cost?")
        p0, p1 = a.passages.all()
        self.assertEqual((p0.external_id, p0.source), ("pricing-2", "docs/pricing.md"))
        self.assertEqual(p0.meta["url"], "https://example.com/pricing")
        self.assertEqual(p0.meta["headers"], {"h1": "Plans", "h2": "Pro"})
        self.assertEqual((p1.meta["page"], p1.meta["type"]), (3, "Document"))
        self.assertTrue(p1.external_id.startswith("p-"))


class MappingTests(TestCase):
    def test_it_imports_through_a_field_mapping_on_the_command(self):
        path = FIXTURES / "mapped.jsonl"
        call_command("import_answers", str(path), "--dataset", "m", "--no-progress", *(f"--map={m}" for m in MAP))
        a = Answer.objects.get()
        self.assertEqual((a.question, a.text[:9]), ("Which regions host the EU data?", "EU data i"))
        self.assertEqual(a.meta, {"trace_id": "tr-91", "latency_ms": 812})
        p = a.passages.get()
        self.assertEqual((p.external_id, p.meta), ("infra-4", {"score": 0.8, "uri": "https://example.com/infra"}))

    def test_it_refuses_a_bad_mapping_on_the_command(self):
        with self.assertRaisesMessage(CommandError, "'questoin' is not a target"):
            call_command("import_answers", str(FIXTURES / "mapped.jsonl"), "--dataset", "m", "--map=questoin=prompt")

    def test_it_names_the_mapped_field_in_errors(self):
        data = json.dumps({"prompt": "q", "docs": []}).encode() + b"\n"
        batch = run("m.jsonl", data=data, mapping={"question": "prompt", "answer": "completion", "passages": "docs"})
        self.assertEqual(batch.errors, [{"line": 1, "field": "completion", "message": "missing"}])


class WebFormTests(TestCase):
    def setUp(self):
        self.client.force_login(make_user("lead", "lead"))

    def post(self, name, **fields):
        f = SimpleUploadedFile(name, (FIXTURES / name).read_bytes())
        return self.client.post("/import/", {"file": f, "new_dataset": "web", **fields})

    def test_it_imports_through_the_mapping_form(self):
        r = self.post("mapped.jsonl", format="mapping", mapping="\n".join(MAP))
        self.assertEqual(r.status_code, 200, r.content.decode()[-2000:])
        self.assertEqual(Passage.objects.get().external_id, "infra-4")

    def test_it_forces_the_format_from_the_select(self):
        r = self.post("ragas.jsonl", format="deepeval")
        self.assertEqual(r.status_code, 400)
        self.assertContains(r, "<strong>input</strong>: missing", status_code=400)
        self.assertEqual(Claim.objects.count() + Answer.objects.count(), 0)

    def test_it_shows_a_bad_mapping_line_on_the_form(self):
        r = self.post("mapped.jsonl", format="mapping", mapping="question prompt")
        self.assertContains(r, "is not target=source", status_code=400)
        self.assertEqual(Answer.objects.count(), 0)


class RoundTripTests(TestCase):
    def test_it_exports_a_dataset_that_reimports_as_a_noop_with_every_meta_kept(self):
        run("native.jsonl")
        data = b"".join(dataset_jsonl(Dataset.objects.get(name="ds")))
        again = run("export.jsonl", data=data)
        self.assertEqual((again.status, again.errors), ("noop", []))
        ok(self, run("export.jsonl", dataset="copy", data=data), 2)
        key = ("answer__external_id", "position", "external_id", "source", "text", "meta")
        for model in (Passage, Claim):
            fields = key if model is Passage else ("answer__external_id", "position", "text", "meta")
            rows = {
                ds: list(model.objects.filter(answer__dataset__name=ds).values_list(*fields)) for ds in ("ds", "copy")
            }
            self.assertEqual(rows["ds"], rows["copy"])
        self.assertEqual(Passage.objects.filter(answer__dataset__name="copy", meta__citation="[1]").count(), 2)
        verdicts = JudgeVerdict.objects.filter(claim__answer__dataset__name="copy").values_list(
            "raw_verdict", flat=True
        )
        self.assertEqual(sorted(verdicts), ["contradicted", "supported"])


class PagesTests(TestCase):
    def setUp(self):
        run("native.jsonl")
        self.client.force_login(make_user("lead", "lead"))

    def test_it_shows_a_passage_title_linked_to_its_url_in_the_header(self):
        a = Answer.objects.get(external_id="log-0001")
        r = self.client.get(f"/answers/{a.pk}/")
        self.assertContains(
            r,
            '<a class="passage-title" href="https://en.wikipedia.org/wiki/Eiffel_Tower" rel="noopener noreferrer '
            'nofollow" target="_blank">Eiffel Tower - Wikipedia</a>',
            html=False,
        )
        self.assertContains(r, '<span class="passage-title">Paris guide</span>')

    def test_it_escapes_a_title_and_never_links_a_javascript_url(self):
        a = Answer.objects.get(external_id="log-0002")
        r = self.client.get(f"/answers/{a.pk}/")
        self.assertContains(r, '<span class="passage-title">&lt;b&gt;Tower&lt;/b&gt; history</span>')
        self.assertNotContains(r, "javascript:")

    def test_it_counts_claims_not_located_on_the_answer_page_and_the_dataset_list(self):
        a = Answer.objects.get(external_id="log-0002")
        r = self.client.get(f"/answers/{a.pk}/")
        self.assertContains(r, "1 of 2 claims could not be located in the answer text.")
        r = self.client.get("/answers/")
        self.assertContains(
            r, '<td class="num">2</td><td class="num">5</td><td class="num">1</td>'
        )  # answers, claims, not located

    def test_it_lists_datasets_with_counts_in_one_query_whatever_their_number(self):
        run("ragas.jsonl", dataset="other")
        with self.assertNumQueries(1):
            rows = [(d.name, d.n_answers, d.n_claims, d.n_unlocated) for d in dataset_counts()]
        self.assertEqual(rows, [("ds", 2, 5, 1), ("other", 2, 0, 0)])
