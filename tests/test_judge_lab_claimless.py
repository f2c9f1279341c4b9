"""The judge lab's answer level counts a sampled answer without claims as the report does: it passes (no scored
claim), in gold and for a claim-level version (nothing to verify); an answer-level version judges it like any other.
On the hand-made gold set (tests/lab_helpers.py) with a fourth answer, ans3, without claims, in stratum rest."""

import pytest

from annotations.lab.services import answers_to_judge, run_estimate
from audit.models import AnswerVerdict, Audit, AuditAnswer
from tests.factories import make_answer, make_user
from tests.lab_helpers import build_gold_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold(client):
    a, b, adj = make_user("ann1", "annotator"), make_user("ann2", "annotator"), make_user("adj", "adjudicator")
    client.force_login(make_user("lead", "lead"))
    audit, versions, claims, answers = build_gold_set(a, b, adj)
    # Stratum rest now stands for 3 answers of the population with 3 drawn: ans1, ans2 and ans3 (no claims).
    ans3 = make_answer(audit.dataset, n_claims=0, external_id="gold-week-ans3")
    AuditAnswer.objects.create(audit=audit, answer=ans3, position=3, stratum="rest", stratum_population=3,
                               stratum_sample=3, inclusion_probability=1.0, weight=1.0)  # fmt: skip
    AuditAnswer.objects.filter(audit=audit, stratum="rest").update(stratum_population=3, stratum_sample=3)
    return audit, versions, answers | {3: ans3}


def answers_row(client, audit, version):
    r = client.get("/lab/", {"dataset": audit.dataset_id, "version": version.pk})
    assert r.status_code == 200
    return r.context["a"]["answers"]


def test_it_counts_an_answer_without_claims_as_passing_in_gold_and_for_a_claim_level_version(client, gold):
    audit, v, answers = gold
    ans = answers_row(client, audit, v["A"])
    # Gold (strict): ans0 fail, ans1 fail, ans2 pass, ans3 pass. Version A: pass, fail, pass, pass.
    # Rows judge fail/pass, columns gold fail/pass: fail [ans1, -], pass [ans0, ans2 ans3].
    assert ans["matrix"] == [[1, 0], [1, 2]] and (ans["judged"], ans["not_judged"]) == (4, 0)
    assert ans["sampled"]["accuracy"] == pytest.approx(3 / 4)  # ans1, ans2, ans3 right
    # Weights: alone N 2 over its 1 answer = 2 (ans0); rest N 3 over ans1, ans2, ans3 = 1 each. Right 3 of 5.
    assert ans["weighted"]["accuracy"] == pytest.approx(3 / 5)
    assert ans["sampled"]["bad_recall"] == pytest.approx(1 / 2)  # of gold's 2 failing answers, ans1 caught


def test_it_leaves_an_answer_without_claims_to_an_answer_level_versions_own_score(client, gold):
    audit, v, answers = gold
    ans = answers_row(client, audit, v["R"])  # R: score 0 on ans0, ans1, ans2; nothing on ans3
    assert ans["matrix"] == [[2, 1], [0, 0]] and (ans["judged"], ans["not_judged"]) == (3, 1)
    # Rest N 3 over the 2 answers R judged there: 1.5 each. Right: ans0 (2) + ans1 (1.5) of 2 + 1.5 + 1.5.
    assert ans["weighted"]["accuracy"] == pytest.approx(3.5 / 5)
    AnswerVerdict.objects.create(answer=answers[3], judge_version=v["R"], score=1)
    ans = answers_row(client, audit, v["R"])
    assert ans["matrix"] == [[2, 1], [0, 1]] and (ans["judged"], ans["not_judged"]) == (4, 0)
    assert ans["sampled"]["accuracy"] == pytest.approx(3 / 4) and ans["weighted"]["accuracy"] == pytest.approx(4 / 5)


def test_it_runs_an_answer_level_version_on_an_answer_without_claims_too(gold):
    audit, v, answers = gold
    audits = Audit.objects.filter(pk=audit.pk)
    assert list(answers_to_judge(v["R"], audits)) == [answers[3]]  # R scored the other three
    assert run_estimate(v["R"], audits)["answers"] == 1
    assert not answers_to_judge(v["A"], audits).exists()  # a claim-level version has nothing to verify there
