"""Fixes to the labelling and adjudication screens: reassign choices, the demo flag, undo, queue filters,
flags and notes in the exports, the one adjudication rule."""

import json

from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from annotations.adjudication import export, rules, selectors, services
from annotations.assignments.services import audit_assign
from annotations.models import Assignment, GoldLabel, Label
from audit.models import AuditAnswer, Claim, HistoryEvent, Verdict
from tests.factories import (
    make_answer,
    make_answers,
    make_assigned_audit,
    make_audit,
    make_dataset,
    make_gold,
    make_labelled_audit,
    make_user,
)

HX = {"HX-Request": "true"}


class ReassignAndDemoTests(TestCase):
    def test_it_offers_every_annotator_but_the_two_on_the_answer(self):
        lead = make_user("lead", "lead")
        team = [make_user(f"ann{i}", "annotator") for i in range(4)]
        ds = make_dataset("d")
        audit = make_audit([make_answer(ds, external_id=f"x{i}") for i in range(2)], status="draft")
        audit_assign(audit, team[:2])
        self.client.force_login(lead)
        body = self.client.get(f"/audits/{audit.id}/assignments/").content.decode()
        for a in Assignment.objects.filter(audit_answer__audit=audit):
            row = body[body.index(f'id="assignment-{a.id}"') :]
            row = row[: row.index("</tr>")]
            offered = {u.username for u in team if f">{u.username}</option>" in row}
            on_answer = set(a.audit_answer.assignments.values_list("annotator__username", flat=True))
            assert offered == {u.username for u in team} - on_answer  # ann2 and ann3: never the partner

    def test_it_marks_only_prefilled_assignments_as_demo(self):
        team = [make_user(f"ann{i}", "annotator") for i in range(2)]
        ds = make_dataset("d")
        audit = make_audit([make_answer(ds, external_id="x")], status="draft", is_demo=True)
        audit_assign(audit, team)
        assert not Assignment.objects.filter(is_demo=True).exists()


class UndoTests(TestCase):
    def setUp(self):
        self.ann = make_user("ann", "annotator")
        _, self.mine = make_assigned_audit(self.ann, n_answers=1, n_claims=2)
        self.a = self.mine[0]
        self.c0, self.c1 = self.a.audit_answer.answer.claims.order_by("position")
        self.client.force_login(self.ann)

    def post(self, claim, data):
        return self.client.post(f"/label/{self.a.pk}/claim/{claim.pk}/", data, headers=HX)

    def test_it_undoes_step_by_step_across_claims_each_with_history(self):
        self.post(self.c0, {"verdict": "supported"})
        self.post(self.c1, {"note": "check passage 2"})
        self.post(self.c0, {"verdict": ""})  # cleared
        undo = f"/label/{self.a.pk}/undo/"
        r = self.client.post(undo, headers=HX)
        self.assertContains(r, f'id="claim-{self.c0.pk}"')
        self.assertContains(r, 'hx-swap-oob="true"')
        assert Label.objects.get(claim=self.c0).verdict == "supported"
        self.client.post(undo, headers=HX)
        assert Label.objects.get(claim=self.c1).note == ""
        self.client.post(undo, headers=HX)
        assert Label.objects.get(claim=self.c0).verdict == ""
        r = self.client.post(undo, headers=HX)
        assert r.status_code == 400 and r.content == b"Nothing to undo on this answer."
        events = HistoryEvent.objects.filter(kind="label").order_by("id")
        assert [e.action for e in events] == ["save", "save", "save", "undo", "undo", "undo"]
        saves = [e.id for e in events if e.action == "save"]
        assert [e.new["undoes"] for e in events if e.action == "undo"] == saves[::-1]

    def test_it_refuses_undo_on_a_submitted_answer(self):
        self.post(self.c0, {"verdict": "supported"})
        Assignment.objects.filter(pk=self.a.pk).update(status="submitted")
        r = self.client.post(f"/label/{self.a.pk}/undo/", headers=HX)
        assert r.status_code == 409
        assert Label.objects.get(claim=self.c0).verdict == "supported"

    def test_it_keeps_undo_queries_constant_in_claims_and_passages(self):
        counts = []
        for n in (2, 17):
            ann = make_user(f"u{n}", "annotator")
            _, [a] = make_assigned_audit(ann, n_answers=1, n_claims=n, n_passages=n, name=f"n{n}")
            self.client.force_login(ann)
            claims = list(a.audit_answer.answer.claims.order_by("position"))
            for c in claims:
                self.client.post(f"/label/{a.pk}/claim/{c.pk}/", {"verdict": "unsupported"}, headers=HX)

            with CaptureQueriesContext(connection) as ctx:
                self.client.post(f"/label/{a.pk}/undo/", headers=HX)
            counts.append(len(ctx))
        assert counts[0] == counts[1], counts


