"""What the walk through every state (test_every_state.py) found misleading, each pinned by a precise test;
expected figures are written out here from their definitions."""

import numpy as np
import pandas as pd
import pytest
from django.utils import timezone

from annotations.adjudication.export import CLAIM_COLUMNS, claim_rows
from annotations.adjudication.services import gold_on_submit
from annotations.lab.policy import policy_headlines
from annotations.models import Assignment, Label
from annotations.report.build import build_report
from annotations.report.stats_annotators import annotator_rows
from annotations.report.stats_trend import compare
from tests.factories import make_answer, make_dataset, make_user
from tests.report_helpers import S, U, kg_interval, label_audit, make_stratified_audit, version
from tests.state_helpers import calibration, people, states

pytestmark = pytest.mark.django_db


def three_strata(n_empty):
    """Stratum a (N=60): 3 answers, the first fails; b (N=20): 2 passing; c (N=n_empty): drawn with 0 answers."""
    answers = [make_answer(make_dataset("strata"), external_id=f"s{i}", n_claims=1) for i in range(5)]
    audit = make_stratified_audit(answers, list("aaabb"), name="w", population={"a": 60, "b": 20})
    audit.design = [
        {"stratum": s, "population": N, "sample": n} for s, N, n in (("a", 60, 3), ("b", 20, 2), ("c", n_empty, 0))
    ]
    audit.save()
    rows = [("a", [U], [U], [U], [U])] + [(s, [S], [S], [S], [S]) for s in "aabb"]
    label_audit(audit, rows, version("j"), [make_user("x", "annotator"), make_user("y", "annotator")])
    return build_report(audit)


def test_it_counts_a_stratum_drawn_with_no_answer_in_the_population():
    r = three_strata(2)
    w = r["faithfulness"]["weighted"]["fail_rate"]
    assert (w["population"], w["covered_population"], w["strata_total"]) == (82, 80, 3)
    assert [m["stratum"] for m in w["missing_strata"]] == ["c"]
    p = 60 / 80 * (1 / 3) + 20 / 80 * 0  # W_h = N_h / N covered
    var = (60 / 80) ** 2 * np.var([1, 0, 0], ddof=1) / 3 * (1 - 3 / 60)  # stratum b has no spread
    assert w["value"] == pytest.approx(p) and w["ci"] == pytest.approx(kg_interval(p, var, 5, 2))
    row = r["faithfulness"]["strata"][-1]  # listed in the strata table, with nothing to estimate from
    assert (row["stratum"], row["population"], row["sampled"], row["answers"]) == ("c", 2, 0, 0)
    assert row["share"] == pytest.approx(2 / 82) and row["fail_rate"]["value"] is None
    assert r["policies"][0]["weighted_rate"] == pytest.approx(p)  # the policy table: the headline's estimator


def test_it_refuses_the_estimate_when_the_stratum_drawn_with_no_answer_is_large():
    r = three_strata(20)  # 20 of 100: 20%, above REPORT_MIN_STRATUM_SHARE (5%)
    why = (
        "not computable: stratum 'c' holds 20.0% of the population (more than 5%) and has no answer with complete gold"
    )
    assert r["faithfulness"]["weighted"]["fail_rate"]["why"] == why
    assert r["policies"][0]["weighted_rate"] is None and r["policies"][0]["weighted_why"] == why


def test_it_weights_a_partly_labelled_stratum_by_its_population_in_the_policy_table():
    # Stratum a (N=100): 4 drawn, 2 with complete gold, 1 of them failing; stratum b (N=100): 2 drawn, both pass.
    f = pd.DataFrame({"stratum": list("aaaabb"), "stratum_population": 100, "complete": [1, 1, 0, 0, 1, 1],
                      "n_contradicted": 0, "n_unsupported": [1, 0, 0, 0, 0, 0]})  # fmt: skip
    strict, lenient = policy_headlines(f.assign(complete=f["complete"].astype(bool)), "strict")
    assert strict["weighted_rate"] == pytest.approx(0.5 * 1 / 2 + 0.5 * 0)  # not sum(w fail) / sum(w) = 1/6
    assert (strict["fails"], strict["n"], lenient["weighted_rate"]) == (1, 4, 0.0)


def test_it_makes_no_permutation_test_between_designs_that_share_no_stratum():
    def audit(strata):
        total = sum(N for _, N, _, _ in strata)
        p = sum(N / total * x / n for _, N, n, x in strata)
        return {"value": p, "variance": 0.01, "strata": strata, "fails": sum(s[3] for s in strata),
                "n": sum(s[2] for s in strata), "provisional": None}  # fmt: skip

    stratified, simple = audit([("s1", 100, 4, 0), ("s2", 20, 2, 2)]), audit([("all", 120, 3, 1)])
    r = compare(stratified, simple)  # every permutation within strata is the observed table: p would be 1
    assert r["value"] is None and r["regression"] is False
    assert "share no stratum" in r["why"] and f"{1 / 3 - 20 / 120:+.3f}" in r["why"]
    shared = compare(stratified, audit([("s1", 100, 3, 1)]))
    assert shared["value"] == pytest.approx(1 / 3 - 20 / 120) and 0 < shared["p_value"] <= 1


