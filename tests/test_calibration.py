"""The claim-level calibration sample: allocation, a draw reproducible from its seed, inclusion
probabilities and weights, annotators labelling only the sampled claims, and weighted figures."""

import importlib
import json

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotations.adjudication.export import export_bytes
from annotations.assignments.services import audit_assign
from annotations.lab.calibration import calibration_figures, calibration_report
from annotations.models import GoldLabel
from annotations.report.selectors import audit_frames
from audit.models import Answer, Audit, AuditAnswer, AuditClaim, Claim, JudgeVerdict
from audit.sampling.calibration import allocate_equal, calibration_audit_create
from audit.sampling.services import audit_create
from tests.factories import make_answer, make_dataset, make_judge_version, make_user

pytestmark = pytest.mark.django_db
S, C, U = "supported", "contradicted", "unsupported"


def test_it_reproduces_the_published_stratified_accuracy():
    # Strata by the judge's verdict: supported N=9000, unsupported N=700, contradicted N=300, 100 sampled
    # from each; humans agree with the judge on 95 / 80 / 60. Weights N_h / n_h = 90, 7, 3.
    rows = [(S, S, 90)] * 95 + [(S, U, 90)] * 5 + [(U, U, 7)] * 80 + [(U, S, 7)] * 20
    rows += [(C, C, 3)] * 60 + [(C, S, 3)] * 40
    f = calibration_figures(rows)
    assert f["sampled"]["accuracy"] == pytest.approx(235 / 300) and round(f["sampled"]["accuracy"], 3) == 0.783
    assert f["weighted"]["accuracy"] == pytest.approx((9000 * 0.95 + 700 * 0.8 + 300 * 0.6) / 10000)
    assert round(f["weighted"]["accuracy"], 3) == 0.929
    assert f["matrix"][0] == [95, 0, 5, 0] and [row[0] for row in f["matrix"]] == [95, 40, 20, 0]  # rows: judge
    assert [row[0] for row in f["matrix_weighted"]] == [95 * 90, 40 * 3, 20 * 7, 0]


def test_it_allocates_equally_within_stratum_sizes():
    assert allocate_equal({S: 500, U: 40, C: 10}, 200) == {S: 150, U: 40, C: 10}
    assert allocate_equal({S: 30, U: 6, C: 3}, 12) == {S: 5, U: 4, C: 3}  # 4 each, C capped, 1 left for S
    assert allocate_equal({S: 2, U: 1}, 200) == {S: 2, U: 1}


@pytest.fixture
def judged():
    """Claims of 13 answers judged: 30 supported, 6 unsupported, 3 contradicted (3 claims per answer)."""
    ds = make_dataset()
    version = make_judge_version("j", kind="anthropic", content_hash="j" * 64)
    answers = [make_answer(ds, external_id=f"c{i}") for i in range(13)]
    claims = list(Claim.objects.filter(answer__in=answers).order_by("id"))
    verdicts = [S] * 30 + [U] * 6 + [C] * 3
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(claim=c, judge_version=version, raw_verdict=v, verdict=v)
        for c, v in zip(claims, verdicts, strict=True)
    )
    return ds, version, claims


def test_it_draws_reproducibly_from_its_seed_with_inclusion_probabilities(judged):
    ds, version, claims = judged
    a = calibration_audit_create(name="cal-1", dataset=ds, version=version, size=12, seed=7)
    b = calibration_audit_create(name="cal-2", dataset=ds, version=version, size=12, seed=7)
    c = calibration_audit_create(name="cal-3", dataset=ds, version=version, size=12, seed=8)
    picked = {x.name: set(x.calibration_items.values_list("claim_id", flat=True)) for x in (a, b, c)}
    assert picked["cal-1"] == picked["cal-2"] != picked["cal-3"] and len(picked["cal-1"]) == 12
    rows = {r.claim_id: r for r in AuditClaim.objects.filter(audit=a)}
    by_stratum = {}
    for r in rows.values():
        by_stratum.setdefault(r.stratum, []).append(r)
    assert {s: len(v) for s, v in by_stratum.items()} == {S: 5, U: 4, C: 3}
    for stratum, population in ((S, 30), (U, 6), (C, 3)):
        for r in by_stratum[stratum]:
            assert r.inclusion_probability == pytest.approx(len(by_stratum[stratum]) / population)
            assert r.weight == pytest.approx(population / len(by_stratum[stratum]))
            assert JudgeVerdict.objects.get(claim_id=r.claim_id).verdict == stratum
    answers = set(AuditAnswer.objects.filter(audit=a).values_list("answer_id", flat=True))
    assert answers == set(Claim.objects.filter(id__in=picked["cal-1"]).values_list("answer_id", flat=True))
    # The design table carries each stratum's n_h / N_h and N_h / n_h, as an audit of answers does.
    assert a.design == [
        {"stratum": C, "population": 3, "sample": 3, "inclusion_probability": 1.0, "weight": 1.0},
        {"stratum": S, "population": 30, "sample": 5, "inclusion_probability": 5 / 30, "weight": 6.0},
        {"stratum": U, "population": 6, "sample": 4, "inclusion_probability": 4 / 6, "weight": 1.5},
    ]
    assert a.allocation == "equal"


