"""The guardrail check: a case that blocks, one that does not, a small-count case on the permutation test,
matching on shared questions, the command's exit status and the page. Expected values from first principles."""

import csv
import io
import math

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotations.adjudication import export
from annotations.lab.guardrail import GuardrailError, guardrail_check
from audit.judge.definitions import current_version, definitions_seed
from audit.models import Answer, AnswerVerdict, JudgeLevel
from claimaudit.services import api_token_create
from tests.factories import make_dataset, make_judge_version, make_user
from tests.judge_helpers import fake_server, make_judged_answer
from tests.lab_helpers import build_gold_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def version():
    return make_judge_version("rubric", kind="anthropic", level=JudgeLevel.ANSWER, content_hash="r" * 64)


def group(version, dataset, fails, n, *, meta=None, questions=None):
    """n answers of which `fails` score 0 under the version; question i unless given."""
    ds = make_dataset(dataset)
    start = Answer.objects.count()
    answers = Answer.objects.bulk_create(
        Answer(
            dataset=ds,
            external_id=f"{dataset}.{meta}.{start + i}",
            question=questions[i] if questions else f"q{i}",
            text="t",
            created_at=timezone.now(),
            meta=meta or {},
            content_hash="x" * 64,
        )
        for i in range(n)
    )
    AnswerVerdict.objects.bulk_create(
        AnswerVerdict(answer=a, judge_version=version, score=0 if i < fails else 1) for i, a in enumerate(answers)
    )


def pooled_z(x1, n1, x2, n2):
    p = (x1 + x2) / (n1 + n2)
    z = (x1 / n1 - x2 / n2) / math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return z, math.erfc(abs(z) / math.sqrt(2))  # two-sided normal p


def exact_permutation_p(x1, n1, x2, n2):
    """Every relabelling of the pooled answers is equally likely: group 1 gets k of the K fails with
    probability C(K, k) C(N - K, n1 - k) / C(N, n1); sum those at least as far apart as observed."""
    big_n, k_all, obs = n1 + n2, x1 + x2, abs(x1 / n1 - x2 / n2)
    ks = range(max(0, k_all - n2), min(k_all, n1) + 1)
    hit = [k for k in ks if abs(k / n1 - (k_all - k) / n2) >= obs - 1e-12]
    return sum(math.comb(k_all, k) * math.comb(big_n - k_all, n1 - k) for k in hit) / math.comb(big_n, n1)


def test_it_blocks_a_significant_regression_on_the_z_test(version):
    group(version, "v1", 30, 400)
    group(version, "v2", 52, 400)
    r = guardrail_check("v1", "v2", version)
    z, p = pooled_z(52, 400, 30, 400)
    assert r["test"]["test"] == "two-proportion z-test" and r["test"]["expected_min"] == pytest.approx(400 * 82 / 800)
    assert r["test"]["statistic"] == pytest.approx(z) and r["test"]["p"] == pytest.approx(p)
    assert z == pytest.approx(2.5645, abs=1e-4) and p == pytest.approx(0.0103, abs=1e-4)  # the published values
    assert r["blocks"] and r["matched_on_questions"]
    assert (r["candidate"]["fails"], r["candidate"]["n"], r["baseline"]["fails"]) == (52, 400, 30)
    centre, z95 = 52 / 400, 1.959963984540054
    lo = (centre + z95**2 / 800 - z95 * math.sqrt(centre * (1 - centre) / 400 + z95**2 / 640000)) / (1 + z95**2 / 400)
    assert r["candidate"]["ci"][0] == pytest.approx(lo)


def test_it_does_not_block_an_improvement_or_an_insignificant_change(version):
    group(version, "v1", 52, 400)
    group(version, "v2", 30, 400)
    group(version, "v3", 58, 400)
    better = guardrail_check("v1", "v2", version)
    assert not better["blocks"] and "candidate not worse" in better["why"]
    slightly_worse = guardrail_check("v1", "v3", version)
    assert slightly_worse["test"]["p"] == pytest.approx(pooled_z(58, 400, 52, 400)[1]) and not slightly_worse["blocks"]


