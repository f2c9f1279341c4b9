"""Drawing samples in the database: strata, reproducibility, frozen snapshots."""

import hashlib
from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.test import TestCase

from audit.models import Answer, AuditAnswer, Claim
from audit.sampling import draw as draw_mod
from audit.sampling import population as pop
from audit.sampling.services import audit_create, audit_preview
from tests.factories import days_ago, make_answers, make_dataset, make_judge_version, make_verdicts


def order_key_py(answer_id, seed):
    """The sampling order key computed in Python, from its definition, to compare with the database's."""
    digest = hashlib.sha256(str(int(seed)).encode()).digest()
    s1, s2, s3 = (int.from_bytes(digest[i : i + 8], "big") % pop.P for i in (0, 8, 16))
    x = answer_id % pop.P
    h1 = (x * pop.A1 + s1) % pop.P
    h2 = (h1 * h1 + x * (s2 or 1)) % pop.P
    return (h2 * h2 + h1 * (s3 or 1)) % pop.P


MODELS = ["gpt-4", "claude", "llama"]


def _pool(ds, n=600, **kw):
    return make_answers(
        ds,
        n,
        meta=lambda i: {"model": MODELS[i % 3]} if i % 10 else {},
        length=lambda i: (i * 37) % 1200,
        claims=0,
        **kw,
    )


def _sample(audit):
    return sorted(audit.items.values_list("answer_id", flat=True))


class StrataTests(TestCase):
    def setUp(self):
        self.ds = make_dataset("pool")
        _pool(self.ds)

    def test_it_counts_strata_by_group_by_with_none_for_missing_metadata(self):
        p = audit_preview(dataset=self.ds, strata_keys="meta.model, length", size=60)
        counts = {r["stratum"]: r["population"] for r in p["design"]}
        expected = Counter()
        for a in Answer.objects.filter(dataset=self.ds):
            model = a.meta.get("model", "(none)")
            bucket = "<300" if a.length < 300 else "300-800" if a.length <= 800 else ">800"
            expected[f"meta.model={model} | length={bucket}"] += 1
        assert counts == dict(expected)
        assert p["population_size"] == 600 and p["sample_size"] == 60

    def test_it_strata_by_the_judge_answer_verdict(self):
        answers = list(Answer.objects.filter(dataset=self.ds).order_by("id"))

        Claim.objects.bulk_create(Claim(answer=a, position=0, text="c", origin="imported") for a in answers[:30])
        old = make_judge_version("old", created=days_ago(3))
        make_verdicts(old, Claim.objects.filter(answer__in=answers[:30]), "unsupported")
        new = make_judge_version("new")
        make_verdicts(new, Claim.objects.filter(answer__in=answers[:10]), "contradicted")
        make_verdicts(new, Claim.objects.filter(answer__in=answers[10:25]), "supported")
        p = audit_preview(dataset=self.ds, strata_keys=["judge"], size=10)
        assert {r["stratum"]: r["population"] for r in p["design"]} == {
            "judge=fail": 10,
            "judge=pass": 15,
            "judge=unjudged": 575,
        }
        assert p["judge_version_id"] == new.id  # the most recently created version with verdicts here
        p = audit_preview(dataset=self.ds, strata_keys=["judge"], size=10, population_filter={"judge_version": old.id})
        assert {r["stratum"]: r["population"] for r in p["design"]} == {"judge=fail": 30, "judge=unjudged": 570}

    def test_it_filters_the_population(self):
        other = make_dataset("other")
        make_answers(other, 5, claims=0)
        make_answers(self.ds, 7, created_at=days_ago(40), meta=lambda i: {"model": "gpt-4"}, claims=0, prefix="old")
        p = audit_preview(dataset=self.ds, size=10)
        assert p["population_size"] == 607
        since = days_ago(10).date().isoformat()
        assert audit_preview(dataset=self.ds, population_filter={"created_from": since})["population_size"] == 600
        until = days_ago(20).date().isoformat()
        assert audit_preview(dataset=self.ds, population_filter={"created_to": until})["population_size"] == 7
        f = {"meta": {"model": "gpt-4"}, "created_to": until}
        assert audit_preview(dataset=self.ds, population_filter=f)["population_size"] == 7

    def test_it_rejects_unknown_strata_keys(self):
        for bad in ["model", "meta.", "meta.a b", "judge,judge"]:
            with pytest.raises(pop.StrataError):
                audit_preview(dataset=self.ds, strata_keys=bad)