def test_it_has_annotators_label_only_the_sampled_claims(client, judged):
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    ann1, ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
    audit_assign(audit, [ann1, ann2])
    sampled = set(audit.calibration_items.values_list("claim_id", flat=True))
    item = next(
        i for i in AuditAnswer.objects.filter(audit=audit)
        if set(Claim.objects.filter(answer_id=i.answer_id).values_list("id", flat=True)) - sampled
    )  # fmt: skip
    mine, theirs = sorted(item.assignments.all(), key=lambda a: a.slot)
    answer_claims = list(Claim.objects.filter(answer_id=item.answer_id).order_by("position"))
    client.force_login(mine.annotator)
    page = client.get(f"/label/{mine.pk}/").content.decode()
    for c in answer_claims:
        assert (f'id="claim-{c.pk}"' in page) == (c.pk in sampled)
    assert item.answer.text[:40] in page  # the whole answer is shown
    unsampled = next(c for c in answer_claims if c.pk not in sampled)
    r = client.post(f"/label/{mine.pk}/claim/{unsampled.pk}/", {"verdict": S}, headers={"HX-Request": "true"})
    assert r.status_code == 404
    for assignment in (mine, theirs):
        client.force_login(assignment.annotator)
        for c in answer_claims:
            if c.pk in sampled:
                assert (
                    client.post(
                        f"/label/{assignment.pk}/claim/{c.pk}/", {"verdict": U}, headers={"HX-Request": "true"}
                    ).status_code
                    == 200
                )
        client.post(f"/label/{assignment.pk}/submit/")
        assignment.refresh_from_db()
        assert assignment.status == "submitted"
    gold = set(GoldLabel.objects.filter(audit=audit).values_list("claim_id", flat=True))
    assert gold == {c.pk for c in answer_claims if c.pk in sampled}
    client.force_login(make_user("adj", "adjudicator"))
    page = client.get(f"/adjudicate/{audit.id}/answers/{item.id}/").content.decode()
    for c in answer_claims:  # the adjudicator too sees only the sampled claims' blocks
        assert (f'id="claim-block-{c.pk}"' in page) == (c.pk in sampled)


def test_it_reports_weighted_figures_for_the_calibration_audit(client, judged):
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    for ac in AuditClaim.objects.filter(audit=audit).select_related("claim"):  # gold: every claim supported
        GoldLabel.objects.create(audit=audit, claim=ac.claim, verdict=S, source="adjudicated")
    f = calibration_report(audit)
    # Right only in the supported stratum: 5 of 12 sampled; weighted 5 * 6 of 5 * 6 + 4 * 1.5 + 3 * 1 = 30 / 39.
    assert f["n"] == 12 and f["sampled"]["accuracy"] == pytest.approx(5 / 12)
    assert f["weighted"]["accuracy"] == pytest.approx(30 / 39)
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/reports/{audit.id}/").content.decode()
    assert 'id="calibration-weighted">0.769<' in page and 'id="calibration-sampled">0.417<' in page


def test_it_keeps_each_strata_share_while_some_of_its_claims_have_no_gold(client, judged):
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    sampled = list(AuditClaim.objects.filter(audit=audit).order_by("claim_id"))
    supported = [ac for ac in sampled if ac.stratum == S]
    for ac in [ac for ac in sampled if ac.stratum != S] + supported[:2]:  # 3 of the 5 "supported" claims wait
        GoldLabel.objects.create(audit=audit, claim_id=ac.claim_id, verdict=S, source="adjudicated")
    # Within the judge's "supported" stratum (N 30) the 2 claims with gold stand for all 30: 30 / 2 each. The
    # weights stored at drawing (30 / 5 = 6 each) would give 2 * 6 / (2 * 6 + 4 * 1.5 + 3 * 1) = 12 / 21.
    expected = (30 / 2 * 2) / (30 / 2 * 2 + 6 / 4 * 4 + 3 / 3 * 3)
    assert [len(supported), supported[0].stratum_population] == [5, 30]
    assert calibration_report(audit)["weighted"]["accuracy"] == pytest.approx(expected) == pytest.approx(30 / 39)
    client.force_login(make_user("lead", "lead"))
    judge = client.get(f"/reports/{audit.id}/report.json").json()["judge"]
    assert judge["weighted"]["accuracy"]["value"] == pytest.approx(expected)


