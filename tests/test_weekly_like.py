"""'New audit like this one': next week's design (window moved, new seed, same strata and allocation),
previewed, created, judged and assigned; `create_audit --like`; reproducible from the seed."""

import datetime as dt
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotations.assignments.services import audit_add_annotator, audit_assign
from annotations.models import Assignment, PendingAssignment
from annotations.weekly.services import like_create, like_plan
from audit.guidelines.services import guidelines_save
from audit.judge.offline import OfflineJudge
from audit.judge.outcome import FatalJudgeError
from audit.judge.services import judge_run_execute
from audit.models import Audit, GuidelinesVersion
from audit.sampling.services import audit_create
from tests.factories import make_answer, make_dataset, make_user
from tests.test_notify import run_tasks

MODELS = ["m1", "m2", "m3"]


def week_of_answers(ds, monday, n=30):
    for i in range(n):
        at = dt.datetime.combine(monday + dt.timedelta(days=i % 7), dt.time(12), dt.UTC)
        make_answer(ds, meta={"model": MODELS[i % 3]}, created_at=at, external_id=f"{monday}-{i}")


@pytest.fixture
def source(db):
    ds = make_dataset("support")
    for week in range(4):  # weeks 48 .. 51 of 2026
        week_of_answers(ds, dt.date(2026, 11, 23) + dt.timedelta(weeks=week))
    lead = make_user("lead", "lead")
    anns = [make_user(n, "annotator") for n in ("ann1", "ann2", "ann3")]
    audit = audit_create(
        name="support-2026-W48",
        dataset=ds,
        population_filter={"created_from": "2026-11-23", "created_to": "2026-11-29", "meta": {}},
        strata_keys="meta.model",
        allocation_method="equal",
        size=12,
        min_per_stratum=2,
        seed=4848,
        user=lead,
    )
    guidelines_save(audit, "Week 48 rules", lead)
    audit_assign(audit, anns[:2], user=lead)
    return audit


def sampled(audit):
    return sorted(audit.items.values_list("answer_id", flat=True))


def test_it_copies_the_design_with_the_window_moved_a_week_and_a_new_seed(source):
    plan = like_plan(source)
    f = plan["kwargs"]["population_filter"]
    assert plan["name"] == "support-2026-W49" and plan["week"] == "2026-W49"
    assert (f["created_from"], f["created_to"]) == ("2026-11-30", "2026-12-06")
    k = plan["kwargs"]
    assert (k["strata_keys"], k["allocation_method"], k["size"], k["min_per_stratum"]) == (
        ["meta.model"],
        "equal",
        12,
        2,
    )
    assert plan["seed"] != source.seed
    assert [u.username for u in plan["annotators"]] == ["ann1", "ann2"]
    assert plan["preview"]["population_size"] == 30  # the answers of week 49 only
    assert [r["sample"] for r in plan["preview"]["design"]] == [4, 4, 4]


def test_it_is_reproducible_from_the_seed(source):
    a, _ = like_create(like_plan(source, seed=777), enqueue=False)
    b, _ = like_create(like_plan(source, seed=777, name="again"), enqueue=False)
    assert sampled(a) == sampled(b) and a.seed == b.seed == 777
    c, _ = like_create(like_plan(source, seed=778, name="other-seed"), enqueue=False)
    assert sampled(c) != sampled(a)
    week49 = set(
        source.dataset.answers.filter(
            created_at__date__range=(dt.date(2026, 11, 30), dt.date(2026, 12, 6))
        ).values_list("id", flat=True)
    )
    assert set(sampled(a)) <= week49


def test_it_creates_judges_and_assigns_from_the_command_for_a_given_week(source):
    out = io.StringIO()
    call_command("create_audit", "--like", source.name, "--week", "2026-W50", stdout=out)
    audit = Audit.objects.get(name="support-2026-W50")
    assert audit.population_filter["created_from"] == "2026-12-07"
    assert audit.status == "labelling" and audit.strata_keys == ["meta.model"] and audit.allocation == "equal"
    annotators = set(Assignment.objects.filter(audit_answer__audit=audit).values_list("annotator__username", flat=True))
    assert annotators == {"ann1", "ann2"}
    assert GuidelinesVersion.objects.get(audit=audit).text == "Week 48 rules"
    assert "Assigned to ann1, ann2 after judge run" in out.getvalue()
    with pytest.raises(Exception, match="exists already"):
        call_command("create_audit", "--like", source.name, "--week", "2026-W50", stdout=io.StringIO())