class DrawTests(TestCase):
    def setUp(self):
        self.ds = make_dataset("pool")
        self.answers = _pool(self.ds)

    def test_it_computes_the_same_order_key_in_sql_as_in_python(self):
        qs = Answer.objects.filter(dataset=self.ds).annotate(k=pop.order_key(48)).values_list("id", "k")
        for seed in (0, 48, 2**62):
            qs = Answer.objects.filter(dataset=self.ds).annotate(k=pop.order_key(seed)).values_list("id", "k")
            assert all(k == order_key_py(pk, seed) for pk, k in qs)
        assert order_key_py(2**40 + 5, 3) < pop.P  # large ids stay in range (no 64-bit overflow)

    def test_it_stores_the_design_on_every_sampled_answer(self):
        audit = audit_create(name="w48", dataset=self.ds, strata_keys=["meta.model", "length"], size=60, seed=5)
        assert audit.status == "draft" and audit.seed == 5 and audit.population_size == 600
        rows = {r["stratum"]: r for r in audit.design}
        assert sum(r["sample"] for r in rows.values()) == 60 == audit.items.count()
        per_stratum = Counter(audit.items.values_list("stratum", flat=True))
        for item in audit.items.select_related("answer"):
            r = rows[item.stratum]
            assert (item.stratum_population, item.stratum_sample) == (r["population"], r["sample"])
            assert item.inclusion_probability == pytest.approx(r["sample"] / r["population"])
            assert item.weight == pytest.approx(r["population"] / r["sample"])
            assert per_stratum[item.stratum] == r["sample"]
            assert item.answer.meta.get("model", "(none)") in item.stratum
        assert sorted(audit.items.values_list("position", flat=True)) == list(range(60))

    def test_it_takes_the_smallest_keys_within_each_stratum(self):
        audit = audit_create(name="w48", dataset=self.ds, strata_keys=["meta.model"], size=45, seed=11)
        chosen = Counter()
        for item in audit.items.select_related("answer"):
            model = item.answer.meta.get("model", "(none)")
            members = [a.id for a in self.answers if a.meta.get("model", "(none)") == model]
            best = sorted(members, key=lambda pk: (order_key_py(pk, 11), pk))[: item.stratum_sample]
            assert item.answer_id in best
            chosen[model] += 1
        assert sum(chosen.values()) == 45

    def test_it_draws_the_same_sample_whatever_the_thresholds(self):
        first = audit_create(name="a", dataset=self.ds, strata_keys=["meta.model", "length"], size=50, seed=3)
        real = draw_mod._threshold
        calls = []

        def stingy(n, N, factor=1.0):  # start far too low: forces the re-query path
            calls.append(factor)
            return min(pop.P, max(1, int(pop.P * 0.0005 * factor)))

        draw_mod._threshold = stingy
        try:
            second = audit_create(name="b", dataset=self.ds, strata_keys=["meta.model", "length"], size=50, seed=3)
        finally:
            draw_mod._threshold = real
        assert max(calls) > 1
        assert _sample(first) == _sample(second)

    def test_it_reproduces_the_sample_from_the_seed(self):
        kw = {"dataset": self.ds, "strata_keys": ["meta.model", "length"], "size": 40, "allocation_method": "equal"}
        a = audit_create(name="a", seed=123, **kw)
        b = audit_create(name="b", seed=123, **kw)
        c = audit_create(name="c", seed=124, **kw)
        assert _sample(a) == _sample(b)
        assert _sample(a) != _sample(c)
        assert list(a.items.values_list("answer_id", flat=True)) == list(b.items.values_list("answer_id", flat=True))

    def test_it_stores_a_random_seed_when_none_is_given(self):
        a = audit_create(name="a", dataset=self.ds, size=10)
        b = audit_create(name="b", dataset=self.ds, size=10)
        assert a.seed != b.seed and a.seed >= 0

    def test_it_freezes_the_population(self):
        audit = audit_create(name="a", dataset=self.ds, strata_keys=["meta.model"], size=30, seed=9)
        before = list(audit.items.values_list("answer_id", "stratum", "stratum_population", "weight"))
        _pool(self.ds, 300, prefix="late")
        audit.refresh_from_db()
        assert audit.population_size == 600
        assert list(audit.items.values_list("answer_id", "stratum", "stratum_population", "weight")) == before
        later = audit_create(name="b", dataset=self.ds, strata_keys=["meta.model"], size=30, seed=9)
        assert later.population_size == 900

    def test_it_excludes_answers_already_audited(self):
        first = audit_create(name="a", dataset=self.ds, size=100, seed=1)
        second = audit_create(name="b", dataset=self.ds, size=100, seed=1, population_filter={"exclude_audited": True})
        assert second.population_size == 500
        assert not set(_sample(first)) & set(_sample(second))

    def test_it_samples_everyone_when_the_stratum_is_smaller_than_its_allocation(self):
        make_answers(self.ds, 4, meta=lambda i: {"model": "tiny"}, claims=0, prefix="t")
        audit = audit_create(
            name="a", dataset=self.ds, strata_keys=["meta.model"], size=40, seed=1, allocation_method="equal"
        )
        tiny = audit.items.filter(stratum="meta.model=tiny")
        assert tiny.count() == 4 and {i.weight for i in tiny} == {1.0}
        assert audit.items.count() == 40

    def test_it_refuses_a_duplicate_name(self):
        audit_create(name="a", dataset=self.ds, size=5, seed=1)
        with pytest.raises(ValidationError):
            audit_create(name="a", dataset=self.ds, size=5, seed=1)
        assert AuditAnswer.objects.count() == 5