def test_it_withholds_the_weighted_figures_while_a_large_stratum_has_no_gold(client, judged):
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    for ac in AuditClaim.objects.filter(audit=audit).exclude(stratum=S):  # the judge's "supported" stratum waits
        GoldLabel.objects.create(audit=audit, claim_id=ac.claim_id, verdict=S, source="adjudicated")
    # Strata N: supported 30, unsupported 6, contradicted 3. Weighting the last two alone reads 0 of 9, accuracy 0.
    why = "not computable: stratum 'supported' holds 76.9% of the population (more than 5%) and has no claim with gold"
    f = calibration_report(audit)
    assert f["sampled"]["accuracy"] == 0.0 and f["weighted"]["accuracy"] is None
    assert f["weighted"]["why"]["accuracy"] == f["weighted"]["why"]["bad_recall"] == why + " and a verdict"
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/reports/{audit.id}/").content.decode()
    escaped = why.replace("'", "&#x27;")
    assert f'<span class="nc" id="calibration-weighted">{escaped} and a verdict</span>' in page
    judge = client.get(f"/reports/{audit.id}/report.json").json()["judge"]
    assert judge["weighted"]["accuracy"]["why"] == why.replace("claim with gold", "judged claim with gold")
    # The matrices' weighted cells are the same estimate, cell by cell: withheld too, saying why; counts stay.
    assert f["weighted_why"] == why + " and a verdict" and f["matrix_weighted"] is None
    assert all(cell["weighted"] is None for row in f["table"] for cell in row["cells"])
    assert f["labels"][1] == C and [cell["count"] for cell in f["table"][1]["cells"]] == [3, 0, 0, 0]
    matrix = page[page.index('id="calibration-matrix"') :]
    assert escaped in matrix[: matrix.index("</table>")] and "<small" not in matrix[: matrix.index("</table>")]
    assert judge["matrix"]["weighted_why"] == judge["weighted"]["accuracy"]["why"]  # the report's own matrix
    assert all(cell["weighted"] is None for row in judge["matrix"]["rows"] for cell in row["cells"])
    matrix = page[page.index('id="matrix"') :]
    assert "<small" not in matrix[: matrix.index("</table>")]


def test_it_shows_the_matrix_weighted_cells_when_the_weighted_figures_are_computable(judged):
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    for ac in AuditClaim.objects.filter(audit=audit):
        GoldLabel.objects.create(audit=audit, claim_id=ac.claim_id, verdict=S, source="adjudicated")
    f = calibration_report(audit)
    # Strata N / n: supported 30 / 5, unsupported 6 / 4, contradicted 3 / 3; gold says supported for all 12.
    assert f["weighted_why"] is None
    assert list(f["labels"][:3]) == [S, C, U]
    assert [row["cells"][0]["weighted"] for row in f["table"][:3]] == pytest.approx([30, 3, 6])


def test_it_creates_one_from_the_command(judged, capsys):
    ds, version, claims = judged
    call_command("create_calibration_audit", "cal", "--dataset", ds.name, "--judge-version", str(version.pk),
                 "--size", "6", "--seed", "3")  # fmt: skip
    out = capsys.readouterr().out
    assert "supported: 2 of 30" in out and "6 claims" in out


def test_it_creates_one_from_its_page(client, judged):
    ds, version, claims = judged
    client.force_login(make_user("lead", "lead"))
    data = {"name": "cal-page", "dataset": ds.pk, "judge_version": version.pk, "size": 6, "seed": 3}
    r = client.post("/audits/new/calibration/", data)
    audit = Audit.objects.get(name="cal-page")
    assert r.status_code == 302 and audit.is_calibration and audit.calibration_items.count() == 6
    assert client.get(r["Location"]).status_code == 200
    r = client.post("/audits/new/calibration/", data | {"name": "x", "size": 0})
    assert r.status_code == 400 and not Audit.objects.filter(name="x").exists()
    r = client.post("/audits/new/calibration/", data | {"name": "y", "meta_field": "bad field!"})
    assert r.status_code == 400 and "Metadata field" in r.content.decode()
    # A misspelt field made one "meta.nosuch=None" stratum per verdict; the audit form refuses it, so does this one
    r = client.post("/audits/new/calibration/", data | {"name": "z", "meta_field": "nosuch"})
    assert r.status_code == 400 and "no answer in the population has metadata field &#x27;nosuch&#x27;" in (
        r.content.decode()
    )
    assert not Audit.objects.filter(name="z").exists()
    client.force_login(make_user("ann", "annotator"))
    assert client.get("/audits/new/calibration/").status_code == 403


