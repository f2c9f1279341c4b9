"""Strata and filters on metadata nested in objects (meta.additional_metadata.topic, as DeepEval's
additional_metadata lands after import): the preview, the draw, the audit form, the API and the calibration
sample; unknown keys are refused with the paths there are."""

import io
import json
from collections import Counter

import pytest
from django.test import TestCase

from audit.ingest.services import answers_import
from audit.models import Audit, AuditAnswer, Claim, JudgeVerdict
from audit.sampling import population as pop
from audit.sampling.calibration import calibration_audit_create
from audit.sampling.services import audit_create, audit_preview
from claimaudit.services import api_token_create
from tests.factories import make_answers, make_dataset, make_judge_version, make_user

KEY = "meta.additional_metadata.topic"
HX = {"HX-Request": "true"}


def topic(i):
    """70 answers: 30 billing, 20 shipping, 10 with the number 7 as topic, 10 without additional_metadata."""
    if i < 30:
        return {"topic": "billing", "lang": "en"}
    if i < 50:
        return {"topic": "shipping"}
    return {"topic": 7} if i < 60 else None


def deepeval_lines():
    rows = []
    for i in range(70):
        row = {"input": f"q{i}?", "actual_output": "a.", "retrieval_context": ["c."], "name": f"case-{i}"}
        if topic(i) is not None:
            row["additional_metadata"] = topic(i)
        rows.append(json.dumps(row).encode() + b"\n")
    return b"".join(rows)


# Proportional allocation of 14 among N = 70: n_h = 14 * N_h / 70, exact here: 6, 4, 2, 2.
SIZES = {"billing": (30, 6), "shipping": (20, 4), "7": (10, 2), "(none)": (10, 2)}


class NestedStrataTests(TestCase):
    def setUp(self):
        batch = answers_import(io.BytesIO(deepeval_lines()), dataset_name="evals", file_name="evals.jsonl")
        assert (batch.status, batch.created) == ("done", 70), batch.errors
        self.ds = batch.dataset

    def test_it_previews_strata_sizes_on_a_nested_key(self):
        p = audit_preview(dataset=self.ds, strata_keys=KEY, size=14)
        got = {row["stratum"]: (row["population"], row["sample"]) for row in p["design"]}
        assert got == {f"{KEY}={value}": sizes for value, sizes in SIZES.items()}
        assert "additional_metadata.topic" in p["meta_fields"]

    def test_it_draws_the_sample_with_its_inclusion_probabilities(self):
        audit = audit_create(name="w1", dataset=self.ds, strata_keys=KEY, size=14, seed=5)
        rows = AuditAnswer.objects.filter(audit=audit)
        assert Counter(rows.values_list("stratum", flat=True)) == {f"{KEY}={v}": n for v, (_, n) in SIZES.items()}
        for row in rows.select_related("answer"):
            value = (row.answer.meta.get("additional_metadata") or {}).get("topic", "(none)")
            N, n = SIZES[str(value)]
            assert (row.stratum, row.inclusion_probability) == (f"{KEY}={value}", pytest.approx(n / N))
        assert audit.strata_keys == [KEY]

    def test_it_filters_the_population_on_a_nested_field(self):
        f = {"meta": {"additional_metadata.topic": "billing"}}
        assert audit_preview(dataset=self.ds, population_filter=f)["population_size"] == 30
        f = {"meta": {"additional_metadata.lang": "en"}}
        assert audit_preview(dataset=self.ds, population_filter=f, strata_keys=KEY)["design"][0]["population"] == 30

    def test_it_refuses_an_unknown_nested_key_naming_the_paths_there_are(self):
        with pytest.raises(pop.StrataError) as e:
            audit_preview(dataset=self.ds, strata_keys="meta.additional_metadata.topik")
        message = str(e.value)
        assert "no answer in the population has metadata field 'additional_metadata.topik'" in message
        assert message.endswith(
            "available: meta.additional_metadata, meta.additional_metadata.lang, meta.additional_metadata.topic"
            ", meta.name"
        )

    def test_it_refuses_keys_that_are_not_metadata_paths(self):
        # "meta.run.0": a key of digits would be read as a list index by the lookups, so no stratum would match
        for bad in [
            "meta.a..b",
            "meta.a.",
            "meta..a",
            "meta.a.b c",
            "meta.a.b.c.d.e",
            f"{KEY}, {KEY}",
            "meta.run.0",
            "meta.a.1_0",
        ]:
            with pytest.raises(pop.StrataError):
                pop.parse_strata_keys(bad)
        assert pop.parse_strata_keys("judge, meta.a.b.c.d") == ["judge", "meta.a.b.c.d"]
        assert pop.parse_strata_keys("meta.run_1, meta.a._1") == ["meta.run_1", "meta.a._1"]  # int() reads neither