class QueueFilterTests(TestCase):
    def test_it_filters_the_annotators_queue_by_status_and_text(self):
        ann = make_user("ann", "annotator")
        audit, mine = make_assigned_audit(ann, n_answers=3)
        mine[1].audit_answer.answer.__class__.objects.filter(pk=mine[1].audit_answer.answer_id).update(
            question="How tall is the Eiffel tower?"
        )
        Assignment.objects.filter(pk=mine[2].pk).update(status="submitted")
        self.client.force_login(ann)
        url = f"/label/queue/{audit.pk}/"

        def listed(**params):
            body = self.client.get(url, params).content.decode()
            return {a.pk for a in mine if f'<td><a href="/label/{a.pk}/">' in body}, body

        shown, body = listed(q="eiffel")
        assert shown == {mine[1].pk}
        assert "1 of 3 shown" in body
        assert listed(status="submitted")[0] == {mine[2].pk}
        assert listed()[0] == {a.pk for a in mine}
        assert "No answer matches" in self.client.get(url, {"q": "zzz"}).content.decode()

    def test_it_filters_the_adjudication_queue_by_status_and_text(self):
        a, b, adj = make_user("a", "annotator"), make_user("b", "annotator"), make_user("adj", "adjudicator")
        audit = make_labelled_audit(a, b, n_answers=2)  # claim 0 of each answer disputed
        make_gold(audit)
        first, second = AuditAnswer.objects.filter(audit=audit).order_by("position")
        claim = Claim.objects.get(answer=first.answer, position=0)
        services.gold_adjudicate(audit, claim, user=adj, verdict="supported", reason="A", expected_version=0)
        self.client.force_login(adj)
        open_ = self.client.get("/adjudicate/", {"status": "open"}).content.decode()
        assert f"/answers/{second.id}/?claim=" in open_ and f"/answers/{first.id}/?claim=" not in open_
        done = self.client.get("/adjudicate/", {"status": "resolved"}).content.decode()
        assert f"/answers/{first.id}/?claim=" in done and f"/answers/{second.id}/?claim=" not in done
        by_id = self.client.get("/adjudicate/", {"q": second.answer.external_id}).content.decode()
        assert f"/answers/{second.id}/?claim=" in by_id and f"/answers/{first.id}/?claim=" not in by_id
        assert "No disputed claim matches" in self.client.get("/adjudicate/", {"q": "zzz"}).content.decode()

    def test_it_counts_a_gold_marked_for_recheck_as_open_in_the_filter_and_for_take_all(self):
        a, b, adj = make_user("a", "annotator"), make_user("b", "annotator"), make_user("adj", "adjudicator")
        audit = make_labelled_audit(a, b, n_answers=1)
        make_gold(audit)
        item = AuditAnswer.objects.get(audit=audit)
        claim = Claim.objects.get(answer=item.answer, position=0)
        services.gold_adjudicate(audit, claim, user=adj, verdict="supported", reason="A", expected_version=0)
        GoldLabel.objects.filter(audit=audit, claim=claim).update(recheck=True)  # a label changed after a reopen
        self.client.force_login(adj)
        open_ = self.client.get("/adjudicate/", {"status": "open"}).content.decode()
        assert f"/answers/{item.id}/?claim={claim.id}" in open_
        url = f"/adjudicate/{audit.id}/answers/{item.id}/"
        r = self.client.post(f"{url}take-all/", {"slot": "b", "reason": ""})  # refused: no reason
        assert r.status_code == 302 and r.url == f"{url}?take=b"
        page = self.client.get(r.url).content.decode()
        assert '<option value="b" selected>' in page and "A reason is required" in page  # B's kept, not A's again
        r = self.client.post(f"/adjudicate/{audit.id}/answers/{item.id}/take-all/", {"slot": "b", "reason": "B right"})
        assert r.status_code in (200, 302), r.content[:300]
        gold = GoldLabel.objects.get(audit=audit, claim=claim)
        assert (gold.recheck, gold.reason) == (False, "B right")

    def test_it_narrows_the_judge_error_review_to_the_search_text(self):
        def row(text, external_id):
            return {"claim": {"text": text}, "external_id": external_id, "gold": None}

        entry = {"answers": {}, "judge_review": [row("The PSA test measures", "r-1"), row("Blood is red", "r-2")]}
        [narrowed] = selectors.filter_queue([entry], "", "psa")
        assert [r["external_id"] for r in narrowed["judge_review"]] == ["r-1"]


