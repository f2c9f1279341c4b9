"""The judge lab on a hand-made gold set (tests/lab_helpers.py); expected values worked out by hand below."""

import math

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotations.lab import scoring, stats
from audit.judge.offline import offline_version
from audit.models import AnswerVerdict, JudgeLevel, JudgeRun, JudgeVerdict
from tests.factories import make_gold, make_labelled_audit, make_user
from tests.lab_helpers import GOLD, JUDGE_A, build_gold_set, version

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold(client):
    a, b, adj = make_user("ann1", "annotator"), make_user("ann2", "annotator"), make_user("adj", "adjudicator")
    lead = make_user("lead", "lead")
    client.force_login(lead)
    return build_gold_set(a, b, adj)


def lab(client, **params):
    r = client.get("/lab/", params)
    assert r.status_code == 200, r.content.decode()[:500]
    return r.context


def test_it_scores_a_claim_level_version_against_gold(client, gold):
    audit, v, claims, answers = gold
    ctx = lab(client, dataset=audit.dataset_id, version=v["A"].pk)
    c = ctx["a"]["claims"]
    # Confusion (rows judge, columns gold; S C U N): S [6 0 1 0], C [0 1 0 0], U [1 0 0 0]; n = 9.
    assert c["matrix"] == [[6, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    s = c["sampled"]
    assert s["accuracy"] == pytest.approx(7 / 9)
    pe = (7 * 7 + 1 * 1 + 1 * 1) / 81  # both margins S 7, C 1, U 1
    assert s["kappa"] == pytest.approx((7 / 9 - pe) / (1 - pe)) and s["kappa"] == pytest.approx(0.4)
    pi = [14 / 18, 2 / 18, 2 / 18, 0]  # mean marginals; AC1 chance agreement over q = 4 verdicts
    pe1 = sum(x * (1 - x) for x in pi) / 3
    assert s["ac1"] == pytest.approx((7 / 9 - pe1) / (1 - pe1)) and s["ac1"] == pytest.approx(53 / 71)
    assert s["bad_recall"] == pytest.approx(1 / 2)  # of the 2 bad gold claims, the contradicted one was caught
    sup, unsup = s["per_label"]["supported"], s["per_label"]["unsupported"]
    assert (sup["precision"], sup["recall"]) == (pytest.approx(6 / 7), pytest.approx(6 / 7))
    assert (unsup["precision"], unsup["recall"], unsup["f1"]) == (0.0, 0.0, 0.0)
    # Weighted (ans0 counts twice): S row [8 0 2 0], C [0 1 0 0], U [1 0 0 0]: 9 right of 12.
    assert c["weighted"]["accuracy"] == pytest.approx(9 / 12)
    noise = ctx["a"]["noise"]
    assert (noise["n"], noise["judge"]["agree"], noise["annotators"]["agree"]) == (9, 7, 8)
    # Answers (strict): gold fail, fail, pass; the version: pass, fail, pass -> 2 of 3; weighted 2 of 4.
    ans = ctx["a"]["answers"]
    assert ans["sampled"]["accuracy"] == pytest.approx(2 / 3) and ans["weighted"]["accuracy"] == pytest.approx(2 / 4)
    assert ans["sampled"]["bad_recall"] == pytest.approx(1 / 2)
    lenient = lab(client, dataset=audit.dataset_id, version=v["A"].pk, policy="lenient")["a"]["answers"]
    assert lenient["sampled"]["accuracy"] == 1.0  # gold pass, fail, pass = the version's, under lenient


def test_it_scores_an_answer_level_version_and_its_cost_per_answer(client, gold):
    audit, v, claims, answers = gold
    JudgeRun.objects.create(judge_version=v["R"], backend="anthropic", cost_usd=0.3, answers_done=3, status="done")
    ctx = lab(client, dataset=audit.dataset_id, version=v["R"].pk)
    ans = ctx["a"]["answers"]
    assert "claims" not in ctx["a"]
    assert ans["matrix"] == [[2, 1], [0, 0]]  # rows judge fail/pass, columns gold fail/pass
    assert ans["sampled"]["accuracy"] == pytest.approx(2 / 3) and ans["weighted"]["accuracy"] == pytest.approx(3 / 4)
    assert ctx["a"]["cost_per_answer"] == pytest.approx(0.1)


def test_it_weights_each_stratum_by_its_units_the_version_judged(client, gold):
    audit, v, claims, answers = gold
    # P (claim level) judged ans0 (stratum alone, N 2) with the gold, ans1 (stratum rest, N 2) as version A did, and
    # not ans2. Each stratum stands for its N with the one answer judged: every claim weighs 2 / 1. Right: ans0 3 of
    # 3, ans1 2 of 3 -> (3 * 2 + 2 * 2) / (6 * 2) = 10 / 12. The drawing weights (2, 1) would give 8 / 9.
    p = version("P-partial")
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(claim=claims[(i, k)], judge_version=p, raw_verdict=x, verdict=x)
        for i, row in ((0, GOLD[0]), (1, JUDGE_A[1]))
        for k, x in enumerate(row)
    )
    c = lab(client, dataset=audit.dataset_id, version=p.pk)["a"]["claims"]
    assert c["sampled"]["accuracy"] == pytest.approx(5 / 6)
    assert c["weighted"]["accuracy"] == pytest.approx((3 * 2 + 2 * 2) / (6 * 2))
    # Q (answer level) said fail on ans0 (gold fail: right) and ans2 (gold pass: wrong), nothing on ans1. Each
    # stratum's one judged answer weighs 2 / 1: 2 right of 4. The drawing weights (2, 1) would give 2 of 3.
    q = version("Q-rubric", JudgeLevel.ANSWER)
    AnswerVerdict.objects.bulk_create(AnswerVerdict(answer=answers[i], judge_version=q, score=0) for i in (0, 2))
    ans = lab(client, dataset=audit.dataset_id, version=q.pk)["a"]["answers"]
    assert ans["judged"] == 2 and ans["weighted"]["accuracy"] == pytest.approx(2 / (2 + 2))


def test_it_counts_an_answer_without_claims_among_its_strata_answers_with_data():
    # Stratum h (N 6) drew 3 answers: 2 with one judged gold claim each (right, wrong), 1 without a claim (every
    # claim it has, none, is in). Stratum g (N 2) drew 1 answer, its claim judged right. Weights: h 6 / 3 = 2, g 2.
    rows = [
        {"claim_id": i, "audit_id": 1, "answer_id": i, "verdict": "supported", "unit": ("answer", i),
         "stratum": h, "population": n}
        for i, h, n in ((1, "h", 6), (2, "h", 6), (3, "g", 2))
    ]  # fmt: skip
    verdicts = {1: ("supported", None), 2: ("unsupported", None), 3: ("supported", None)}
    claimless = [{"audit_id": 1, "answer_id": 4, "unit": ("answer", 4), "stratum": "h", "population": 6}]
    c = scoring.claim_level(rows, verdicts, claimless=claimless)
    assert c["weighted"]["accuracy"] == pytest.approx((2 + 2) / (2 + 2 + 2))
    # Without it, h would read 6 / 2 = 3 a claim: (3 + 2) / (3 + 3 + 2).
    assert scoring.claim_level(rows, verdicts)["weighted"]["accuracy"] == pytest.approx(5 / 8)


def test_it_compares_two_versions_with_mcnemar_and_a_paired_bootstrap(client, gold):
    audit, v, claims, answers = gold
    ctx = lab(client, dataset=audit.dataset_id, version=v["A"].pk, compare=v["C"].pk)
    pc = ctx["paired_claims"]
    # C is right on all 9 claims, A on 7: discordant pairs 0 for A, 2 for C.
    # Exact McNemar: 2 * P(X <= 0) with X ~ Bin(2, 1/2).
    assert (pc["n"], pc["only_a"], pc["only_b"]) == (9, 0, 2)
    assert pc["mcnemar_p"] == pytest.approx(2 * math.comb(2, 0) / 2**2)
    assert pc["difference"] == pytest.approx(7 / 9 - 1)
    # Every bootstrap replicate draws 3 answers of 3 claims; A's misses sit in ans0 and ans1 (one each), so a
    # replicate's difference is -(misses drawn) / 9 with at most 3 misses: the interval lies in [-3/9, 0].
    assert -3 / 9 - 1e-9 <= pc["ci"][0] <= pc["difference"] <= pc["ci"][1] <= 1e-9
    pa = ctx["paired_answers"]  # A right on ans1, ans2; C right on all three
    assert (pa["n"], pa["only_a"], pa["only_b"]) == (3, 0, 1) and pa["mcnemar_p"] == 1.0


def test_it_computes_mcnemar_exact_by_hand():
    # b = 1, c = 9: two-sided exact p = 2 * (C(10,0) + C(10,1)) / 2^10 = 22 / 1024.
    assert stats.mcnemar_exact(1, 9) == pytest.approx(22 / 1024)
    assert stats.mcnemar_exact(9, 1) == pytest.approx(22 / 1024)
    assert stats.mcnemar_exact(0, 0) is None  # no discordant pair: the test counts nothing
    # Right on the same claims: every resample's difference is 0, and [0, 0] would claim certainty.
    diff, ci = stats.paired_cluster_bootstrap([1, 1, 2], [1, 0, 1], [1, 0, 1], resamples=50)
    assert diff == 0 and ci is None
    # Each answer: 1 of its 2 claims right only by the first: every resample's difference is 1/2.
    assert stats.paired_cluster_bootstrap([1, 1, 2, 2], [1, 0, 1, 0], [0, 0, 0, 0], resamples=50) == (0.5, None)
    same = scoring._paired([(1, 1), (1, 2)], [True, False], [True, False], 50, 0)
    assert same["why"]["ci"] == "not computable: every resample of answers gives the same difference (no spread)"


def test_it_lists_disagreements_filtered_by_verdict_pair_and_numeric_flag(client, gold):
    audit, v, claims, answers = gold
    ctx = lab(client, dataset=audit.dataset_id, version=v["A"].pk)
    assert {(d["answer_id"], d["position"], d["judge"], d["verdict"]) for d in ctx["disagreements"]} == {
        (answers[0].pk, 2, "supported", "unsupported"),
        (answers[1].pk, 2, "unsupported", "supported"),
    }
    ctx = lab(client, dataset=audit.dataset_id, version=v["A"].pk, pair="supported:unsupported")
    assert [(d["answer_id"], d["position"]) for d in ctx["disagreements"]] == [(answers[0].pk, 2)]
    page = client.get("/lab/", {"dataset": audit.dataset_id, "version": v["A"].pk}).content.decode()
    assert f'href="/answers/{answers[0].pk}/"' in page
    JudgeVerdict.objects.filter(judge_version=v["A"], claim=claims[(0, 2)]).update(numeric_passed=False)
    ctx = lab(client, dataset=audit.dataset_id, version=v["A"].pk, numeric="flagged")
    assert ctx["a"]["claims"]["judged"] == 1 and ctx["a"]["claims"]["sampled"]["accuracy"] == 0.0
    assert [d["numeric_flagged"] for d in ctx["disagreements"]] == [True]


def test_it_rejects_bad_parameters_with_400_naming_the_field(client, gold):
    audit, v, claims, answers = gold
    for params, field in (({"version": "x"}, "version"), ({"version": 999}, "version"), ({"pair": "a:b"}, "pair"),
                          ({"audits": "1;"}, "audits"), ({"policy": "loose"}, "policy")):  # fmt: skip
        r = client.get("/lab/", {"dataset": audit.dataset_id} | params)
        assert r.status_code == 400 and f"{field}: " in r.content.decode()


def test_it_keeps_a_fixed_number_of_queries(client, gold):
    audit, v, claims, answers = gold
    params = {"dataset": audit.dataset_id, "version": v["A"].pk, "compare": v["R"].pk}
    a, b = make_user("ann3", "annotator"), make_user("ann4", "annotator")

    def closed_audit(name, n):  # gold answers neither version judged: the estimates have work to count
        more = make_labelled_audit(a, b, n_answers=n, n_claims=3, name=name)
        make_gold(more)
        more.status = "closed"
        more.save()

    closed_audit("week-2", 1)
    client.get("/lab/", params)
    with CaptureQueriesContext(connection) as before:
        client.get("/lab/", params)
    closed_audit("week-3", 5)
    with CaptureQueriesContext(connection) as after:
        page = client.get("/lab/", params).content.decode()
    assert len(after) == len(before) and "week-3" in page


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_version_on_the_gold_items_only_with_an_estimate_first(client, gold):
    audit, v, claims, answers = gold
    offline = offline_version()
    ctx = lab(client, dataset=audit.dataset_id, version=offline.pk)
    assert (ctx["a"]["estimate"]["answers"], ctx["a"]["estimate"]["calls"]) == (3, 9)
    est = lab(client, dataset=audit.dataset_id, version=v["A"].pk)["a"]["estimate"]
    assert est["answers"] == 0  # A judged every gold claim: nothing to run
    r = client.post("/lab/run/", {"dataset": audit.dataset_id, "version": offline.pk})
    run = JudgeRun.objects.get(judge_version=offline)
    assert r.status_code == 302 and r["Location"] == f"/judge/runs/{run.pk}/"
    assert sorted(run.answer_ids) == sorted(a.pk for a in answers.values())
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0.1", verbosity=0)
    run.refresh_from_db()
    assert run.status == "done" and JudgeVerdict.objects.filter(judge_version=offline).count() == 9
    ctx = lab(client, dataset=audit.dataset_id, version=offline.pk, compare=v["A"].pk)
    assert ctx["a"]["claims"]["judged"] == 9 and ctx["a"]["estimate"]["answers"] == 0 and ctx["paired_claims"]["n"] == 9


def test_it_is_for_leads_only(client, gold):
    audit, v, claims, answers = gold
    client.force_login(make_user("ann9", "annotator"))
    assert client.get("/lab/", {"dataset": audit.dataset_id, "version": v["A"].pk}).status_code == 403
    assert client.post("/lab/run/", {"dataset": audit.dataset_id, "version": v["A"].pk}).status_code == 403
    assert client.get("/lab/guardrail/").status_code == 403
    assert not JudgeRun.objects.exists()
