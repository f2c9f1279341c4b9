"""The HTTP API under /api/v1/ through the Django test client: tokens, every endpoint, every role."""

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
from django.core.management import CommandError, call_command
from django.test import Client, TestCase, override_settings

from audit.judge.services import judge_run_execute
from audit.models import Answer, Audit, JudgeRun, Passage
from claimaudit.models import ApiToken, token_hash
from claimaudit.services import api_token_create
from tests.factories import make_answer, make_dataset, make_gold, make_labelled_audit, make_user

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "formats"


def record(i, **over):
    return {
        "id": f"r{i}",
        "question": f"Question {i}?",
        "answer": "Paris is the capital.",
        "passages": [{"id": "p1", "text": "Paris is the capital of France.", "title": "France", "rank": 1}],
        "created_at": "2026-11-02T10:00:00Z",
        **over,
    }


class ApiCase(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.annotator = make_user("ann", "annotator")
        self.nobody = make_user("nobody")
        self.tokens = {
            who: api_token_create(u, "test")[1]
            for who, u in (("lead", self.lead), ("annotator", self.annotator), ("nobody", self.nobody))
        }

    def call(self, method, url, who="lead", body=None, content_type="application/json", **extra):
        if who:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {self.tokens[who]}"
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        kwargs = {"data": body, "content_type": content_type} if body is not None else {}
        return getattr(self.client, method)(f"/api/v1{url}", **kwargs, **extra)

    def assertError(self, r, status, message=None):
        self.assertEqual(r.status_code, status, r.content[:500])
        body = r.json()
        self.assertIn("message", body)
        if message:
            self.assertIn(message, body["message"])
        return body


class TokenTests(ApiCase):
    def test_it_refuses_a_request_without_a_token(self):
        self.assertError(self.call("get", "/datasets", who=None), 401, "API token")

    def test_it_refuses_a_wrong_token(self):
        r = self.client.get("/api/v1/datasets", HTTP_AUTHORIZATION="Bearer ca_not-a-token")
        self.assertError(r, 401)

    def test_it_refuses_a_revoked_token(self):
        self.assertEqual(self.call("get", "/datasets").status_code, 200)
        ApiToken.objects.filter(user=self.lead).update(revoked_at="2026-11-30T00:00:00Z")
        self.assertError(self.call("get", "/datasets"), 401)

    def test_it_refuses_the_token_of_an_inactive_user(self):
        self.lead.is_active = False
        self.lead.save()
        self.assertError(self.call("get", "/datasets"), 401)

    def test_it_stores_only_the_hash_and_marks_use(self):
        row = ApiToken.objects.get(user=self.lead)
        self.assertEqual(row.key_hash, token_hash(self.tokens["lead"]))
        stored = json.dumps(list(ApiToken.objects.values()), default=str)
        self.assertNotIn(self.tokens["lead"], stored)  # only the hash is kept
        self.call("get", "/datasets")
        row.refresh_from_db()
        self.assertIsNotNone(row.last_used_at)

    def test_it_refuses_a_session_without_a_token(self):
        self.client.force_login(self.lead)  # a browser session is no API credential (no CSRF on the API)
        self.assertError(self.call("get", "/datasets", who=None), 401)

    def test_it_gives_403_to_a_role_that_may_not(self):
        for who in ("annotator", "nobody"):
            self.assertError(self.call("get", "/datasets", who=who), 403, "audit leads")
            self.assertError(self.call("post", "/datasets/x/answers", who=who, body=[record(1)]), 403)
        self.assertEqual(Answer.objects.count(), 0)

    def test_it_creates_a_token_on_the_command_and_refuses_an_inactive_user(self):
        out = io.StringIO()
        call_command("create_token", "ann", "--name", "nightly", stdout=out)
        raw = out.getvalue().strip()
        self.assertTrue(ApiToken.objects.filter(name="nightly", key_hash=token_hash(raw)).exists())
        self.nobody.is_active = False
        self.nobody.save()
        with self.assertRaisesMessage(CommandError, "inactive"):
            call_command("create_token", "nobody", "--name", "x")
        with self.assertRaisesMessage(CommandError, "no user named"):
            call_command("create_token", "ghost", "--name", "x")


class TokenPageTests(ApiCase):
    def test_it_shows_a_new_token_once_and_revokes_it(self):
        self.client.force_login(self.annotator)
        r = self.client.post("/tokens/", {"name": "laptop <script>"})
        self.assertEqual(r.status_code, 201)
        raw = r.context["raw"]
        self.assertContains(r, raw, status_code=201)
        self.assertContains(r, "laptop &lt;script&gt;", status_code=201)
        page = self.client.get("/tokens/")
        self.assertNotContains(page, raw)  # shown once
        self.assertContains(page, 'aria-describedby="id_name_helptext"')
        self.assertContains(page, 'id="id_name_helptext"')  # the hint the name field points to exists
        token = ApiToken.objects.get(name="laptop <script>")
        r = self.client.get("/api/v1/audits/1", HTTP_AUTHORIZATION=f"Bearer {raw}")
        self.assertEqual(r.status_code, 404)  # the token works (and carries the annotator role)
        self.client.post(f"/tokens/{token.pk}/revoke/")
        r = self.client.get("/api/v1/audits/1", HTTP_AUTHORIZATION=f"Bearer {raw}")
        self.assertEqual(r.status_code, 401)

    def test_it_never_revokes_another_users_token(self):
        self.client.force_login(self.annotator)
        lead_token = ApiToken.objects.get(user=self.lead)
        self.assertEqual(self.client.post(f"/tokens/{lead_token.pk}/revoke/").status_code, 404)
        lead_token.refresh_from_db()
        self.assertIsNone(lead_token.revoked_at)

    def test_it_requires_csrf_on_the_token_form(self):

        c = Client(enforce_csrf_checks=True)
        c.force_login(self.annotator)
        self.assertEqual(c.post("/tokens/", {"name": "x"}).status_code, 403)


class AnswersPushTests(ApiCase):
    def test_it_imports_a_json_array_and_is_idempotent(self):
        r = self.call("post", "/datasets/weekly/answers", body=[record(1), record(2)])
        self.assertEqual(r.status_code, 200, r.content)
        self.assertEqual((r.json()["created"], r.json()["status"]), (2, "done"))
        self.assertEqual(Passage.objects.filter(meta__title="France").count(), 2)
        again = self.call("post", "/datasets/weekly/answers", body=[record(1), record(2)]).json()
        self.assertEqual((again["status"], again["created"], again["unchanged"]), ("noop", 0, 2))
        changed = self.call("post", "/datasets/weekly/answers?update=true", body=[record(1, answer="Lyon.")]).json()
        self.assertEqual(changed["updated"], 1)

    def test_it_imports_json_lines_in_any_format(self):
        body = (FIXTURES / "ragas.jsonl").read_bytes()
        r = self.call("post", "/datasets/ragas/answers", body=body, content_type="application/x-ndjson")
        self.assertEqual(r.json()["created"], 2)
        body = (FIXTURES / "mapped.jsonl").read_bytes()
        maps = "&".join(f"map={m}" for m in ("question=prompt", "answer=completion", "passages=docs"))
        r = self.call("post", f"/datasets/m/answers?{maps}&map=passage.text=content", body=body)
        self.assertEqual(r.status_code, 200, r.content)

    def test_it_returns_every_error_and_writes_nothing(self):
        body = [record(1), record(2, question=3), {"id": "r3"}]
        err = self.assertError(self.call("post", "/datasets/weekly/answers", body=body), 400, "nothing was written")
        fields = [(e["line"], e["field"]) for e in err["errors"]]
        self.assertIn((1, "question"), fields)  # record 2 starts on line 1 of a one-line array
        self.assertIn((1, "answer"), fields)
        self.assertEqual(Answer.objects.count(), 0)

    def test_it_refuses_a_bad_format_or_mapping_with_the_field_named(self):
        err = self.assertError(self.call("post", "/datasets/x/answers?format=excel", body=[]), 400)
        self.assertEqual(err["errors"][0]["field"], "format")
        err = self.assertError(self.call("post", "/datasets/x/answers?map=nonsense", body=[]), 400)
        self.assertEqual(err["errors"][0]["field"], "map")

    def test_it_answers_json_when_a_field_is_refused_before_the_endpoint(self):
        err = self.assertError(self.call("post", "/datasets/x/answers?map=a%00b", body=[]), 400)
        self.assertEqual(
            err["errors"],
            [{"field": "map", "message": "contains a NUL character, which the database cannot store"}],
        )

    @override_settings(IMPORT_MAX_UPLOAD_BYTES=1000)
    def test_it_refuses_a_body_over_the_upload_limit(self):
        self.assertError(self.call("post", "/datasets/x/answers", body=[record(i) for i in range(20)]), 413)
        self.assertEqual(Answer.objects.count(), 0)

    def test_it_exports_a_dataset_as_json_lines(self):
        self.call("post", "/datasets/weekly/answers", body=[record(1)])
        r = self.call("get", "/datasets/weekly/answers")
        rows = [json.loads(line) for line in b"".join(r.streaming_content).splitlines()]
        self.assertEqual(rows[0]["passages"][0]["meta"], {"title": "France", "rank": 1})
        self.assertError(self.call("get", "/datasets/missing/answers"), 404)


class DatasetsTests(ApiCase):
    def test_it_lists_datasets_with_counts_paged_in_fixed_queries(self):
        for name in ("a", "b", "c"):
            make_answer(make_dataset(name), n_claims=2)
        Answer.objects.filter(dataset__name="b").first().claims.update(span_start=None, span_end=None)
        with self.assertNumQueries(5):  # token, last used, roles, count, page
            r = self.call("get", "/datasets?limit=2")
        self.assertEqual(r.json()["count"], 3)
        self.assertEqual(
            r.json()["items"],
            [
                {"name": "a", "answers": 1, "claims": 2, "claims_not_located": 0},
                {"name": "b", "answers": 1, "claims": 2, "claims_not_located": 2},
            ],
        )
        for name in ("d", "e", "f", "g"):
            make_answer(make_dataset(name), n_claims=4)
        with self.assertNumQueries(5):
            self.assertEqual(len(self.call("get", "/datasets?limit=10").json()["items"]), 7)

    def test_it_refuses_a_page_limit_or_offset_out_of_bounds_naming_it(self):
        make_answer(make_dataset("a"))
        for query, field in (
            ("offset=99999999999999999999", "offset"),  # over 64 bits: it reached the database, a 500
            ("offset=9223372036854775808", "offset"),
            ("limit=99999999999999999999", "limit"),
            ("limit=1001", "limit"),
            ("limit=0", "limit"),
        ):
            r = self.call("get", f"/datasets?{query}")
            self.assertEqual(r.status_code, 400, (query, r.content[:300]))
            self.assertIn(field, json.dumps(r.json()), query)
        self.assertEqual(self.call("get", "/datasets?limit=1000&offset=2147483648").status_code, 200)


class JudgeRunTests(ApiCase):
    def test_it_starts_an_offline_run_and_reports_its_progress(self):
        make_answer(make_dataset("weekly"), n_claims=0, text="Paris is the capital of France. It is in Europe.")
        r = self.call("post", "/judge-runs", body={"dataset": "weekly", "backend": "offline"})
        self.assertEqual(r.status_code, 202, r.content)
        run = r.json()
        self.assertEqual((run["status"], run["answers_total"], run["dataset"]), ("queued", 1, "weekly"))

        judge_run_execute(run["id"])
        done = self.call("get", f"/judge-runs/{run['id']}").json()
        self.assertEqual((done["status"], done["answers_done"]), ("done", 1))
        self.assertGreater(done["claims_done"], 0)

    def test_it_names_what_is_wrong_with_a_run(self):
        self.assertError(self.call("post", "/judge-runs", body={"dataset": "none", "backend": "offline"}), 400)
        err = self.assertError(self.call("post", "/judge-runs", body={"backend": "magic"}), 400)
        self.assertEqual(err["errors"][0]["field"], "payload.backend")
        self.assertError(self.call("post", "/judge-runs", body={"audit": 999, "backend": "offline"}), 404)
        self.assertError(self.call("get", "/judge-runs/999"), 404)
        fields = {
            json.dumps(body): [
                e["field"] for e in self.assertError(self.call("post", "/judge-runs", body=body), 400)["errors"]
            ]
            for body in (
                {"dataset": "none", "backend": "offline"},
                {"backend": "offline"},
                {"dataset": "none", "backend": "offline", "budget_usd": -1},
                {"dataset": "none", "backend": "offline", "budget_tokens": 2**70},  # over 64 bits: was a 500
                {
                    "dataset": "none",
                    "backend": "offline",
                    "judge_version": 9999,
                },  # not a field here: refused, not ignored
                {"answers": [1], "backend": "offline"},
            )
        }
        self.assertEqual(
            list(fields.values()),
            [
                ["dataset"],
                ["dataset"],
                ["payload.budget_usd"],
                ["payload.budget_tokens"],
                ["payload.judge_version"],
                ["payload.answers"],
            ],
        )
        self.assertEqual(JudgeRun.objects.count(), 0)


class AuditTests(ApiCase):
    def setUp(self):
        super().setUp()
        ds = make_dataset("weekly")
        for i in range(12):
            make_answer(ds, meta={"model": "m1" if i % 3 else "m2"}, n_claims=1)

    def test_it_previews_the_strata_without_saving(self):
        body = {"dataset": "weekly", "size": 6, "strata": ["meta.model"], "preview": True, "seed": 3}
        r = self.call("post", "/audits", body=body)
        self.assertEqual(r.status_code, 200, r.content)
        rows = {row["stratum"]: (row["population"], row["sample"]) for row in r.json()["design"]}
        self.assertEqual(rows, {"meta.model=m1": (8, 4), "meta.model=m2": (4, 2)})
        self.assertEqual(Audit.objects.count(), 0)

    def test_it_creates_an_audit_from_the_form_fields(self):
        body = {"dataset": "weekly", "name": "2026-W49", "size": 5, "seed": 7, "meta_filters": {"model": "m1"}}
        r = self.call("post", "/audits", body=body)
        self.assertEqual(r.status_code, 201, r.content)
        audit = Audit.objects.get(name="2026-W49")
        self.assertEqual((r.json()["id"], audit.items.count(), audit.seed), (audit.id, 5, 7))
        self.assertEqual(set(audit.items.values_list("answer__meta__model", flat=True)), {"m1"})
        self.assertError(self.call("post", "/audits", body=body), 400)  # the name is taken

    def test_it_refuses_text_the_database_cannot_store_in_a_json_body_or_a_path(self):
        err = self.assertError(self.call("post", "/audits", body={"dataset": "we\u0000ekly", "preview": True}), 400)
        self.assertEqual(err["errors"][0]["field"], "payload.dataset")
        err = self.assertError(self.call("post", "/judge-runs", body={"dataset": "\ud800", "backend": "offline"}), 400)
        self.assertEqual(err["errors"][0]["field"], "payload.dataset")
        self.assertError(self.call("get", "/datasets/a%00b/answers"), 400)

    def test_it_returns_form_errors_by_field(self):
        err = self.assertError(self.call("post", "/audits", body={"dataset": "nope", "size": 0}), 400)
        self.assertEqual({e["field"] for e in err["errors"]}, {"dataset", "size"})
        err = self.assertError(self.call("post", "/audits", body={"dataset": "weekly", "strata": ["colour"]}), 400)
        self.assertEqual(err["errors"][0]["field"], "strata")
        err = self.assertError(self.call("post", "/audits", body={"dataset": "weekly"}), 400)
        self.assertEqual(err["errors"][0]["field"], "name")
        self.assertError(self.call("post", "/audits", who="annotator", body={"dataset": "weekly"}), 403)


class AuditReadTests(ApiCase):
    def setUp(self):
        super().setUp()
        self.other = make_user("other", "annotator")
        self.audit = make_labelled_audit(self.annotator, self.other, n_answers=2, n_claims=2)
        make_gold(self.audit)
        self.audit.status = "closed"
        self.audit.save()
        self.outsider = make_user("outsider", "annotator")
        self.tokens["outsider"] = api_token_create(self.outsider, "t")[1]

    def test_it_shows_a_lead_the_whole_progress(self):
        r = self.call("get", f"/audits/{self.audit.id}").json()
        self.assertEqual(r["overall"]["submitted"], 4)
        self.assertEqual({p["username"] for p in r["annotators"]}, {"ann", "other"})

    def test_it_shows_an_annotator_only_their_own_row_and_hides_other_audits(self):
        r = self.call("get", f"/audits/{self.audit.id}", who="annotator").json()
        self.assertEqual([p["username"] for p in r["annotators"]], ["ann"])
        self.assertEqual((r["overall"]["assigned"], r["overall"]["percent"]), (2, 100))
        self.assertError(self.call("get", f"/audits/{self.audit.id}", who="outsider"), 404)
        self.assertError(self.call("get", f"/audits/{self.audit.id}", who="nobody"), 403)
        self.assertError(self.call("get", "/audits/99999"), 404)

    def test_it_reads_progress_in_queries_that_do_not_grow_with_the_audit(self):
        bigger = make_labelled_audit(self.annotator, self.other, n_answers=6, n_claims=3, name="2026-W49")
        with self.assertNumQueries(6) as small:  # token, last used, roles, audit, counts, times
            self.call("get", f"/audits/{self.audit.id}")
        with self.assertNumQueries(len(small.captured_queries)):
            self.assertEqual(self.call("get", f"/audits/{bigger.id}").json()["overall"]["assigned"], 12)

    def test_it_serves_the_report_to_leads_only(self):
        r = self.call("get", f"/audits/{self.audit.id}/report")
        self.assertEqual(r.status_code, 200)
        self.assertEqual((r.json()["coverage"]["claims"], r.json()["coverage"]["claims_with_gold"]), (4, 2))
        self.assertError(self.call("get", f"/audits/{self.audit.id}/report", who="annotator"), 403)
        self.assertError(self.call("get", "/audits/99999/report"), 404)

    def test_it_exports_gold_at_both_levels_in_every_format(self):
        r = self.call("get", f"/audits/{self.audit.id}/gold?level=claim&format=jsonl")
        rows = [json.loads(line) for line in r.content.splitlines()]
        # claim 0 of each answer is disputed and not adjudicated: no gold; claim 1 agreed supported
        self.assertEqual([r["gold_verdict"] for r in rows], [None, "supported", None, "supported"])
        csv = self.call("get", f"/audits/{self.audit.id}/gold?level=answer&format=csv")
        self.assertEqual(csv["Content-Type"], "text/csv; charset=utf-8")
        self.assertEqual(len(csv.content.decode().strip().splitlines()), 3)
        parquet = self.call("get", f"/audits/{self.audit.id}/gold?format=parquet")
        self.assertEqual(pq.read_table(io.BytesIO(parquet.content)).num_rows, 4)
        err = self.assertError(self.call("get", f"/audits/{self.audit.id}/gold?level=sentence"), 400)
        self.assertEqual(err["errors"][0]["field"], "level")
        self.assertError(self.call("get", f"/audits/{self.audit.id}/gold", who="annotator"), 403)


class SchemaTests(ApiCase):
    def test_it_publishes_openapi_3_with_every_endpoint_to_a_token_or_a_login(self):
        self.assertEqual(self.client.get("/api/v1/openapi.json").status_code, 302)  # to the login page
        schema = self.call("get", "/openapi.json", who="nobody").json()
        self.assertTrue(schema["openapi"].startswith("3."))
        self.assertEqual(
            set(schema["paths"]),
            {
                "/api/v1/datasets",
                "/api/v1/datasets/{name}/answers",
                "/api/v1/judge-runs",
                "/api/v1/judge-runs/{run_id}",
                "/api/v1/judge-runs/estimate",
                "/api/v1/audits",
                "/api/v1/audits/{audit_id}",
                "/api/v1/audits/{audit_id}/report",
                "/api/v1/audits/{audit_id}/gold",
                "/api/v1/guardrail",
            },
        )
        self.assertEqual(list(schema["components"]["securitySchemes"].values()), [{"type": "http", "scheme": "bearer"}])
        self.client.force_login(self.annotator)
        self.assertEqual(self.client.get("/api/v1/openapi.json").json(), schema)

    def test_it_serves_the_docs_page_to_logged_in_users_without_a_cdn(self):
        self.assertEqual(self.client.get("/api/v1/docs").status_code, 302)
        self.client.force_login(self.annotator)
        r = self.client.get("/api/v1/docs")
        self.assertContains(r, "swagger-ui-bundle.js")
        self.assertNotContains(r, "cdn.")