def test_it_weights_the_judge_section_of_a_calibration_audit_by_each_claims_own_weight(client, judged):
    """The judge section's population figures use the sampled claim's weight (N_h / n_h of its own stratum),
    not its answer's: the same 30 / 39 as the calibration section above, from the table written out here."""
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    for ac in AuditClaim.objects.filter(audit=audit).select_related("claim"):
        GoldLabel.objects.create(audit=audit, claim=ac.claim, verdict=S, source="adjudicated")
    weight = dict(AuditClaim.objects.filter(audit=audit).values_list("claim_id", "weight"))
    said = dict(JudgeVerdict.objects.filter(claim_id__in=weight).values_list("claim_id", "verdict"))
    right = sum(w for c, w in weight.items() if said[c] == S)
    assert (right, sum(weight.values())) == (pytest.approx(30), pytest.approx(39))
    client.force_login(make_user("lead", "lead"))
    judge = client.get(f"/reports/{audit.id}/report.json").json()["judge"]
    assert judge["weighted"]["accuracy"]["value"] == pytest.approx(right / sum(weight.values()))
    assert judge["sampled"]["accuracy"]["value"] == pytest.approx(5 / 12)


def test_it_reads_the_judge_verdicts_of_the_sampled_claims_only(judged):
    """The report's judge table of a calibration audit: the sampled claims, not every claim of their answers."""
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=12, seed=7)
    sampled = set(AuditClaim.objects.filter(audit=audit).values_list("claim_id", flat=True))
    answers = AuditAnswer.objects.filter(audit=audit).values("answer_id")
    assert Claim.objects.filter(answer_id__in=answers).count() > len(sampled)  # their answers hold more claims
    assert set(audit_frames(audit, version.id)["judge"]["claim_id"]) == sampled


def test_it_leaves_each_answer_undecided_in_the_answer_export_of_a_calibration_audit(judged):
    """Gold on every sampled claim: a sampled answer's other claims have none, so its pass stays undecided."""
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=5, seed=7)
    sampled = list(AuditClaim.objects.filter(audit=audit).select_related("claim"))
    for ac in sampled:
        GoldLabel.objects.create(audit=audit, claim=ac.claim, verdict=S, source="adjudicated")
    rows = [json.loads(line) for line in export_bytes(audit, level="answer", fmt="jsonl").decode().splitlines()]
    per_answer = {}
    for ac in sampled:
        per_answer[ac.claim.answer.external_id] = per_answer.get(ac.claim.answer.external_id, 0) + 1
    assert {r["answer_id"]: (r["claims"], r["supported"], r["no_gold"]) for r in rows} == {
        a: (3, n, 3 - n) for a, n in per_answer.items()
    }
    assert {r["gold_pass"] for r in rows} == {None}


def test_it_takes_no_stratum_of_a_calibration_design_as_an_answer_filter(client, judged):
    ds, version, claims = judged
    audit = calibration_audit_create(name="cal", dataset=ds, version=version, size=3, seed=7)
    empty = audit.design[0]["stratum"]  # a claim stratum: the answers of a calibration sample are in "calibration"
    client.force_login(make_user("lead", "lead"))
    assert client.get(f"/reports/{audit.id}/answers/", {"stratum": "calibration"}).status_code == 200
    r = client.get(f"/reports/{audit.id}/answers/", {"stratum": empty})  # a claim stratum: no answer is in it
    assert r.status_code == 400 and "stratum=" in r.content.decode()


