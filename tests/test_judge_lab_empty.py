"""The judge lab over zero, one and too few items: every figure is a number or says why it is not one (never a
blank, an empty bracket or a p-value over nothing), kappa follows the report's "not informative" rule, and a
lab without a closed audit says what it needs. Expected values from first principles."""

import re

import numpy as np
import pytest

from annotations.lab import stats
from audit.models import AnswerVerdict, JudgeLevel, JudgeVerdict
from tests.factories import make_user
from tests.lab_helpers import GOLD, build_gold_set, version

pytestmark = pytest.mark.django_db

SHOWN_BLANK = [
    (r"\[\s*,|,\s*\]|\[\s*\]", "an empty bracket"),
    (r"/\s*/", "an empty P / R / F1 cell"),
    (r"\(\s*AC1[^)]*vs\s*\)|vs\s*\)", "an empty AC1"),
    (r"=\s*[;.,]", "a value left out after ="),
    (r"McNemar exact p = 1\.0000", "a p-value over no discordant pair"),
]


@pytest.fixture
def gold(client):
    a, b, adj = make_user("ann1", "annotator"), make_user("ann2", "annotator"), make_user("adj", "adjudicator")
    client.force_login(make_user("lead", "lead"))
    return build_gold_set(a, b, adj)


def judge_only(name, claims, keys):
    """A claim-level version whose verdict is the gold's on the claims `keys` ((answer, position)) only."""
    v = version(name)
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(claim=claims[k], judge_version=v, raw_verdict=GOLD[k[0]][k[1]], verdict=GOLD[k[0]][k[1]])
        for k in keys
    )
    return v


def page_text(client, **params):
    r = client.get("/lab/", params)
    assert r.status_code == 200
    html = r.content.decode()
    scores = re.findall(r'<section class="lab-scores".*?</section>|<section id="paired">.*?</section>', html, re.S)
    assert scores
    return html, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", " ".join(scores)))


def assert_nothing_blank(html, text):
    for pattern, what in SHOWN_BLANK:
        assert not re.search(pattern, text), f"{what}: {re.search(pattern, text)[0]!r} in {text}"
    for section in re.findall(r'<section class="lab-scores".*?</section>', html, re.S):
        assert not re.search(r"<td[^>]*>\s*</td>", section), "an empty table cell"


def test_it_says_not_computable_over_two_versions_that_share_no_claim(client, gold):
    audit, v, claims, answers = gold
    first = judge_only("E-claims", claims, [(0, p) for p in range(3)])
    second = judge_only("F-claims", claims, [(1, p) for p in range(3)])
    html, text = page_text(client, dataset=audit.dataset_id, version=first.pk, compare=second.pk)
    assert_nothing_blank(html, text)
    assert "Claims judged by both: 0. McNemar exact p and accuracy difference: not computable: no shared claims" in text
    assert "Answers judged by both: 0. McNemar exact p and agreement difference: not computable: no shared answers" in (
        text
    )


def test_it_says_why_for_each_figure_of_a_version_with_no_gold_claim_judged(client, gold):
    audit, v, claims, answers = gold
    nothing = version("N-claims")
    html, text = page_text(client, dataset=audit.dataset_id, version=nothing.pk, compare=v["A"].pk)
    assert_nothing_blank(html, text)
    assert text.count("not computable: no gold claim judged by this version") == 8  # 4 figures x 2 columns
    assert "Noise floor not computable: no gold claim both annotators labelled was judged by this version" in text
    assert text.count("not computable: no answer with complete gold judged by this version") == 6


def test_it_scores_one_shared_claim_without_a_test_or_an_interval_it_cannot_have(client, gold):
    audit, v, claims, answers = gold
    one = judge_only("O-claims", claims, [(0, 0)])  # right (supported), as is A on that claim
    html, text = page_text(client, dataset=audit.dataset_id, version=one.pk, compare=v["A"].pk)
    assert_nothing_blank(html, text)
    assert "Claims judged by both: 1; right only by the first 0, only by the second 0" in text
    assert "McNemar exact p not computable: no discordant pair" in text
    # One answer: every bootstrap resample is that answer, so there is no interval.
    assert "accuracy difference 0.000, its interval not computable: a single answer" in text
    # One item: both "raters" used one verdict, chance agreement p_e = 1, kappa = (1 - 1) / (1 - 1) is undefined.
    c = client.get("/lab/", {"dataset": audit.dataset_id, "version": one.pk}).context["a"]["claims"]["sampled"]
    assert c["accuracy"] == 1.0 and c["kappa"] is None and c["why"]["kappa"].startswith("not computable: ")
    # AC1: pi = (1, 0, ...), p_e = 0, AC1 = p_a = 1 (Gwet 2008): defined, unlike kappa.
    assert c["ac1"] == 1.0 and c["why"]["ac1"] is None


