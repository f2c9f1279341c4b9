"""The HTTP API at its edges: races, oversized bodies, ignored parameters. Each test is an exact request that
once answered a 500, an HTML page, or a 200 that meant something else."""

import io
import json
from unittest import mock

from django.test import override_settings

from audit.models import Answer, Audit, ImportBatch
from audit.sampling import services as sampling
from tests.factories import (
    judge_audit,
    make_answer,
    make_dataset,
    make_judge_version,
    make_labelled_audit,
    make_user,
)
from tests.test_api import ApiCase, record


class AuditNameRaceTests(ApiCase):
    def test_it_refuses_an_audit_name_taken_by_a_concurrent_request_naming_it(self):
        answer = make_answer(make_dataset("weekly"))
        real_preview = sampling.audit_preview

        def preview_while_another_request_commits(**kwargs):
            # The other request passed the same name checks a moment earlier and commits now.
            Audit.objects.create(name="W49", dataset=answer.dataset, size=1, seed=1, population_size=1)
            return real_preview(**kwargs)

        with mock.patch.object(sampling, "audit_preview", preview_while_another_request_commits):
            r = self.call("post", "/audits", body={"dataset": "weekly", "name": "W49", "size": 1, "seed": 1})
        body = self.assertError(r, 400)
        self.assertEqual([e["field"] for e in body["errors"]], ["name"])


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100)
class BodySizeTests(ApiCase):
    def test_it_answers_a_json_body_over_the_request_limit_with_a_json_413(self):
        r = self.call("post", "/audits", body={"dataset": "weekly", "preview": True, "strata": ["x" * 200]})
        self.assertError(r, 413, "100 bytes")
        schema = self.call("get", "/openapi.json").json()
        for path in ("/api/v1/audits", "/api/v1/judge-runs", "/api/v1/judge-runs/estimate"):
            self.assertIn("413", schema["paths"][path]["post"]["responses"], path)

    def test_it_imports_a_body_sent_with_curls_default_form_content_type(self):
        # curl --data-binary without -H sends application/x-www-form-urlencoded: the body is still the file.
        line = json.dumps(record(1))
        self.assertGreater(len(line), 100)
        r = self.call("post", "/datasets/weekly/answers", body=line, content_type="application/x-www-form-urlencoded")
        self.assertEqual(r.status_code, 200, r.content[:300])
        self.assertEqual(r.json()["created"], 1)


class ReportVersionTests(ApiCase):
    def test_it_refuses_a_judge_version_without_verdicts_on_the_audit_naming_it(self):
        audit = make_labelled_audit(make_user("a", "annotator"), make_user("b", "annotator"), n_answers=1)
        version = judge_audit(audit, "supported")
        other = make_judge_version("elsewhere")
        ok = self.call("get", f"/audits/{audit.pk}/report?version={version.pk}")
        self.assertEqual(ok.json()["judge"]["version"]["id"], version.pk)
        for bad in (other.pk, 99999999999999999999, -1):  # the page shows the latest instead; the API says so
            body = self.assertError(self.call("get", f"/audits/{audit.pk}/report?version={bad}"), 400)
            self.assertEqual([e["field"] for e in body["errors"]], ["version"])


class RoleBeforeInputTests(ApiCase):
    def test_it_refuses_a_role_that_may_not_before_reading_its_input(self):
        # A 400 here told an annotator which inputs a lead's endpoint takes, and disagreed with the 403 of a valid one.
        for method, url, body in (
            ("post", "/audits", {}),
            ("post", "/audits", {"dataset": "weekly", "size": "many"}),
            ("get", "/datasets?limit=0", None),
            ("post", "/datasets/weekly/answers?format=exe", []),
            ("get", "/audits/1/gold?level=sentence", None),
            ("get", "/audits/1/report?version=x", None),
            ("get", "/guardrail", None),
            ("post", "/judge-runs", {"backend": "magic"}),
        ):
            for who in ("annotator", "nobody"):
                self.assertError(self.call(method, url, who=who, body=body), 403, "audit leads")
        self.assertError(self.call("get", "/audits/x", who="nobody"), 403)
        self.assertError(self.call("get", "/audits/x", who="annotator"), 400)  # theirs to read: the id is checked


class UnknownQueryParameterTests(ApiCase):
    def test_it_refuses_a_query_parameter_the_endpoint_does_not_take_naming_it(self):
        # A misspelt option was ignored: ?levl=answer exported claim-level gold, ?polcy=lenient checked strict.
        for url, field in (
            ("/audits/1/gold?levl=answer", "levl"),
            ("/datasets?limit=5&pge=2", "pge"),
            ("/guardrail?baseline=a&candidate=b&judge_version=1&polcy=lenient", "polcy"),
            ("/judge-runs/1?verbose=1", "verbose"),
        ):
            body = self.assertError(self.call("get", url), 400)
            self.assertEqual([e["field"] for e in body["errors"]], [field], url)
        self.assertError(self.call("get", "/audits/1/gold?levl=answer", who=None), 401)
        self.assertError(self.call("get", "/audits/1/gold?levl=answer", who="annotator"), 403)
        self.assertEqual(self.call("get", "/datasets?limit=5&offset=0").status_code, 200)


class JudgeRunScopeTests(ApiCase):
    def test_it_names_only_the_fields_this_api_takes_when_the_scope_is_missing(self):
        for url in ("/judge-runs", "/judge-runs/estimate"):
            for body in ({"backend": "offline"}, {"dataset": "weekly", "audit": 1, "backend": "offline"}):
                self.assertEqual(
                    self.assertError(self.call("post", url, body=body), 400)["message"],
                    "give exactly one of dataset or audit",
                    (url, body),
                )


class MultipartImportTests(ApiCase):
    def test_it_refuses_a_multipart_form_upload_with_a_415_saying_what_to_send(self):
        # curl -F file=@week.jsonl: the form's boundary lines were read as a malformed first record.
        upload = io.BytesIO(json.dumps(record(1)).encode())
        upload.name = "week.jsonl"
        r = self.client.post(
            "/api/v1/datasets/weekly/answers", {"file": upload}, HTTP_AUTHORIZATION=f"Bearer {self.tokens['lead']}"
        )
        self.assertError(r, 415, "multipart")
        schema = self.call("get", "/openapi.json").json()
        self.assertIn("415", schema["paths"]["/api/v1/datasets/{name}/answers"]["post"]["responses"])


class ConcurrentImportTests(ApiCase):
    def test_it_answers_409_when_another_import_holds_the_ids_and_200_noop_on_retry(self):
        # The same batch sent twice at once: the second found the ids staged by the first (a 400 said "bad input").
        dataset = make_dataset("weekly")
        staging = ImportBatch.objects.create(dataset=dataset, dataset_name="weekly", status=ImportBatch.Status.RUNNING)
        answer = make_answer(dataset, external_id="r1")
        Answer._base_manager.filter(pk=answer.pk).update(import_batch=staging)
        body = self.assertError(self.call("post", "/datasets/weekly/answers", body=[record(1)]), 409)
        self.assertEqual([e["field"] for e in body["errors"]], ["id"])
        schema = self.call("get", "/openapi.json").json()
        self.assertIn("409", schema["paths"]["/api/v1/datasets/{name}/answers"]["post"]["responses"])