class ExportNotesTests(TestCase):
    def test_it_exports_flags_claim_notes_and_answer_notes(self):
        a, b = make_user("a", "annotator"), make_user("b", "annotator")
        audit = make_labelled_audit(a, b, n_answers=1, n_claims=2)
        item = AuditAnswer.objects.get(audit=audit)
        c0 = Claim.objects.get(answer=item.answer, position=0)
        Label.objects.filter(claim=c0, assignment__slot="A").update(
            flag_not_atomic=True, flag_true_not_in_passages=True, note="two facts"
        )
        Assignment.objects.filter(audit_answer=item, slot="B").update(note="misses the date")
        make_gold(audit)
        rows = [r for r in export.export_bytes(audit, level="claim", fmt="jsonl").decode().splitlines()]

        first = json.loads(rows[0])
        assert (first["annotator_a_flags"], first["annotator_a_note"]) == (
            "not_atomic true_not_in_passages",
            "two facts",
        )
        assert (first["annotator_b_flags"], first["annotator_b_note"]) == ("", "")
        [answer] = [
            json.loads(r) for r in export.export_bytes(audit, level="answer", fmt="jsonl").decode().splitlines()
        ]
        assert (answer["annotator_a_note"], answer["annotator_b_note"]) == ("", "misses the date")


class OneAdjudicationRuleTests(TestCase):
    """rules.adjudication_refusal decides for the view, the service and the queue alike."""

    def test_it_states_who_may_adjudicate_from_loaded_rows(self):
        done = Assignment.Status.SUBMITTED
        rule = rules.adjudication_refusal
        assert rule(9, 1, [(1, done), (2, done)], []) is None
        assert "Both annotators must submit" in rule(9, 1, [(1, done), (2, "started")], [])
        assert "You labelled this answer" in rule(1, 1, [(1, done), (2, done)], [(1, done)])
        assert "in another audit" in rule(9, 1, [(1, done), (2, done)], [(7, done)])
        with override_settings(ADJUDICATOR_MAY_ADJUDICATE_OWN=True):
            assert rule(1, 1, [(1, done), (2, done)], [(1, done)]) is None
            assert rule(9, 1, [(1, done), (2, done)], [(7, done)]) is None  # submitted elsewhere: allowed
            assert "in another audit" in rule(9, 1, [(1, done), (2, done)], [(7, "started")])

    def test_it_refuses_the_same_way_in_view_service_and_queue(self):
        a, b = make_user("a", "annotator"), make_user("b", "annotator")
        a.groups.add(*make_user("x", "adjudicator").groups.all())
        audit = make_labelled_audit(a, b, n_answers=1)
        make_gold(audit)
        item = AuditAnswer.objects.get(audit=audit)
        claim = Claim.objects.get(answer=item.answer, position=0)
        self.client.force_login(a)
        assert self.client.get(f"/adjudicate/{audit.id}/answers/{item.id}/").status_code == 404
        assert f"/answers/{item.id}/" not in self.client.get("/adjudicate/").content.decode()

        with self.assertRaisesMessage(PermissionDenied, "You labelled this answer"):
            services.gold_adjudicate(audit, claim, user=a, verdict="supported", reason="r", expected_version=0)
        assert not GoldLabel.objects.filter(source="adjudicated").exists()


def test_it_defines_the_verdict_sets_once_on_the_choices():
    assert Verdict.sets() == {
        "needs_evidence": ["supported", "contradicted"],
        "is_bad": ["contradicted", "unsupported"],
        "is_scored": ["supported", "contradicted", "unsupported"],
    }


class AuditFormTests(TestCase):
    def setUp(self):

        self.ds = make_dataset("d")
        make_answers(self.ds, 20, meta=lambda i: {"model": ["a", "b"][i % 2], "doc_type": "faq"})
        self.client.force_login(make_user("lead", "lead"))

    def post(self, **extra):
        data = {"dataset": self.ds.id, "size": 10, "allocation": "proportional", "min_per_stratum": 0, **extra}
        return self.client.post("/audits/new/", data, headers=HX)

    def test_it_refuses_an_unknown_meta_key_and_names_the_fields_there_are(self):
        r = self.post(strata="meta.modle")
        self.assertContains(r, "no answer in the population has metadata field &#x27;modle&#x27;")
        self.assertContains(r, "available: meta.doc_type, meta.model")
        ok = self.post(strata="meta.model")
        self.assertContains(ok, "meta.model=a")
        self.assertContains(ok, "Metadata fields to stratify by: <code>meta.doc_type</code>, <code>meta.model</code>.")

    def test_it_asks_for_the_failure_rate_only_under_neyman(self):
        self.assertContains(self.post(strata="meta.model", default_fail_rate=""), "meta.model=a")
        r = self.post(strata="meta.model", allocation="neyman", default_fail_rate="")
        self.assertContains(r, "Neyman allocation needs an expected failure rate.")
        page = self.client.get("/audits/new/").content.decode()
        label = page[page.index("Expected failure rate (Neyman)") :][:200]
        assert " *" not in label.split("<")[0]  # not marked required