def test_it_does_not_call_a_verdict_nobody_used_perfect_agreement():
    labels = pd.DataFrame({"annotator": 1, "claim_id": range(4), "answer_id": [1, 1, 2, 2],
                           "verdict": [S, S, U, S], "gold": [S, U, U, S]})  # fmt: skip
    asg = pd.DataFrame({"annotator": [1, 1], "name": "x", "answer_id": [1, 2], "active_seconds": [60, 60]})
    per = {v["verdict"]: v for v in annotator_rows(labels, asg)[0]["per_verdict"]}
    assert per["supported"]["percent_agreement"]["value"] == pytest.approx(3 / 4)  # S/S, S/U, U/U, S/S
    assert per["contradicted"]["percent_agreement"]["value"] is None
    assert "neither the annotator nor gold said contradicted" in per["contradicted"]["percent_agreement"]["why"]


def test_it_reports_and_exports_only_the_sampled_claims_of_a_calibration_sample():
    p = {"A": make_user("alice-a", "annotator"), "B": make_user("bob-b", "annotator")}
    audit = calibration(p)  # judge: claim 0 of 4 answers unsupported (4), the other 8 supported; 3 + 3 drawn
    sampled = set(audit.claims().values_list("id", flat=True))
    for a in Assignment.objects.filter(audit_answer__audit=audit):
        mine = audit.claims().filter(answer_id=a.audit_answer.answer_id)  # the workspace shows only these
        Label.objects.bulk_create(Label(assignment=a, claim=c, verdict=S, note="n") for c in mine)
        Assignment.objects.filter(pk=a.pk).update(status="submitted", submitted_at=timezone.now())
    for item in audit.items.all():
        gold_on_submit(item)
    r = build_report(audit)
    assert (r["coverage"]["claims"], r["coverage"]["claims_with_gold"]) == (6, 6)
    assert r["faithfulness"]["headline"] == "gold" and r["calibration"]["claims_sampled"] == 6
    assert [v["n_verdicts"] for v in r["judge"]["versions"]] == [6]  # not the 9 claims of the 3 answers
    rows = claim_rows(audit)
    assert {row[2] for row in rows} == sampled
    at = [name for name, _ in CLAIM_COLUMNS].index
    got = sorted((row[at("stratum")], row[at("inclusion_probability")], row[at("weight")]) for row in rows)
    assert [g[0] for g in got] == [S] * 3 + [U] * 3  # 8 supported claims, 3 drawn; 4 unsupported, 3 drawn
    assert [x for g in got for x in g[1:]] == pytest.approx([3 / 8, 8 / 3] * 3 + [3 / 4, 4 / 3] * 3)
    assert "calibration" not in [pt["name"] for pt in r["trend"]["points"]]
    assert "calibration sample" in r["trend"]["change"]["why"]


class TestStates:
    """The states of tests/state_helpers.py: the refusals say why, the report names what waits."""

    @pytest.fixture
    def world(self):
        p = people()
        return p, states(p)

    def test_it_says_why_a_page_is_refused(self, client, world):
        p, s = world
        client.force_login(p["outsider"])
        assert "This page is for audit leads." in client.get(f"/reports/{s['closed'].pk}/").content.decode()
        client.force_login(p["adj"])
        r = client.get(f"/adjudicate/{s['one_done'].pk}/answers/{s['one_done'].items.first().pk}/")
        assert r.status_code == 404 and "Both annotators must submit this answer" in r.content.decode()

    def test_it_offers_a_calibration_sample_its_own_next_draw_and_names_waiting_rechecks(self, client, world):
        p, s = world
        client.force_login(p["lead"])
        r = client.get(f"/audits/{s['calibration'].pk}/like/")
        assert r.status_code == 400 and "is a calibration sample" in r.content.decode()
        page = client.get(f"/audits/{s['calibration'].pk}/").content.decode()
        assert "/audits/new/calibration/" in page and f"/audits/{s['calibration'].pk}/like/" not in page
        r = build_report(s["recheck"])
        assert r["coverage"]["gold_recheck"] == 1 and r["faithfulness"]["headline"] == "gold"
        assert (
            "1 adjudicated gold label marked for re-check"
            in client.get(f"/reports/{s['recheck'].pk}/").content.decode()
        )
        assert all("annotators" not in (pt["provisional"] or {}) for pt in build_report(s["half"])["trend"]["points"])
