"""Audit pages: permissions, create with preview, detail with progress, assignments, judge, the command."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from annotations.assignments.services import audit_assign
from annotations.models import Assignment
from audit.models import Audit, Claim, JudgeRun
from audit.sampling.services import audit_create
from tests.factories import make_answers, make_dataset, make_judge_version, make_user, make_verdicts


def _queries(client, url, method="get", **kw):
    with CaptureQueriesContext(connection) as ctx:
        r = getattr(client, method)(url, **kw)
    assert r.status_code == 200, (url, r.status_code)
    return len(ctx)


class PermissionTests(TestCase):
    def test_it_forbids_annotators_every_lead_action(self):
        ds = make_dataset("pool")
        make_answers(ds, 6)
        audit = audit_create(name="w48", dataset=ds, size=6, seed=1)
        ann = [make_user(f"ann{i}", "annotator") for i in range(3)]
        audit_assign(audit, ann[:2])
        a = Assignment.objects.first()
        self.client.force_login(ann[0])
        for url in ["/audits/", "/audits/new/", f"/audits/{audit.id}/", f"/audits/{audit.id}/assignments/"]:
            assert self.client.get(url).status_code == 403, url
        posts = [
            ("/audits/new/", {"name": "x", "dataset": ds.id, "size": 3}),
            (f"/audits/{audit.id}/assign/", {"annotators": [u.id for u in ann]}),
            (f"/audits/{audit.id}/add-annotator/", {"annotator": ann[2].id}),
            (f"/audits/{audit.id}/judge/", {"backend": "offline"}),
            (f"/audits/assignments/{a.id}/reassign/", {"annotator": ann[2].id}),
            (f"/audits/assignments/{a.id}/restart/", {"annotator": ann[2].id}),
        ]
        for url, data in posts:
            assert self.client.post(url, data).status_code == 403, url
        assert Audit.objects.count() == 1 and not JudgeRun.objects.exists()
        assert Assignment.objects.filter(annotator=ann[2]).count() == 0

    def test_it_requires_login(self):
        r = self.client.get("/audits/")
        assert r.status_code == 302 and r["Location"].startswith("/login/")


class CreatePageTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)
        self.ds = make_dataset("pool")
        make_answers(self.ds, 90, meta=lambda i: {"model": ["m1", "m2", "m3"][i % 3]}, length=lambda i: i * 11)

    def form(self, **kw):
        return {
            "name": "2026-W48",
            "dataset": self.ds.id,
            "size": 30,
            "strata": "meta.model, length",
            "allocation": "proportional",
            "default_fail_rate": 0.1,
            "min_per_stratum": 0,
            **kw,
        }

    def test_it_previews_the_strata_without_saving(self):
        r = self.client.post("/audits/new/", self.form(), headers={"HX-Request": "true"})
        self.assertContains(r, 'id="preview"')
        self.assertNotContains(r, "<html")
        self.assertContains(r, "meta.model=m1 | length=&lt;300")
        self.assertContains(r, "<strong>90</strong>")
        assert not Audit.objects.exists()

    def test_it_explains_a_bad_stratum_key_in_the_preview(self):
        r = self.client.post("/audits/new/", self.form(strata="colour"), headers={"HX-Request": "true"})
        self.assertContains(r, "unknown stratification key")

    def test_it_creates_the_audit_and_draws_the_sample(self):
        r = self.client.post("/audits/new/", self.form(seed=77))
        audit = Audit.objects.get()
        self.assertRedirects(r, f"/audits/{audit.id}/")
        assert (audit.seed, audit.items.count(), audit.status, audit.created_by) == (77, 30, "draft", self.lead)
        assert audit.strata_keys == ["meta.model", "length"]

    def test_it_requires_a_name_to_create(self):
        r = self.client.post("/audits/new/", self.form(name=""))
        self.assertContains(r, "A name is required", status_code=400)
        assert not Audit.objects.exists()

    def test_a_refused_create_lists_the_fields_to_fix_and_never_asks_for_a_chosen_dataset(self):
        """After a refused create the preview said "Choose a dataset to preview the strata." under a chosen
        dataset, and nothing at the top said the audit was not created nor which fields to fix."""
        r = self.client.post("/audits/new/", self.form(meta_filters="model m1", strata="meta.model, colour"))
        self.assertContains(r, "Not created: fix 2 fields", status_code=400)
        self.assertContains(r, '<a href="#id_meta_filters">Meta filters</a>, <a href="#id_strata">', status_code=400)
        self.assertContains(r, 'id="id_meta_filters_error"', status_code=400)  # aria-describedby names it
        self.assertContains(r, 'id="id_meta_filters_helptext"', status_code=400)
        self.assertNotContains(r, "Choose a dataset", status_code=400)
        r = self.client.post("/audits/new/", self.form(meta_filters="model = m9"))  # refused by the service
        self.assertContains(r, "Not created: fix 1 field:", status_code=400)
        self.assertContains(r, "Fix the fields marked above", status_code=400)
        assert not Audit.objects.exists()

    def test_it_renders_the_form(self):
        self.assertContains(self.client.get("/audits/new/"), 'hx-post="/audits/new/"')

    def test_it_keeps_form_and_preview_queries_constant_as_the_pool_grows(self):
        hx = {"HX-Request": "true"}
        form_q = _queries(self.client, "/audits/new/")
        preview_q = _queries(self.client, "/audits/new/", method="post", data=self.form(), headers=hx)
        make_answers(
            self.ds, 300, meta=lambda i: {"model": ["m1", "m2", "m3"][i % 3]}, length=lambda i: i * 7, prefix="more"
        )
        with self.assertNumQueries(form_q):
            self.client.get("/audits/new/")
        with self.assertNumQueries(preview_q):
            self.client.post("/audits/new/", self.form(), headers=hx)


class DetailPageTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead", "adjudicator")
        self.client.force_login(self.lead)

    def build(self, n, people, name):
        ds = make_dataset(f"ds-{name}")
        make_answers(ds, n, meta=lambda i: {"model": f"m{i % 4}"}, prefix=name)
        audit = audit_create(name=name, dataset=ds, strata_keys=["meta.model"], size=n, seed=2)
        team = [make_user(f"{name}-ann{i}", "annotator") for i in range(people)]
        audit_assign(audit, team)
        qs = Assignment.objects.filter(audit_answer__audit=audit)
        done = list(qs.values_list("pk", flat=True)[: n // 2])
        qs.filter(pk__in=done).update(status="submitted", active_seconds=240)
        return audit

    def test_the_audit_list_counts_assignments_not_answers(self):
        """ "4 / 16 labelled" on an audit of 8 answers read as answers labelled (two assignments per answer)."""
        self.build(8, 2, "w0")
        r = self.client.get("/audits/")
        self.assertContains(r, "4 / 16 assignments submitted")
        self.assertNotContains(r, "/ 16 labelled")

    def test_it_shows_progress_per_annotator_and_overall(self):
        audit = self.build(8, 2, "w1")
        r = self.client.get(f"/audits/{audit.id}/")
        self.assertContains(r, "<progress")
        self.assertContains(r, "4 of 16 assignments submitted (25%)")
        who = Assignment.objects.filter(audit_answer__audit=audit).first().annotator_id
        # each annotator's count opens their assignments, filtered (the lead had to scroll all of them)
        self.assertContains(r, f'<a href="/audits/{audit.id}/assignments/?annotator={who}">8</a>')
        self.assertContains(r, "median 4.0 min per answer")
        self.assertContains(r, "meta.model=m0")
        self.assertContains(r, f'href="/reports/{audit.id}/"')

    def test_it_offers_the_reopen_form_for_submitted_assignments(self):
        audit = self.build(4, 2, "ro")
        submitted = Assignment.objects.filter(audit_answer__audit=audit, status="submitted").first()
        url = f"/audits/{audit.id}/assignments/"
        r = self.client.get(url)
        self.assertContains(r, f'action="/label/{submitted.pk}/reopen/"')
        r = self.client.post(f"/label/{submitted.pk}/reopen/", {"reason": "missed a claim", "next": url})
        self.assertRedirects(r, url)
        submitted.refresh_from_db()
        self.assertEqual(submitted.status, "started")

    def test_the_assignments_page_shows_reopened_work_its_reason_leavers_and_filters(self):
        """A reopened answer read "Started" with no trace of the reopening nor its reason, an annotator who left
        looked like any other, and 300 rows of a 150-answer audit could not be narrowed to one annotator's."""
        audit = self.build(4, 3, "rf")
        qs = Assignment.objects.filter(audit_answer__audit=audit)
        url = f"/audits/{audit.id}/assignments/"
        submitted = qs.filter(status="submitted").first()
        self.client.post(f"/label/{submitted.pk}/reopen/", {"reason": "evidence from the wrong passage", "next": url})
        leaver = qs.filter(status="assigned").exclude(annotator=submitted.annotator).first().annotator
        leaver.is_active = False
        leaver.save()
        r = self.client.get(url)
        row = r.content.decode().split(f'id="assignment-{submitted.pk}"')[1].split("</tr>")[0]
        assert "Reopened" in row and "evidence from the wrong passage" in row
        self.assertContains(r, "deactivated")
        r = self.client.get(url, {"status": "reopened"})
        assert r.context["assignments"] == [a for a in r.context["assignments"] if a.pk == submitted.pk]
        assert len(r.context["assignments"]) == 1
        self.assertContains(r, "1 of 8 assignments")
        r = self.client.get(url, {"annotator": leaver.pk})
        assert {a.annotator_id for a in r.context["assignments"]} == {leaver.pk}
        r = self.client.get(url, {"status": "assigned", "annotator": leaver.pk})
        assert all(a.status == "assigned" and a.annotator_id == leaver.pk for a in r.context["assignments"])
        r = self.client.get(url, {"status": "nonsense", "annotator": "x"})
        assert len(r.context["assignments"]) == 8  # an unknown filter shows everything, never a 500

    def test_it_restarts_the_started_work_of_a_leaver_from_the_assignments_page(self):
        audit = self.build(4, 3, "rl")
        qs = Assignment.objects.filter(audit_answer__audit=audit)
        a = qs.filter(status="assigned").first()
        qs.filter(pk=a.pk).update(status="started")
        leaver = a.annotator
        leaver.is_active = False
        leaver.save()
        url = f"/audits/{audit.id}/assignments/"
        row = self.client.get(url).content.decode().split(f'id="assignment-{a.pk}"')[1].split("</tr>")[0]
        assert f'action="/audits/assignments/{a.pk}/restart/"' in row and "discarded" in row
        pair = set(qs.filter(audit_answer=a.audit_answer).values_list("annotator_id", flat=True))
        target = qs.exclude(annotator_id__in=pair).exclude(annotator=leaver).first().annotator
        r = self.client.post(
            f"/audits/assignments/{a.pk}/restart/", {"annotator": target.pk}, headers={"HX-Request": "true"}
        )
        self.assertContains(r, f'id="assignment-{a.pk}"')
        self.assertContains(r, "Not started")
        a.refresh_from_db()
        assert (a.annotator_id, a.status) == (target.pk, "assigned")
        r = self.client.post(f"/audits/assignments/{a.pk}/restart/", {"annotator": target.pk}, follow=True)
        self.assertContains(r, "Only started work is restarted")

    def test_it_reassigns_over_htmx_in_constant_queries(self):
        counts = []
        for n, people, name in ((4, 3, "rs"), (40, 6, "rb")):
            audit = self.build(n, people, name)
            a = Assignment.objects.filter(audit_answer__audit=audit, status="assigned").first()
            pair = set(Assignment.objects.filter(audit_answer=a.audit_answer).values_list("annotator_id", flat=True))
            target = Assignment.objects.filter(audit_answer__audit=audit).exclude(annotator_id__in=pair).first()
            with CaptureQueriesContext(connection) as ctx:
                r = self.client.post(
                    f"/audits/assignments/{a.pk}/reassign/",
                    {"annotator": target.annotator_id},
                    headers={"HX-Request": "true"},
                )
            self.assertContains(r, f'id="assignment-{a.pk}"')
            a.refresh_from_db()
            assert a.annotator_id == target.annotator_id
            counts.append(len(ctx))
        assert counts[0] == counts[1], counts

    def test_it_keeps_page_queries_constant(self):
        small = self.build(8, 2, "s")
        big = self.build(60, 6, "b")
        for url in ("/audits/{}/", "/audits/{}/assignments/", "/audits/{}/assignments/?status=assigned"):
            counts = [_queries(self.client, url.format(a.id)) for a in (small, big)]
            assert counts[0] == counts[1], (url, counts)
            with self.assertNumQueries(counts[0]):
                self.client.get(url.format(big.id))
        listing = _queries(self.client, "/audits/")
        self.build(5, 2, "more")
        with self.assertNumQueries(listing):
            self.client.get("/audits/")

    def test_it_warns_when_sampled_answers_have_no_claims_and_refuses_to_assign(self):
        ds = make_dataset("bare")
        make_answers(ds, 5, claims=0, prefix="bare")
        audit = audit_create(name="bare", dataset=ds, size=5, seed=1)
        team = [make_user(f"bare{i}", "annotator") for i in range(2)]
        r = self.client.get(f"/audits/{audit.id}/")
        self.assertContains(r, "claims must exist before annotation starts")
        r = self.client.post(f"/audits/{audit.id}/assign/", {"annotators": [u.id for u in team]})
        self.assertContains(r, "Not assigned: 5 sampled answer(s) have no claims", status_code=400)
        for u in team:  # the annotators stay ticked (a redirect dropped them)
            self.assertContains(r, f'value="{u.id}" id="id_annotators_{team.index(u)}" checked', status_code=400)
        assert not Assignment.objects.filter(audit_answer__audit=audit).exists()

    def test_it_assigns_and_adds_an_annotator_from_the_page(self):
        ds = make_dataset("p")
        make_answers(ds, 10, prefix="p")
        audit = audit_create(name="p", dataset=ds, size=10, seed=1)
        team = [make_user(f"p{i}", "annotator") for i in range(4)]
        r = self.client.post(f"/audits/{audit.id}/assign/", {"annotators": [u.id for u in team[:3]]})
        self.assertRedirects(r, f"/audits/{audit.id}/")
        assert Assignment.objects.filter(audit_answer__audit=audit).count() == 20
        self.client.post(f"/audits/{audit.id}/add-annotator/", {"annotator": team[3].id})
        assert Assignment.objects.filter(annotator=team[3]).count() == 5

    def test_it_reassigns_through_htmx(self):
        audit = self.build(6, 3, "r")
        a = Assignment.objects.filter(audit_answer__audit=audit, status="assigned").first()
        used = set(a.audit_answer.assignments.values_list("annotator_id", flat=True))
        target = Assignment.objects.filter(audit_answer__audit=audit).exclude(annotator_id__in=used).first().annotator
        url = f"/audits/assignments/{a.id}/reassign/"
        r = self.client.post(url, {"annotator": target.id}, headers={"HX-Request": "true"})
        self.assertContains(r, f'id="assignment-{a.id}"')
        self.assertContains(r, target.username)
        a.refresh_from_db()
        assert a.annotator_id == target.id
        other = a.audit_answer.assignments.exclude(pk=a.pk).get().annotator_id
        r = self.client.post(url, {"annotator": other}, headers={"HX-Request": "true"})
        self.assertContains(r, "Not changed (annotator): ", status_code=400)  # the row, for htmx to swap in
        self.assertContains(r, "must differ", status_code=400)
        for bad in ("abc", str(2**63), ""):
            r = self.client.post(url, {"annotator": bad}, headers={"HX-Request": "true"})
            self.assertContains(r, "Not changed (annotator): Choose an annotator.", status_code=400)
        r = self.client.post(url.replace("reassign", "restart"), {"annotator": "abc"}, headers={"HX-Request": "true"})
        self.assertContains(r, "Not changed (annotator): Choose an annotator.", status_code=400)

    def test_it_starts_a_judge_run_on_the_sample(self):
        ds = make_dataset("j")
        make_answers(ds, 4, claims=0, prefix="j")
        audit = audit_create(name="j", dataset=ds, size=4, seed=1)
        r = self.client.post(f"/audits/{audit.id}/judge/", {"backend": "offline"})
        run = JudgeRun.objects.get()
        assert run.audit_id == audit.id and run.created_by == self.lead
        self.assertRedirects(r, f"/judge/runs/{run.id}/", fetch_redirect_response=False)