def test_it_calls_the_answer_kappa_of_a_one_verdict_judge_not_informative(client, gold):
    audit, v, claims, answers = gold
    # R fails every answer; gold (strict): fail, fail, pass. Rows judge (fail, pass), columns gold (fail, pass).
    t = np.array([[2.0, 1.0], [0.0, 0.0]])
    po = 2 / 3
    pe = (3 / 3) * (2 / 3) + (0 / 3) * (1 / 3)  # judge margins x gold margins
    assert po == pytest.approx(pe)  # the plain formula gives kappa 0: a number that says nothing
    ans = client.get("/lab/", {"dataset": audit.dataset_id, "version": v["R"].pk}).context["a"]["answers"]
    assert ans["matrix"] == t.astype(int).tolist()
    for side in ("sampled", "weighted"):
        assert ans[side]["kappa"] is None
        assert ans[side]["why"]["kappa"].startswith("not informative: the first rater used a single verdict")
    html, text = page_text(client, dataset=audit.dataset_id, version=v["R"].pk)
    assert "Cohen's kappa not informative: the first rater used a single verdict" in text and "0.000" not in text


def test_it_keeps_statistics_pure_over_an_empty_and_a_one_item_table():
    labels = ["fail", "pass"]
    empty = stats.classification(np.zeros((2, 2)), labels, ("fail",), empty="nothing here", bad_name="failing one")
    assert [empty[k] for k in ("accuracy", "kappa", "ac1", "bad_recall")] == [None] * 4
    assert set(empty["why"].values()) == {"not computable: nothing here"}
    one = stats.classification(np.array([[0.0, 0.0], [0.0, 1.0]]), labels, ("fail",), bad_name="failing one")
    assert one["accuracy"] == 1.0 and one["bad_recall"] is None  # 1 of 1 right; gold has no fail to recall
    assert one["why"]["bad_recall"] == "not computable: gold has no failing one"
    assert one["per_label"]["pass"]["precision"] == 1.0 and one["per_label"]["fail"]["precision"] is None
    assert stats.mcnemar_exact(0, 0) is None and stats.mcnemar_exact(0, 1) == 1.0  # 2 * P(X <= 0), X ~ Bin(1, .5)
    assert stats.paired_cluster_bootstrap(["a", "a"], [1, 0], [0, 0]) == (0.5, None)  # one cluster: no interval


def test_it_says_the_lab_needs_a_closed_audit(client):
    client.force_login(make_user("lead", "lead"))
    v = version("A-claims")
    html = client.get("/lab/", {"version": v.pk}).content.decode()
    assert 'id="lab-no-gold"' in html and "needs the gold of a closed audit" in html and 'href="/audits/"' in html
    assert "lab-form" not in html and "<table" not in html


def test_it_asks_for_a_dataset_before_scoring(client, gold):
    audit, v, claims, answers = gold
    html = client.get("/lab/", {"version": v["A"].pk}).content.decode()
    assert 'id="lab-no-audits"' in html and "choose a dataset with a closed audit" in html
    assert "lab-scores" not in html


def test_it_says_not_computable_for_a_guardrail_group_with_no_judged_answer(client, gold):
    audit, v, claims, answers = gold
    AnswerVerdict.objects.filter(judge_version=v["R"]).delete()
    rubric = version("Q-rubric", JudgeLevel.ANSWER)
    name = audit.dataset.name
    r = client.get("/lab/guardrail/", {"baseline": name, "candidate": name, "version": rubric.pk})
    html = r.content.decode()
    assert r.status_code == 200 and html.count("not computable: no judged answers in this group") == 2


def test_it_counts_an_answer_judged_in_part_only_when_a_judged_claim_fails_it(client, gold):
    audit, v, claims, answers = gold
    # Gold ans0: S S U (fails, strict). One verdict, supported, on its first claim: 2 of 3 claims unjudged, so
    # the answer has no verdict of the version; one unsupported verdict on its last claim fails it whatever
    # the other two say.
    passing = judge_only("P-claims", claims, [(0, 0)])
    failing = judge_only("U-claims", claims, [(0, 2)])
    ans = client.get("/lab/", {"dataset": audit.dataset_id, "version": passing.pk}).context["a"]["answers"]
    assert (ans["judged"], ans["sampled"]["accuracy"]) == (0, None)
    assert ans["sampled"]["why"]["accuracy"] == "not computable: no answer with complete gold judged by this version"
    ans = client.get("/lab/", {"dataset": audit.dataset_id, "version": failing.pk}).context["a"]["answers"]
    assert (ans["judged"], ans["sampled"]["accuracy"]) == (1, 1.0)  # judge fail = gold fail on 1 of 1