def test_it_uses_the_exact_permutation_test_below_an_expected_count_of_10(version):
    group(version, "prod", 2, 60, meta={"pipeline": "v1"})
    group(version, "prod", 9, 60, meta={"pipeline": "v2"})
    r = guardrail_check("prod:meta.pipeline=v1", "prod:meta.pipeline=v2", version)
    assert r["test"]["expected_min"] == pytest.approx(5.5) and r["test"]["test"] == "permutation (exact)"
    assert r["test"]["p"] == pytest.approx(exact_permutation_p(9, 60, 2, 60))
    assert r["test"]["p"] == pytest.approx(0.0535, abs=1e-4)  # equals Fisher's exact test here (published)
    assert pooled_z(9, 60, 2, 60)[1] < 0.05  # the z-test would have blocked
    assert not r["blocks"]
    group(version, "small", 1, 40, meta={"pipeline": "v1"})
    group(version, "small", 10, 40, meta={"pipeline": "v2"})
    r = guardrail_check("small:meta.pipeline=v1", "small:meta.pipeline=v2", version)
    assert r["test"]["test"] == "permutation (exact)" and r["blocks"]
    assert r["test"]["p"] == pytest.approx(exact_permutation_p(10, 40, 1, 40))


def test_it_matches_on_shared_questions(version):
    group(version, "v1", 1, 4, questions=["a", "b", "c", "d"])
    group(version, "v2", 3, 6, questions=["x", "y", "a", "b", "c", "d"])  # fails on x, y and a
    r = guardrail_check("v1", "v2", version)
    assert r["matched_on_questions"] and (r["candidate"]["n"], r["candidate"]["fails"]) == (4, 1)


def test_it_exits_1_when_it_blocks_for_ci(version, capsys):
    group(version, "v1", 30, 400)
    group(version, "v2", 52, 400)
    with pytest.raises(SystemExit) as exc:
        call_command("guardrail", "--baseline", "v1", "--candidate", "v2", "--judge-version", str(version.pk))
    assert exc.value.code == 1 and "BLOCKS" in capsys.readouterr().out
    call_command("guardrail", "--baseline", "v2", "--candidate", "v1", "--judge-version", version.content_hash[:8])
    assert "does not block" in capsys.readouterr().out


def test_it_shows_the_check_on_a_page(client, version):
    group(version, "v1", 30, 400)
    group(version, "v2", 52, 400)
    client.force_login(make_user("lead", "lead"))
    r = client.get("/lab/guardrail/", {"baseline": "v1", "candidate": "v2", "version": version.pk})
    assert r.status_code == 200 and 'id="guardrail-verdict"' in r.content.decode() and "Blocks" in r.content.decode()
    assert "52 / 400" in r.content.decode() and "30 / 400" in r.content.decode()
    data = client.get("/lab/guardrail.json", {"baseline": "v1", "candidate": "v2", "version": version.pk}).json()
    assert data["blocks"] and data["candidate"]["fails"] == 52
    r = client.get("/lab/guardrail/", {"baseline": "nope", "candidate": "v2", "version": version.pk})
    assert r.status_code == 400 and "baseline: no dataset named" in r.content.decode()
    r = client.get("/lab/guardrail/", {"baseline": "v1", "candidate": "v2", "version": "x"})
    assert r.status_code == 400 and "version" in r.content.decode()