class CommandTests(TestCase):
    def test_it_creates_and_assigns_the_demo_audit(self):
        ds = make_dataset("RAGTruth")
        answers = make_answers(ds, 60, meta=lambda i: {"model": ["gpt-4", "llama-2"][i % 2]})
        v = make_judge_version("offline")
        make_verdicts(v, Claim.objects.filter(answer__in=answers[:15]), "unsupported")
        make_verdicts(v, Claim.objects.filter(answer__in=answers[15:]), "supported")
        make_user("ann1", "annotator")
        make_user("ann2", "annotator")
        out = io.StringIO()
        call_command(
            "create_audit",
            "demo-2026-W48",
            "--dataset",
            "RAGTruth",
            "--size",
            "40",
            "--strata",
            "judge,meta.model",
            "--seed",
            "48",
            "--annotators",
            "ann1,ann2",
            "--demo",
            stdout=out,
        )
        audit = Audit.objects.get(name="demo-2026-W48")
        assert audit.is_demo and audit.seed == 48 and audit.status == "labelling" and audit.items.count() == 40
        assert "judge=fail | meta.model=gpt-4" in out.getvalue() and "Assigned to ann1, ann2" in out.getvalue()
        per_user = {}
        for who, demo in Assignment.objects.values_list("annotator__username", "is_demo"):
            per_user[who] = per_user.get(who, 0) + 1
            assert not demo  # live labels of a demo audit are not "demo labels": only pre-filled ones are
        assert per_user == {"ann1": 40, "ann2": 40}

    def test_it_reports_clear_errors(self):
        make_dataset("d")
        with self.assertRaisesMessage(CommandError, "No dataset named 'nope'"):
            call_command("create_audit", "x", "--dataset", "nope", "--size", "3")
        with self.assertRaisesMessage(CommandError, "unknown stratification key"):
            call_command("create_audit", "x", "--dataset", "d", "--strata", "colour")
        with self.assertRaisesMessage(CommandError, "Unknown annotator(s): ghost"):
            call_command("create_audit", "x", "--dataset", "d", "--annotators", "ghost")

    def test_it_prints_the_design_for_neyman_with_minimums(self):
        ds = make_dataset("d")
        make_answers(ds, 50, meta=lambda i: {"model": "big" if i < 45 else "small"}, claims=0)
        out = io.StringIO()
        call_command(
            "create_audit",
            "n",
            "--dataset",
            "d",
            "--size",
            "10",
            "--strata",
            "meta.model",
            "--allocation",
            "neyman",
            "--min-per-stratum",
            "4",
            "--fail-rate",
            "meta.model=small=0.5",
            "--exclude-audited",
            stdout=out,
        )
        audit = Audit.objects.get(name="n")
        assert {r["stratum"]: r["sample"] for r in audit.design} == {"meta.model=big": 6, "meta.model=small": 4}
        assert audit.population_filter["exclude_audited"] is True
        assert "meta.model=small" in out.getvalue() and "seed" in out.getvalue()
        assert not Claim.objects.exists()

    def test_it_notes_strata_left_without_a_sample(self):
        ds = make_dataset("d")
        make_answers(ds, 100, meta=lambda i: {"model": "big" if i < 99 else "rare"}, claims=0)
        out = io.StringIO()
        call_command("create_audit", "p", "--dataset", "d", "--size", "10", "--strata", "meta.model", stdout=out)
        assert "1 non-empty stratum got no sample" in out.getvalue()
        out = io.StringIO()
        call_command(
            "create_audit",
            "q",
            "--dataset",
            "d",
            "--size",
            "10",
            "--strata",
            "meta.model",
            "--min-per-stratum",
            "1",
            stdout=out,
        )
        assert "no sample" not in out.getvalue()
        assert Audit.objects.get(name="q").items.filter(stratum="meta.model=rare").count() == 1