class PathListingTests(TestCase):
    def test_it_lists_nested_paths_up_to_a_depth_and_a_count(self):
        deep, wide = make_dataset("deep"), make_dataset("wide")
        make_answers(deep, 2, meta=lambda i: {"a": {"b": {"c": {"d": {"e": 1}}}}, "odd key": {"x": 1}}, claims=0)
        assert pop.meta_fields(pop.population(deep)) == ["a", "a.b", "a.b.c", "a.b.c.d"]  # four keys at most
        make_answers(wide, 2, meta=lambda i: {"a": {"b": {"c": 1}}, "w": {f"k{i:02}": i for i in range(60)}}, claims=0)
        # 50 paths, the shallower first: a and w, then 48 of a.b and w.k00 ... w.k59 (a.b.c is left out)
        expected = ["a", "a.b", "w", *(f"w.k{i:02}" for i in range(47))]
        assert pop.meta_fields(pop.population(wide)) == expected


class PagesTests(TestCase):
    def setUp(self):
        batch = answers_import(io.BytesIO(deepeval_lines()), dataset_name="evals", file_name="evals.jsonl")
        self.ds = batch.dataset
        self.client.force_login(make_user("lead", "lead"))
        self.token = api_token_create(make_user("bot", "lead"), "ci")[1]

    def form(self, **extra):
        data = {"dataset": self.ds.id, "size": 14, "allocation": "proportional", "min_per_stratum": 0, **extra}
        return self.client.post("/audits/new/", data, headers=HX)

    def api(self, body):
        auth = f"Bearer {self.token}"
        return self.client.post("/api/v1/audits", body, content_type="application/json", HTTP_AUTHORIZATION=auth)

    def test_the_audit_form_previews_and_refuses_nested_keys(self):
        r = self.form(strata=KEY)
        self.assertContains(r, f"{KEY}=billing")
        self.assertContains(r, "<code>meta.additional_metadata.topic</code>")
        r = self.form(strata="meta.additional_metadata.topik")
        self.assertContains(r, "available: meta.additional_metadata, meta.additional_metadata.lang")
        r = self.form(strata=KEY, meta_filters="additional_metadata.topic = shipping")
        self.assertContains(r, f"{KEY}=shipping")
        self.assertNotContains(r, f"{KEY}=billing")

    def test_the_api_previews_and_creates_an_audit_on_a_nested_key(self):
        body = {"dataset": "evals", "size": 14, "strata": [KEY], "preview": True}
        r = self.api(body)
        self.assertEqual(r.status_code, 200, r.content)
        got = {row["stratum"]: (row["population"], row["sample"]) for row in r.json()["design"]}
        self.assertEqual(got, {f"{KEY}={value}": sizes for value, sizes in SIZES.items()})
        body |= {"preview": False, "name": "api-nested", "seed": 3}
        r = self.api(body)
        self.assertEqual(r.status_code, 201, r.content)
        self.assertEqual(Audit.objects.get(name="api-nested").items.count(), 14)
        body["strata"] = ["meta.additional_metadata.topik"]
        r = self.api(body | {"name": "x"})
        self.assertEqual(r.status_code, 400)
        self.assertIn("meta.additional_metadata.topic", json.dumps(r.json()))


@pytest.mark.django_db
def test_a_calibration_sample_stratifies_claims_by_a_nested_field():
    ds = make_dataset()
    answers = make_answers(ds, 4, meta=lambda i: {"extra": {"metadata": {"team": "eu" if i < 3 else "us"}}}, claims=2)
    version = make_judge_version("j", kind="anthropic", content_hash="j" * 64)
    claims = Claim.objects.filter(answer__in=answers)
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(claim=c, judge_version=version, raw_verdict="supported", verdict="supported") for c in claims
    )
    audit = calibration_audit_create(
        name="cal", dataset=ds, version=version, size=8, seed=1, meta_field="extra.metadata.team"
    )
    design = {row["stratum"]: row["population"] for row in audit.design}
    assert design == {"supported | meta.extra.metadata.team=eu": 6, "supported | meta.extra.metadata.team=us": 2}
