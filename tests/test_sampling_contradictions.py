"""The New audit form and the audits API on contradictory or unreachable designs: a date window that ends
before it starts, a minimum per stratum above the size, a size above the population, more strata than the
sample can reach; and what the audit page offers for an audit with nothing to label or a closed one."""

import datetime as dt
import json

import pytest
from django.core.exceptions import ValidationError
from django.test import TestCase

from annotations.models import Assignment
from audit.models import Audit, JudgeRun
from audit.sampling.forms import refusal_fields
from audit.sampling.services import NO_JUDGE, audit_create, audit_preview
from claimaudit.services import api_token_create
from tests.factories import make_answers, make_audit, make_dataset, make_user

HX = {"HX-Request": "true"}
MODELS = ["m1", "m2", "m3"]


class ContradictionTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)
        self.ds = make_dataset("pool")
        day = dt.datetime(2026, 11, 23, 12, tzinfo=dt.UTC)
        make_answers(self.ds, 30, meta=lambda i: {"model": MODELS[i % 3], "rid": f"r{i:02d}"}, created_at=day)

    def form(self, **kw):
        data = {"name": "2026-W48", "dataset": self.ds.id, "size": 10, "strata": "meta.model"}
        return data | {"allocation": "proportional", "default_fail_rate": 0.1, "min_per_stratum": 0, **kw}

    def test_it_refuses_a_window_that_ends_before_it_starts_and_keeps_what_was_typed(self):
        data = self.form(created_from="2026-11-29", created_to="2026-11-23")
        r = self.client.post("/audits/new/", data)
        assert r.status_code == 400 and not Audit.objects.exists()
        assert r.context["form"].errors["created_to"] == [
            "ends (2026-11-23) before the window starts (2026-11-29): it holds no answer"
        ]
        page = r.content.decode()
        assert 'value="2026-11-29"' in page and 'value="2026-11-23"' in page and 'value="2026-W48"' in page
        r = self.client.post("/audits/new/", data, headers=HX)  # the preview names the field too
        self.assertContains(r, "Created to: ends (2026-11-23) before the window starts (2026-11-29)")

    def test_it_refuses_a_minimum_per_stratum_above_the_size(self):
        r = self.client.post("/audits/new/", self.form(min_per_stratum=20))
        assert r.status_code == 400 and not Audit.objects.exists()
        assert r.context["form"].errors["min_per_stratum"] == ["at least 20 per stratum cannot fit in a sample of 10"]
        assert 'name="min_per_stratum" value="20"' in r.content.decode()

    def test_it_says_when_a_minimum_cannot_be_met_in_every_stratum(self):
        # 3 strata of 10 answers, at least 4 each needs 12 answers, the sample has 10.
        r = self.client.post("/audits/new/", self.form(min_per_stratum=4), headers=HX)
        self.assertContains(
            r,
            "<strong>Min per stratum</strong>: at least 4 in each of 3 strata needs 12 answers, more than the "
            "sample&#x27;s 10: the sample is spread as evenly as the minimum allows instead.",
        )

    def test_it_says_when_the_size_is_above_the_population_in_preview_and_on_creation(self):
        r = self.client.post("/audits/new/", self.form(size=500), headers=HX)
        self.assertContains(
            r, "<strong>Size</strong>: size 500 is above the population&#x27;s 30 answers: all 30 are taken."
        )
        r = self.client.post("/audits/new/", self.form(size=500), follow=True)
        assert Audit.objects.get().items.count() == 30
        self.assertContains(r, "size: size 500 is above the population&#x27;s 30 answers: all 30 are taken.")

    def test_it_summarises_strata_that_outnumber_the_size_once_and_refuses_to_create_them(self):
        # 30 strata (one answer each), 10 answers: 10 strata drawn, 20 left with inclusion probability 0.
        r = self.client.post("/audits/new/", self.form(strata="meta.rid"), headers=HX)
        page = r.content.decode()
        summary = (
            "30 strata share 10 answers: the seed would pick 10 strata (each with the same chance) and leave 20 "
            "with inclusion probability 0, which cannot be weighted back to the population, so this design is "
            "not created; raise the size to 30 or use fewer strata"
        )
        assert page.count(summary) == 1 and page.count("strata share") == 1
        assert page.count("not sampled</span>") == 20
        r = self.client.post("/audits/new/", self.form(strata="meta.rid"))
        assert r.status_code == 400 and not Audit.objects.exists()
        assert r.context["form"].errors["strata"] == [summary]
        r = self.client.post("/audits/new/", self.form(strata="meta.rid", size=30))  # one per stratum: drawn
        audit = Audit.objects.get()
        assert audit.items.count() == 30 and {r["inclusion_probability"] for r in audit.design} == {1.0}

    def test_it_says_on_creation_that_a_stratum_got_no_sample(self):
        make_answers(self.ds, 1, meta=lambda i: {"model": "rare", "rid": "x"}, prefix="rare")
        # proportional, 11 of 31: each model 11 * 10/31 = 3.55, rare 11 * 1/31 = 0.35; the floors give 9 and the
        # two units left go to the largest fractional parts, two of the models'
        r = self.client.post("/audits/new/", self.form(size=11), follow=True)
        audit = Audit.objects.get()
        assert {row["stratum"]: row["sample"] for row in audit.design}["meta.model=rare"] == 0
        self.assertContains(r, "min_per_stratum: 1 stratum gets no answer (inclusion probability 0: not weighted")
        self.assertContains(r, "1 stratum of this design got no sample (inclusion probability 0)")


class ApiTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.token = api_token_create(self.lead, name="t")[1]
        self.ds = make_dataset("weekly")
        make_answers(self.ds, 12, meta=lambda i: {"model": MODELS[i % 3], "rid": f"r{i}"})

    def post(self, **body):
        return self.client.post(
            "/api/v1/audits",
            json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.token}",
        )

    def test_it_names_a_dataset_that_does_not_exist(self):
        r = self.post(dataset="nope", name="x")
        assert r.status_code == 400
        assert r.json()["errors"] == [{"field": "dataset", "message": "no dataset named 'nope' exists"}]

    def test_it_names_the_field_of_a_contradiction_and_reports_notes(self):
        r = self.post(dataset="weekly", name="x", created_from="2026-11-29", created_to="2026-11-23")
        assert r.status_code == 400 and [e["field"] for e in r.json()["errors"]] == ["created_to"]
        r = self.post(dataset="weekly", name="x", strata=["meta.rid"], size=5)
        assert r.status_code == 400 and [e["field"] for e in r.json()["errors"]] == ["strata"]
        r = self.post(dataset="weekly", preview=True, size=50)
        assert r.status_code == 200 and r.json()["notes"] == [
            {"field": "size", "message": "size 50 is above the population's 12 answers: all 12 are taken", "line": None}
        ]
        r = self.post(dataset="weekly", name="x", size=50)
        assert r.status_code == 201 and [n["field"] for n in r.json()["notes"]] == ["size"]
        assert Audit.objects.get(name="x").items.count() == 12  # all 12 taken, as the note says


class DetailTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)
        self.team = [make_user(f"ann{i}", "annotator") for i in range(2)]

    def test_it_disables_assign_for_an_audit_with_nothing_to_label(self):
        audit = make_audit(make_answers(make_dataset("empty"), 1), name="nothing", status="draft")
        audit.items.all().delete()  # an empty sample (one is no longer created; an older one may exist)
        r = self.client.get(f"/audits/{audit.id}/")
        self.assertContains(r, "Nothing to label: the sample is empty.")
        self.assertContains(r, '<button type="submit" disabled>Assign and start labelling</button>', html=False)

    def test_it_neither_offers_nor_runs_the_judge_on_a_closed_audit(self):
        ds = make_dataset("closed")
        audit = make_audit(make_answers(ds, 3), status="closed")
        r = self.client.get(f"/audits/{audit.id}/")
        self.assertNotContains(r, "Run the judge on these")
        self.assertContains(r, "This audit is closed: its sample is not judged again from here")
        r = self.client.post(f"/audits/{audit.id}/judge/", {"backend": "offline"}, follow=True)
        self.assertContains(r, f"Audit {audit.name} is closed: its sample is not judged again.")
        assert not JudgeRun.objects.exists() and not Assignment.objects.exists()
        Audit.objects.filter(pk=audit.pk).update(status="draft")
        self.assertContains(self.client.get(f"/audits/{audit.id}/"), "Run the judge on these 3 answers")


class AlreadyAuditedTests(TestCase):
    def test_it_says_how_many_of_the_population_are_already_in_an_audit(self):
        self.client.force_login(make_user("lead", "lead"))
        ds = make_dataset("pool")
        answers = make_answers(ds, 12)
        make_audit(answers[:5], name="earlier")
        data = {"dataset": ds.id, "size": 4, "allocation": "proportional", "min_per_stratum": 0}
        r = self.client.post("/audits/new/", data, headers=HX)
        self.assertContains(r, "5 of the population's answers are already in an audit")
        r = self.client.post("/audits/new/", data | {"exclude_audited": "on"}, headers=HX)
        self.assertContains(r, "<strong>7</strong> answers")
        self.assertNotContains(r, "already in an audit:")


class EmptyPopulationTests(TestCase):
    def test_it_refuses_to_create_an_audit_from_an_empty_population_naming_the_filter(self):
        ds = make_dataset("pool")
        make_answers(ds, 6, claims=1, prefix="e")
        preview = audit_preview(dataset=ds, population_filter={"meta": {"model": "nope"}}, size=5)
        assert preview["population_size"] == 0
        assert [n["field"] for n in preview["notes"]] == ["meta_filters"]
        with pytest.raises(ValidationError) as e:
            audit_create(name="t-empty", dataset=ds, population_filter={"meta": {"model": "nope"}}, size=5, seed=1)
        assert list(e.value.message_dict) == ["meta_filters"]
        assert not Audit.objects.filter(name="t-empty").exists()