@pytest.mark.browser
def test_it_previews_creates_and_assigns_in_chromium(live_server, page, login, transactional_db):
    lead = make_user("lead", "lead")
    make_user("ann1", "annotator")
    make_user("ann2", "annotator")
    ds = make_dataset("pool")
    make_answers(ds, 40, meta=lambda i: {"model": ["m1", "m2"][i % 2]})
    login(page, lead)
    page.goto(f"{live_server.url}/audits/new/")
    page.fill("input[name=name]", "2026-W48")
    page.select_option("select[name=dataset]", str(ds.id))
    page.fill("input[name=strata]", "meta.model")
    page.fill("input[name=size]", "10")
    page.wait_for_selector("#preview >> text=meta.model=m2")  # typing alone refreshes the preview
    page.fill("input[name=size]", "12")
    page.click("#preview-button")
    page.wait_for_selector("#preview >> text=sample: 12")
    assert Audit.objects.count() == 0
    page.click("button[type=submit]:has-text('Create audit')")
    page.wait_for_selector("h1:has-text('Audit 2026-W48')")
    page.check("text=ann1")
    page.check("text=ann2")
    page.click("button:has-text('Assign and start labelling')")
    page.wait_for_selector("text=0 of 24 assignments submitted")
    assert page.js_errors == []


