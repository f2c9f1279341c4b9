"""Strict and lenient policies: the audit chooses (default strict), the report shows both, exports carry both."""

import csv
import io
import math

import pytest

from annotations.adjudication.export import export_bytes
from annotations.models import GoldLabel
from annotations.report.build import build_report
from audit.models import AuditAnswer, Claim
from audit.policy import answer_fails
from audit.sampling.services import audit_create
from tests.factories import make_answer, make_dataset, make_gold, make_labelled_audit, make_user

pytestmark = pytest.mark.django_db


def verdicts(i, position, slot):
    """Answer 0: all supported; answer 1: claim 0 unsupported; answer 2: claim 0 contradicted; 3: both."""
    bad = {1: {0: "unsupported"}, 2: {0: "contradicted"}, 3: {0: "unsupported", 1: "contradicted"}}
    return bad.get(i, {}).get(position, "supported")


def test_it_fails_answers_by_policy():
    assert answer_fails(["supported", "unsupported"], "strict") and not answer_fails(["unsupported"], "lenient")
    assert answer_fails(["contradicted"], "lenient") and not answer_fails(["non_assertive"], "strict")
    assert not answer_fails([], "strict")


def test_it_defaults_to_strict_and_keeps_the_chosen_policy():
    ds = make_dataset()
    for i in range(4):
        make_answer(ds, external_id=f"p{i}")
    assert audit_create(name="a", dataset=ds, size=2, seed=1).policy == "strict"
    assert audit_create(name="b", dataset=ds, size=2, seed=1, policy="lenient").policy == "lenient"


def test_it_reports_the_headline_fail_rate_under_both_policies(client):
    audit = make_labelled_audit(
        make_user("a1", "annotator"), make_user("a2", "annotator"), n_answers=4, verdicts=verdicts
    )
    make_gold(audit)
    # Answers 0-2 are a census of a stratum of 3; answer 3 stands for three (a stratum of 3, one drawn).
    AuditAnswer.objects.filter(audit=audit).update(stratum_population=3, stratum_sample=3)
    AuditAnswer.objects.filter(audit=audit, position=3).update(stratum="rest", stratum_sample=1, weight=3.0)
    audit.policy = "lenient"
    audit.save()
    strict, lenient = build_report(audit)["policies"]
    # Strict: answers 1, 2, 3 fail (3 of 4); lenient: answers 2, 3 (2 of 4). Weighted: weights 1, 1, 1, 3.
    assert (strict["policy"], strict["fails"], strict["n"], strict["chosen"]) == ("strict", 3, 4, False)
    assert (lenient["policy"], lenient["fails"], lenient["n"], lenient["chosen"]) == ("lenient", 2, 4, True)
    assert strict["weighted_rate"] == pytest.approx(5 / 6) and lenient["weighted_rate"] == pytest.approx(4 / 6)
    z, p, n = 1.959963984540054, 0.5, 4  # Wilson interval for 2 of 4, from its formula
    centre, half = (
        (p + z * z / (2 * n)) / (1 + z * z / n),
        z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)),
    )
    assert lenient["ci"] == pytest.approx([centre - half, centre + half])
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/reports/{audit.id}/").content.decode()
    assert 'id="policy-strict"' in page and "3 / 4" in page and "2 / 4" in page
    assert "this audit&#x27;s policy" in page or "this audit's policy" in page


def test_it_exports_both_per_answer_verdicts():
    audit = make_labelled_audit(
        make_user("a1", "annotator"), make_user("a2", "annotator"), n_answers=4, verdicts=verdicts
    )
    make_gold(audit)
    rows = list(csv.DictReader(io.StringIO(export_bytes(audit, level="answer").decode())))
    got = [(r["gold_pass_strict"], r["gold_pass_lenient"], r["policy"]) for r in rows]
    assert got == [("true", "true", "strict"), ("false", "true", "strict"), ("false", "false", "strict"),
                   ("false", "false", "strict")]  # fmt: skip
    GoldLabel.objects.filter(claim=Claim.objects.get(answer=audit.items.get(position=0).answer, position=2)).delete()
    row = next(csv.DictReader(io.StringIO(export_bytes(audit, level="answer").decode())))
    assert (row["gold_pass_strict"], row["gold_pass_lenient"]) == ("", "")  # undecided while gold is missing