def test_it_names_versions_by_definition_for_the_commands(capsys):
    rubric_version = current_version(definitions_seed()[1])
    for name, text in (("v1", "Paris is the capital of France."), ("v2", "Paris has 300 floors.")):
        make_judged_answer(make_dataset(name), text=text)
    with fake_server() as fake:
        for name in ("v1", "v2"):
            call_command("judge", "--dataset", name, "--judge-version", "answer_faithfulness", "--no-progress")
    assert len(fake.message_calls("rubric")) == 2 and "answer_faithfulness-v1" in capsys.readouterr().out
    assert dict(AnswerVerdict.objects.values_list("answer__dataset__name", "score")) == {"v1": 1, "v2": 0}
    call_command("guardrail", "--baseline", "v1", "--candidate", "v2", "--judge-version", "answer_faithfulness")
    out = capsys.readouterr().out  # 1 of 1 against 0 of 1: the exact permutation test cannot reach 0.05
    assert "candidate: 1/1 fail" in out and "does not block" in out and rubric_version.pk


def test_it_answers_the_check_over_the_api_with_a_token(client, version):
    group(version, "v1", 30, 400)
    group(version, "v2", 52, 400)
    lead, annotator = make_user("lead", "lead"), make_user("ann", "annotator")
    auth = {
        t: {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(u, 'ci')[1]}"}
        for t, u in (("lead", lead), ("ann", annotator))
    }
    q = {"baseline": "v1", "candidate": "v2", "judge_version": str(version.pk)}
    assert client.get("/api/v1/guardrail", q).status_code == 401  # a token, never the session
    assert client.get("/api/v1/guardrail", q, **auth["ann"]).status_code == 403
    r = client.get("/api/v1/guardrail", q, **auth["lead"])
    z, p = pooled_z(52, 400, 30, 400)
    assert r.status_code == 200 and r.json()["blocks"] is True
    assert r.json()["test"]["p"] == pytest.approx(p, abs=1e-4) and r.json()["candidate"]["fails"] == 52
    bad = client.get("/api/v1/guardrail", {**q, "judge_version": "nope"}, **auth["lead"])
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "judge_version"
    missing = client.get("/api/v1/guardrail", {**q, "baseline": "no-such-dataset"}, **auth["lead"])
    assert missing.status_code == 400 and missing.json()["errors"]


def test_it_groups_by_a_nested_metadata_path_and_refuses_a_bad_one(version):
    group(version, "runs", 2, 60, meta={"run": {"pipeline": "v1"}})
    group(version, "runs", 9, 60, meta={"run": {"pipeline": "v2"}})
    r = guardrail_check("runs:meta.run.pipeline=v1", "runs:meta.run.pipeline=v2", version)
    assert r["test"]["p"] == pytest.approx(exact_permutation_p(9, 60, 2, 60))  # the same groups as a flat key
    with pytest.raises(GuardrailError) as e:
        guardrail_check("runs:meta.run..pipeline=v1", "runs", version)
    assert e.value.field == "baseline" and "not a metadata field or path" in str(e.value)


def test_it_takes_the_judge_version_as_the_gold_export_writes_it(client):
    lead, adj = make_user("lead", "lead"), make_user("adj", "adjudicator")
    audit, versions, claims, answers = build_gold_set(make_user("a1", "annotator"), make_user("a2", "annotator"), adj)
    rows = list(csv.DictReader(io.StringIO(export.export_bytes(audit, level="claim", fmt="csv").decode())))
    written = {r["judge_version"] for r in rows}
    assert len(written) == 1
    (ref,) = written
    version = next(v for v in versions.values() if ref.startswith(f"{v.name}@"))
    assert ref == f"{version.name}@{version.content_hash[:12]}"  # the export's own form, read back from the file
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(lead, 'ci')[1]}"}
    name = audit.dataset.name
    q = {"baseline": name, "candidate": name}
    r = client.get("/api/v1/guardrail", {**q, "judge_version": ref}, **auth)
    assert r.status_code == 200 and r.json()["baseline"]["n"] == 3
    for wrong in (f"other-name@{version.content_hash[:12]}", f"{version.name}@ffffffffffff", f"{version.name}@"):
        bad = client.get("/api/v1/guardrail", {**q, "judge_version": wrong}, **auth)
        assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "judge_version", wrong
    client.force_login(lead)
    page = client.get(f"/judge/versions/{version.pk}/").content.decode()
    assert f'<code id="version-ref">{ref}</code>' in page