@pytest.mark.browser
def test_it_filters_assignments_and_restarts_a_leavers_work_by_keyboard_in_chromium(
    live_server, page, login, transactional_db
):
    lead = make_user("lead", "lead")
    team = [make_user(f"ann{i}", "annotator") for i in range(1, 4)]
    ds = make_dataset("pool")
    make_answers(ds, 3, prefix="k")
    audit = audit_create(name="k", dataset=ds, size=3, seed=1)
    audit_assign(audit, team[:2])
    started = Assignment.objects.filter(audit_answer__audit=audit, annotator=team[1]).first()
    Assignment.objects.filter(pk=started.pk).update(status="started")
    team[1].is_active = False
    team[1].save()
    login(page, lead)
    page.goto(f"{live_server.url}/audits/{audit.id}/assignments/")
    page.select_option("select[name=status]", "started")
    page.focus("select[name=status]")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # the Filter button
    page.wait_for_selector("text=1 of 6 assignments match")
    row = page.locator(f"#assignment-{started.pk}")
    assert "deactivated" in row.inner_text()
    row.locator("select[name=annotator]").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Restart with them (ann3, the only one who may take it)
    page.wait_for_selector(f"#assignment-{started.pk} >> text=Not started")
    started.refresh_from_db()
    assert (started.annotator_id, started.status) == (team[2].pk, "assigned")
    assert page.js_errors == []


class AddAnnotatorChoicesTests(TestCase):
    def test_it_offers_only_annotators_not_yet_on_the_audit_and_says_when_there_are_none(self):
        lead = make_user("lead", "lead")
        self.client.force_login(lead)
        ds = make_dataset("team")
        make_answers(ds, 4, claims=1, prefix="t")
        audit = audit_create(name="team", dataset=ds, size=4, seed=1)
        on = [make_user(f"on{i}", "annotator") for i in range(2)]
        audit_assign(audit, on)
        r = self.client.get(f"/audits/{audit.id}/")
        self.assertNotContains(r, "Add and rebalance")
        self.assertContains(r, "Every annotator is already on this audit")
        newcomer = make_user("newcomer", "annotator")
        r = self.client.get(f"/audits/{audit.id}/")
        self.assertContains(r, f'<option value="{newcomer.pk}">newcomer</option>', html=True)
        for u in on:
            self.assertNotContains(r, f'<option value="{u.pk}">')