def test_it_shows_a_calibration_samples_probabilities_weights_units_and_design(client, judged):
    """Equal allocation of 6 over 3 verdict strata: 2 each, so n_h / N_h is 2/30, 2/6, 2/3 and N_h / n_h is 15,
    3, 1.5; the header counts claims (6, from 39 judged claims), the answers they are on, and equal allocation."""
    ds, version, claims = judged
    client.force_login(make_user("lead", "lead"))
    data = {"name": "cal-shown", "dataset": ds.pk, "judge_version": version.pk, "size": 6, "seed": 3}
    page = client.get(client.post("/audits/new/calibration/", data)["Location"]).content.decode()
    for probability, weight in ((2 / 30, 30 / 2), (2 / 6, 6 / 2), (2 / 3, 3 / 2)):
        assert f'<td class="num">{probability:.4f}</td><td class="num">{weight:.2f}</td>' in page
    audit = Audit.objects.get(name="cal-shown")
    on = len(set(Claim.objects.filter(calibration_items__audit=audit).values_list("answer_id", flat=True)))
    header = " ".join(page[page.index('<p class="muted">6 claims') :].split("</p>")[0].split())
    assert header.startswith(f'<p class="muted">6 claims (on {on} answers) sampled from the 39 claims of {ds.name}')
    assert "equal numbers per stratum" in header and "proportional" not in header


def test_it_completes_the_design_rows_of_samples_saved_before_they_kept_probabilities_and_weights(client, judged):
    """A calibration sample saved with counts only gets n_h / N_h and N_h / n_h from the data migration (the page
    filled them on every read); rows that have them keep them, and the unread hint key of older rows goes."""
    ds, version, claims = judged
    kept = audit_create(name="answers", dataset=ds, size=4, seed=1)
    old = calibration_audit_create(name="cal-old", dataset=ds, version=version, size=6, seed=3)
    Audit.objects.filter(pk=old.pk).update(
        design=[{k: r[k] for k in ("stratum", "population", "sample")} for r in old.design]
    )
    Audit.objects.filter(pk=kept.pk).update(design=[{**r, "hint": ""} for r in kept.design])
    migration = importlib.import_module("audit.migrations.0002_design_rows_complete")
    migration.complete_rows(django_apps, None)
    old.refresh_from_db()
    assert [(r["inclusion_probability"], r["weight"]) for r in old.design] == [(2 / 3, 1.5), (2 / 30, 15), (2 / 6, 3)]
    assert Audit.objects.get(pk=kept.pk).design == kept.design
    client.force_login(make_user("lead", "lead"))
    page = client.get(f"/audits/{old.pk}/").content.decode()
    assert f'<td class="num">{2 / 30:.4f}</td><td class="num">{15:.2f}</td>' in page


def test_it_refuses_a_calibration_sample_of_a_version_without_verdicts_on_the_dataset(client, judged):
    ds, version, claims = judged
    other = make_judge_version("never-ran", kind="anthropic", content_hash="n" * 64)
    client.force_login(make_user("lead", "lead"))
    data = {"name": "cal-empty", "dataset": ds.pk, "judge_version": other.pk, "size": 30, "meta_field": "model"}
    r = client.post("/audits/new/calibration/", data)
    assert r.status_code == 400 and not Audit.objects.filter(name="cal-empty").exists()
    assert r.context["form"].errors["judge_version"] == [
        f"{other.label} has no verdicts on the claims of {ds.name}: judge the dataset with this version first, "
        "or choose a version that judged it"
    ]
    page = r.content.decode()
    assert 'value="cal-empty"' in page and 'value="model"' in page  # what was typed is kept
    with pytest.raises(ValidationError) as exc:
        calibration_audit_create(name="cal-empty", dataset=ds, version=other, size=30)
    assert list(exc.value.message_dict) == ["judge_version"]


def test_it_refuses_more_strata_than_claims_to_draw(judged):
    """Verdict x a field unique per answer: 13 answers' claims fall in more strata than a size of 5 can reach;
    equal allocation would give the first 5 strata by name one claim each and the rest none."""
    ds, version, claims = judged
    rid = {}
    for c in claims:
        rid.setdefault(c.answer_id, f"r{len(rid):02d}")
    for answer_id, value in rid.items():
        Answer.objects.filter(pk=answer_id).update(meta={"rid": value})
    verdicts = dict(JudgeVerdict.objects.values_list("claim_id", "verdict"))
    strata = len({(verdicts[c.pk], rid[c.answer_id]) for c in claims})
    assert strata > 5
    with pytest.raises(ValidationError) as exc:
        calibration_audit_create(name="cal-wide", dataset=ds, version=version, size=5, meta_field="rid")
    assert exc.value.message_dict == {
        "size": [f"{strata} strata share 5 claims: raise the size to {strata} or stratify by fewer values"]
    }
    assert not Audit.objects.filter(name="cal-wide").exists()