def test_it_previews_then_creates_and_assigns_after_the_judge_run_from_the_web(
    source, django_capture_on_commit_callbacks
):
    c = Client()
    c.force_login(source.created_by)
    page = c.get(f"/audits/{source.pk}/like/").content.decode()
    assert "Preview: support-2026-W49" in page and "created 2026-11-30 to 2026-12-06 (moved 7 days)" in page
    seed = int(page.split('name="seed" value="')[1].split('"')[0])
    with django_capture_on_commit_callbacks(execute=True):
        r = c.post(f"/audits/{source.pk}/like/", {"week": "2026-W49", "seed": seed, "name": "support-2026-W49"})
    audit = Audit.objects.get(name="support-2026-W49")
    assert r.status_code == 302 and r.url == f"/judge/runs/{audit.judge_runs.get().pk}/"
    assert audit.seed == seed and audit.status == "draft"
    assert PendingAssignment.objects.get(audit=audit).status == "pending"
    assert "Made like another audit: Waiting for the judge run" in c.get(f"/audits/{audit.pk}/").content.decode()
    run_tasks()  # the task worker judges the sample; its end assigns the audit
    audit.refresh_from_db()
    assert audit.status == "labelling" and PendingAssignment.objects.get(audit=audit).status == "done"
    assert "Assigned to ann1, ann2 after judge run" in c.get(f"/audits/{audit.pk}/").content.decode()


def test_it_refuses_a_bad_week_naming_the_field(source):
    c = Client()
    c.force_login(source.created_by)
    r = c.get(f"/audits/{source.pk}/like/?week=2026-W99")
    assert r.status_code == 400 and "week: expected an ISO week" in r.content.decode()
    assert 'name="week" value="2026-W99"' in r.content.decode()
    r = c.get(f"/audits/{source.pk}/like/?week=soon")
    page = r.content.decode()
    # It said "week: Enter a valid value." and emptied the field.
    assert r.status_code == 400 and "week: expected an ISO week like 2026-W50, got “soon”" in page
    assert 'name="week" value="soon"' in page
    annotator = Client()
    annotator.force_login(make_user("ann9", "annotator"))
    assert annotator.get(f"/audits/{source.pk}/like/").status_code == 403


def test_it_keeps_the_like_page_queries_constant(source, django_assert_num_queries):
    c = Client()
    c.force_login(source.created_by)
    with CaptureQueriesContext(connection) as few:
        assert c.get(f"/audits/{source.pk}/like/?seed=1").status_code == 200
    audit_add_annotator(source, make_user("ann4", "annotator"))  # one more annotator on the source
    for i in range(4):  # and more audits
        like_create(like_plan(source, seed=i, name=f"x{i}"), enqueue=False)
    with django_assert_num_queries(len(few)):
        page = c.get(f"/audits/{source.pk}/like/?seed=1").content.decode()
    assert "assigned to ann1, ann2, ann4" in page


def test_it_takes_the_week_from_the_name_when_the_audit_has_no_window(db):
    ds = make_dataset("RAGTruth")
    week_of_answers(ds, dt.date(2026, 11, 23), n=6)
    audit = audit_create(name="demo-2026-W48", dataset=ds, size=3, seed=1)
    plan = like_plan(audit)
    assert plan["name"] == "RAGTruth-2026-W49" and "created_from" not in plan["kwargs"]["population_filter"]
    assert like_plan(audit, week="2027-W01")["name"] == "RAGTruth-2027-W01"


def test_it_says_how_many_answers_it_draws_are_already_audited_when_the_source_has_no_window(
    db, django_capture_on_commit_callbacks
):
    """A source without a date window: next week's population is the same answers, so the draw overlaps the
    source. The preview's count is checked against the audit its seed then creates."""
    ds = make_dataset("RAGTruth")
    week_of_answers(ds, dt.date(2026, 11, 23), n=60)
    lead = make_user("lead", "lead")
    source = audit_create(name="demo-2026-W48", dataset=ds, strata_keys="meta.model", size=20, seed=1, user=lead)
    audit_assign(source, [make_user(n, "annotator") for n in ("ann1", "ann2")], user=lead)
    c = Client()
    c.force_login(lead)
    page = c.get(f"/audits/{source.pk}/like/?seed=5").content.decode()
    with django_capture_on_commit_callbacks(execute=False):
        c.post(f"/audits/{source.pk}/like/", {"seed": 5, "name": "RAGTruth-2026-W49"})
    created = set(Audit.objects.get(name="RAGTruth-2026-W49").items.values_list("answer_id", flat=True))
    again = len(created & set(sampled(source)))
    assert 0 < again < 20 and len(created) == 20
    assert f"Already audited: {again} of the 20 answers this seed draws are in demo-2026-W48." in page
    assert "demo-2026-W48 has no date window, so the new audit draws from the same answers again" in page