class SameRefusalTests(TestCase):
    """The New audit page and the audits API read a refusal of the preview or the draw in one place: the same
    inputs name the same field with the same message on both."""

    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)
        self.token = api_token_create(self.lead, name="t")[1]
        self.ds = make_dataset("weekly")
        make_answers(self.ds, 12, meta=lambda i: {"model": MODELS[i % 3], "rid": f"r{i}"})

    def page_errors(self, **kw):
        data = {"name": "x", "dataset": self.ds.id, "size": 5, "allocation": "proportional", "min_per_stratum": 0}
        r = self.client.post("/audits/new/", data | kw)
        assert r.status_code == 400
        return [(f, " ".join(m)) for f, m in r.context["form"].errors.items()]

    def api_errors(self, **kw):
        body = json.dumps({"dataset": "weekly", "name": "x", "size": 5} | kw)
        r = self.client.post(
            "/api/v1/audits", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {self.token}"
        )
        assert r.status_code == 400
        return [(e["field"], e["message"]) for e in r.json()["errors"]]

    def test_it_names_the_same_field_on_the_page_and_in_the_api(self):
        cases = [  # a metadata key no answer has; more strata than the sample; a filter that empties the population
            ({"strata": "meta.nope"}, {"strata": ["meta.nope"]}, "strata"),
            ({"strata": "meta.rid"}, {"strata": ["meta.rid"]}, "strata"),
            ({"meta_filters": "model = none"}, {"meta_filters": {"model": "none"}}, "meta_filters"),
        ]
        for page, api, field in cases:
            errors = self.page_errors(**page)
            assert [f for f, _ in errors] == [field] and errors == self.api_errors(**api), (page, errors)

    def test_it_names_the_name_of_an_audit_created_meanwhile(self):
        """The form checks the name first; an audit of that name saved between the check and the draw is refused
        by the draw, on the name field (it was a message of no field)."""
        audit_create(name="x", dataset=self.ds, size=3, seed=1)
        with pytest.raises(ValidationError) as e:
            audit_create(name="x", dataset=self.ds, size=3, seed=1)
        assert refusal_fields(e.value) == [("name", "an audit named 'x' already exists")]


class JudgeKeyTests(TestCase):
    def test_it_says_when_the_judge_key_has_no_judge_to_read(self):
        """Stratifying by the judge before any judge ran put every answer in judge=unjudged without a word."""
        ds = make_dataset("pool")
        make_answers(ds, 20, claims=1, prefix="j")
        preview = audit_preview(dataset=ds, strata_keys="judge", allocation_method="neyman", size=10)
        assert [r["stratum"] for r in preview["design"]] == ["judge=unjudged"]
        assert [(n["field"], n["message"]) for n in preview["notes"]] == [("strata", NO_JUDGE)]
        # One stratum takes the whole sample whatever its expected failure rate: nothing to say about the rate.
        rates = {"*": 0.0}
        preview = audit_preview(
            dataset=ds, strata_keys="judge", allocation_method="neyman", size=10, expected_fail_rates=rates
        )
        assert [n["field"] for n in preview["notes"]] == ["strata"]


class UnmatchedRateTests(TestCase):
    def test_it_says_which_failure_rates_no_stratum_matches_under_neyman(self):
        """A misspelt stratum label in the failure rates was ignored without a word: the default applied."""
        ds = make_dataset("pool")
        make_answers(ds, 30, meta=lambda i: {"model": MODELS[i % 3]}, prefix="u")
        rates = {"*": 0.1, "meta.model=m1": 0.5, "meta.model=m9": 0.5}
        kwargs = {"dataset": ds, "strata_keys": "meta.model", "size": 9, "expected_fail_rates": rates}
        preview = audit_preview(**kwargs, allocation_method="neyman")
        assert [(n["field"], n["message"]) for n in preview["notes"]] == [
            ("fail_rates", "no stratum matches 'meta.model=m9': the default rate applies instead")
        ]
        assert audit_preview(**kwargs, allocation_method="proportional")["notes"] == []  # rates unused there


class PopulationShownTests(TestCase):
    def test_it_shows_the_population_in_words_and_no_filter_as_none(self):
        """The audit page listed the raw filter: 'meta {} exclude_audited False' for an audit of every answer."""
        self.client.force_login(make_user("lead", "lead"))
        ds = make_dataset("pool")
        make_answers(
            ds, 12, meta=lambda i: {"model": MODELS[i % 3]}, created_at=dt.datetime(2026, 11, 24, tzinfo=dt.UTC)
        )
        every = audit_create(name="all", dataset=ds, population_filter={"meta": {}, "exclude_audited": False}, size=3)
        page = self.client.get(f"/audits/{every.pk}/").content.decode()
        assert '<p class="muted" id="population">Population: every answer of pool (no filter).</p>' in page
        assert "exclude_audited" not in page
        f = {"created_from": "2026-11-23", "created_to": "2026-11-29", "meta": {"model": "m1"}, "exclude_audited": True}
        some = audit_create(name="some", dataset=ds, population_filter=f, size=2)
        page = self.client.get(f"/audits/{some.pk}/").content.decode()
        assert (
            "Population: the answers of pool created 2026-11-23 to 2026-11-29 with metadata model = m1, "
            "not already in an audit when it was drawn.</p>" in page
        )
