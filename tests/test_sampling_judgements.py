"""The judge's per-answer outcome (AnswerJudgement) used to stratify: same as the verdict-level definition,
kept in step with verdicts added or deleted, and counted the same whichever position the judge key has."""

from django.db.models import Case, Exists, OuterRef, TextField, Value, When
from django.test import TestCase

from audit.models import Answer, AnswerJudgement, Claim, JudgeVerdict
from audit.models.answers import BAD_VERDICTS
from audit.sampling import draw as draw_mod
from audit.sampling import population as pop
from audit.sampling.judgements import judgements_sync
from audit.sampling.services import audit_create, audit_preview
from tests.factories import make_answers, make_dataset, make_judge_version, make_verdicts


def _exists_outcomes(dataset, version):
    """The definition before AnswerJudgement: fail if any bad verdict, pass if any verdict, else unjudged."""
    verdicts = JudgeVerdict.objects.filter(claim__answer=OuterRef("pk"), judge_version=version)
    outcome = Case(
        When(Exists(verdicts.filter(verdict__in=BAD_VERDICTS)), then=Value("fail")),
        When(Exists(verdicts), then=Value("pass")),
        default=Value("unjudged"),
        output_field=TextField(),
    )
    return dict(Answer.objects.filter(dataset=dataset).annotate(o=outcome).values_list("external_id", "o"))


def _table_outcomes(dataset, version):
    got = dict(AnswerJudgement.objects.filter(judge_version=version).values_list("answer__external_id", "outcome"))
    return {
        a: got.get(a, "unjudged") for a in Answer.objects.filter(dataset=dataset).values_list("external_id", flat=True)
    }


class AnswerJudgementTests(TestCase):
    def setUp(self):
        self.ds = make_dataset("hand")
        # a0: supported + contradicted; a1: supported + non_assertive; a2: non_assertive only; a3: claims, no
        # verdict; a4: no claims; a5: verdicts only under another version; a6: unsupported only.
        self.a = make_answers(self.ds, 7, claims=2, meta=lambda i: {"model": "m" + str(i % 2)})
        Claim.objects.filter(answer=self.a[4]).delete()
        self.v, other = make_judge_version("v"), make_judge_version("other")
        claims = {a.pk: list(Claim.objects.filter(answer=a).order_by("position")) for a in self.a}
        rows = [
            (0, 0, "supported"),
            (0, 1, "contradicted"),
            (1, 0, "supported"),
            (1, 1, "non_assertive"),
            (2, 0, "non_assertive"),
            (2, 1, "non_assertive"),
            (6, 0, "unsupported"),
        ]
        JudgeVerdict.objects.bulk_create(
            JudgeVerdict(claim=claims[self.a[i].pk][p], judge_version=self.v, raw_verdict=x, verdict=x)
            for i, p, x in rows
        )
        make_verdicts(other, Claim.objects.filter(answer__in=[self.a[5]]), "contradicted")

    def test_it_derives_the_same_outcome_as_the_verdict_level_definition(self):
        assert judgements_sync(self.v.id) == "rebuilt"
        expected = {
            "b0": "fail",
            "b1": "pass",
            "b2": "pass",
            "b3": "unjudged",
            "b4": "unjudged",
            "b5": "unjudged",
            "b6": "fail",
        }
        assert _exists_outcomes(self.ds, self.v) == expected
        assert _table_outcomes(self.ds, self.v) == expected
        assert judgements_sync(self.v.id) == "fresh"

    def test_it_recomputes_only_answers_with_new_verdicts_then_rebuilds_after_a_deletion(self):
        judgements_sync(self.v.id)
        untouched = AnswerJudgement.objects.get(judge_version=self.v, answer=self.a[1]).pk
        make_verdicts(self.v, Claim.objects.filter(answer__in=[self.a[3]]), "unsupported")
        assert judgements_sync(self.v.id) == "incremental"
        assert _table_outcomes(self.ds, self.v) == _exists_outcomes(self.ds, self.v)
        assert _table_outcomes(self.ds, self.v)["b3"] == "fail"
        assert AnswerJudgement.objects.get(judge_version=self.v, answer=self.a[1]).pk == untouched
        Claim.objects.filter(answer=self.a[0], position=1).delete()  # drops the contradicted verdict
        assert judgements_sync(self.v.id) == "rebuilt"
        assert _table_outcomes(self.ds, self.v) == _exists_outcomes(self.ds, self.v)
        assert _table_outcomes(self.ds, self.v)["b0"] == "pass"

    def test_it_counts_strata_with_the_judge_key_in_any_position(self):
        judgements_sync(self.v.id)
        qs = pop.population(self.ds)
        assert draw_mod.strata_counts(qs, ["judge"], self.v.id) == [
            ("judge=fail", ("fail",), 2),
            ("judge=pass", ("pass",), 2),
            ("judge=unjudged", ("unjudged",), 3),
        ]
        by_model = {r[0]: r[2] for r in draw_mod.strata_counts(qs, ["meta.model", "judge"], self.v.id)}
        assert by_model == {
            "meta.model=m0 | judge=fail": 2,
            "meta.model=m0 | judge=pass": 1,
            "meta.model=m0 | judge=unjudged": 1,
            "meta.model=m1 | judge=pass": 1,
            "meta.model=m1 | judge=unjudged": 2,
        }
        flipped = {r[0]: r[2] for r in draw_mod.strata_counts(qs, ["judge", "meta.model"], self.v.id)}
        assert flipped == {" | ".join(reversed(k.split(" | "))): n for k, n in by_model.items()}

    def test_it_samples_from_verdicts_added_after_an_earlier_preview(self):
        before = audit_preview(
            dataset=self.ds, strata_keys=["judge"], size=3, population_filter={"judge_version": self.v.id}
        )
        assert {r["stratum"]: r["population"] for r in before["design"]}["judge=fail"] == 2
        make_verdicts(
            self.v, Claim.objects.filter(answer__in=[self.a[3], self.a[4]]), "contradicted"
        )  # a4 has no claims: stays unjudged
        audit = audit_create(
            name="w1",
            dataset=self.ds,
            strata_keys=["judge"],
            size=7,
            seed=3,
            population_filter={"judge_version": self.v.id},
        )
        strata = dict(audit.items.values_list("answer__external_id", "stratum"))
        assert strata["b3"] == "judge=fail" and strata["b4"] == "judge=unjudged" and strata["b2"] == "judge=pass"