def test_it_sizes_the_strata_and_draws_once_when_the_previewed_audit_is_created(
    source, django_capture_on_commit_callbacks
):
    """The POST creates what the preview showed: the seed's sample, sized and drawn once (not previewed again)."""
    c = Client()
    c.force_login(source.created_by)
    assert "Already audited: 0 of the 12 answers" in c.get(f"/audits/{source.pk}/like/?seed=5").content.decode()
    with CaptureQueriesContext(connection) as q, django_capture_on_commit_callbacks(execute=False):
        r = c.post(f"/audits/{source.pk}/like/", {"week": "2026-W49", "seed": 5, "name": "support-2026-W49"})
    assert r.status_code == 302
    sql = [x["sql"] for x in q.captured_queries]
    assert sum('"_k"' in s for s in sql) == 1  # the draw: the answers with the smallest order keys
    assert sum('AS "_n"' in s for s in sql) == 1  # the strata sizes: N_h by GROUP BY
    again, _ = like_create(like_plan(source, seed=5, name="again"), enqueue=False)
    assert sampled(Audit.objects.get(name="support-2026-W49")) == sampled(again)


def test_it_shows_the_preview_again_with_the_reason_when_creating_is_refused(source):
    c = Client()
    c.force_login(source.created_by)
    r = c.post(f"/audits/{source.pk}/like/", {"week": "2026-W49", "seed": 5, "name": source.name})
    page = r.content.decode()
    assert r.status_code == 400 and f"name: an audit named &#x27;{source.name}&#x27; exists already" in page
    assert f"Preview: {source.name}" in page and "Already audited: 0 of the 12 answers" in page
    assert Audit.objects.count() == 1


def test_it_assigns_the_new_audit_when_a_resume_of_its_failed_judge_run_is_done(source, monkeypatch):
    plan = like_plan(source, week="2026-W49", preview=False)
    audit, run = like_create(plan, source.created_by, enqueue=False)
    with monkeypatch.context() as m:

        def down(judge, stage, params):
            raise FatalJudgeError("the judge is down")

        m.setattr(OfflineJudge, "call", down)
        assert judge_run_execute(run.pk).status == "failed"
    c = Client()
    c.force_login(source.created_by)
    pending = PendingAssignment.objects.get(audit=audit)
    assert pending.status == "pending" and audit.status == "draft"
    page = c.get(f"/audits/{audit.pk}/").content.decode()
    assert "then assigned automatically" in page and f"Judge run #{run.pk} ended failed: resume it" in page
    c.post(f"/judge/runs/{run.pk}/resume/", {"retry_failed": ""})  # the lead resumes; the worker finishes it
    run_tasks()
    audit.refresh_from_db()
    assert audit.status == "labelling" and PendingAssignment.objects.get(audit=audit).status == "done"
    assert set(Assignment.objects.filter(audit_answer__audit=audit).values_list("annotator__username", flat=True)) == {
        "ann1",
        "ann2",
    }
    assert f"Assigned to ann1, ann2 after judge run #{run.pk}" in c.get(f"/audits/{audit.pk}/").content.decode()


def test_it_leaves_a_new_audit_assigned_by_hand_while_its_run_was_failed_as_it_is(source, monkeypatch):
    plan = like_plan(source, week="2026-W49", preview=False)
    audit, run = like_create(plan, source.created_by, enqueue=False)
    with monkeypatch.context() as m:
        m.setattr(OfflineJudge, "call", lambda *args: (_ for _ in ()).throw(FatalJudgeError("down")))
        judge_run_execute(run.pk)
    ann3 = get_user_model().objects.get(username="ann3")
    audit_assign(audit, [ann3, get_user_model().objects.get(username="ann1")], user=source.created_by)
    assert judge_run_execute(run.pk).status == "done"  # the first run resumed: nothing to assign any more
    pending = PendingAssignment.objects.get(audit=audit)
    assert pending.status == "done" and pending.message.startswith("Already assigned when judge run")
    assert not Assignment.objects.filter(audit_answer__audit=audit, annotator__username="ann2").exists()
