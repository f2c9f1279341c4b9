from django.core.exceptions import PermissionDenied
from django.db import connection
from django.template.loader import render_to_string
from django.test import RequestFactory, TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from annotations.adjudication import services
from annotations.models import Assignment, GoldLabel, Label
from audit.models import Audit, AuditAnswer, Claim, HistoryEvent
from tests.factories import judge_audit, make_gold, make_labelled_audit, make_user


class GoldOnSubmitTests(TestCase):
    def setUp(self):
        self.a, self.b = make_user("ann1", "annotator"), make_user("ann2", "annotator")

    def test_it_makes_agreed_gold_with_evidence_and_moves_the_audit_to_adjudication(self):
        audit = make_labelled_audit(self.a, self.b)
        make_gold(audit)
        gold = GoldLabel.objects.filter(audit=audit)
        self.assertEqual(gold.count(), 4)  # 2 answers x (3 claims - 1 disputed)
        self.assertEqual(set(gold.values_list("source", flat=True)), {"agreed"})
        self.assertFalse(gold.filter(claim__position=0).exists())
        one = gold.get(claim__answer__external_id="2026-W48-ans0", claim__position=1)
        self.assertEqual((one.verdict, one.evidence_text), ("supported", "Paris"))
        self.assertIsNotNone(one.evidence_passage_id)
        audit.refresh_from_db()
        self.assertEqual(audit.status, "adjudication")
        self.assertEqual(HistoryEvent.objects.filter(audit=audit, kind="gold", action="agreed").count(), 4)
        self.assertEqual(HistoryEvent.objects.filter(audit=audit, kind="audit", action="status").count(), 1)

    def test_it_takes_b_evidence_when_a_gave_none(self):
        audit = make_labelled_audit(self.a, self.b, evidence_slots="B", verdicts=lambda i, p, s: "supported")
        make_gold(audit)
        self.assertEqual(set(GoldLabel.objects.filter(audit=audit).values_list("evidence_text", flat=True)), {"Paris"})

    def test_it_is_idempotent(self):
        audit = make_labelled_audit(self.a, self.b)
        make_gold(audit)
        before = (list(GoldLabel.objects.values_list("id", "version")), HistoryEvent.objects.count())
        make_gold(audit)
        self.assertEqual((list(GoldLabel.objects.values_list("id", "version")), HistoryEvent.objects.count()), before)

    def test_it_waits_for_both_submissions(self):
        audit = make_labelled_audit(self.a, self.b, submitted=False)
        Assignment.objects.filter(slot="A").update(status="submitted")
        make_gold(audit)
        self.assertFalse(GoldLabel.objects.exists())
        audit.refresh_from_db()
        self.assertEqual(audit.status, "labelling")

    def test_it_recomputes_agreed_gold_but_never_overwrites_adjudicated_gold(self):
        adj = make_user("adj", "adjudicator")
        audit = make_labelled_audit(self.a, self.b, n_answers=1)
        make_gold(audit)
        item = AuditAnswer.objects.get(audit=audit)
        c0, c1 = Claim.objects.filter(answer=item.answer).order_by("position")[:2]
        services.gold_adjudicate(audit, c0, user=adj, verdict="unsupported", reason="B is right", expected_version=0)
        # After a reopen: B now agrees with A on claim 0, and A changed claim 1 so they disagree.
        Label.objects.filter(claim=c0, assignment__slot="B").update(verdict="supported")
        Label.objects.filter(claim=c1, assignment__slot="A").update(verdict="contradicted")
        services.gold_on_submit(item)
        self.assertEqual(GoldLabel.objects.get(claim=c0).verdict, "unsupported")  # adjudicated stands
        self.assertFalse(GoldLabel.objects.filter(claim=c1).exists())  # back to the queue
        actions = list(HistoryEvent.objects.filter(claim__in=[c0, c1]).values_list("action", flat=True))
        self.assertIn("agreement_kept_adjudicated", actions)
        self.assertIn("agreement_withdrawn", actions)
        n = HistoryEvent.objects.count()
        services.gold_on_submit(item)
        self.assertEqual(HistoryEvent.objects.count(), n)

    def test_it_refuses_changes_to_a_closed_audit(self):
        audit = make_labelled_audit(self.a, self.b, verdicts=lambda i, p, s: "supported")
        make_gold(audit)
        services.audit_close(audit, make_user("lead", "lead"))
        with self.assertRaises(services.AuditClosed):
            services.gold_on_submit(AuditAnswer.objects.filter(audit=audit).first())


class AdjudicationServiceTests(TestCase):
    def setUp(self):
        self.a, self.b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj, self.adj2 = make_user("adj", "adjudicator"), make_user("adj2", "adjudicator")
        self.lead = make_user("lead", "lead")
        self.audit = make_labelled_audit(self.a, self.b, n_answers=1)
        make_gold(self.audit)
        self.claim = Claim.objects.get(position=0)

    def save(self, user=None, version=0, **kw):
        args = {"verdict": "unsupported", "reason": "No passage says so.", "expected_version": version, **kw}
        return services.gold_adjudicate(self.audit, self.claim, user=user or self.adj, **args)

    def test_it_refuses_a_stale_save_from_a_second_adjudicator(self):
        first = self.save(self.adj, 0)
        with self.assertRaises(services.StaleGold) as ctx:
            self.save(self.adj2, 0, verdict="supported", evidence="a")
        self.assertIn("someone else changed the gold", str(ctx.exception))
        self.assertEqual(ctx.exception.current.verdict, "unsupported")
        gold = GoldLabel.objects.get(claim=self.claim)
        self.assertEqual((gold.verdict, gold.adjudicator, gold.version), ("unsupported", self.adj, 1))
        second = self.save(self.adj2, first.version, verdict="supported", evidence="a")
        self.assertEqual((second.verdict, second.version, second.evidence_text), ("supported", 2, "Paris"))

    def test_it_records_every_gold_change_with_old_new_and_reason(self):
        self.save(self.adj, 0)
        self.save(self.adj2, 1, verdict="supported", evidence="a", reason="A's span entails it")
        events = list(HistoryEvent.objects.filter(claim=self.claim, kind="gold").order_by("id"))
        self.assertEqual([(e.action, e.user) for e in events], [("adjudicated", self.adj), ("adjudicated", self.adj2)])
        self.assertIsNone(events[0].old)
        self.assertEqual(events[1].old["verdict"], "unsupported")
        self.assertEqual(events[1].new["verdict"], "supported")
        self.assertEqual(events[1].reason, "A's span entails it")

    def test_it_requires_a_reason_and_a_known_verdict(self):
        with self.assertRaisesMessage(services.AdjudicationError, "A reason is required"):
            self.save(reason="  ")
        with self.assertRaisesMessage(services.AdjudicationError, "Unknown verdict"):
            self.save(verdict="maybe")

    def test_it_takes_new_evidence_cut_from_the_passage(self):
        passage = self.claim.answer.passages.get(position=1)
        gold = self.save(verdict="contradicted", evidence="new", passage=str(passage.id), start="0", end="9")
        self.assertEqual((gold.evidence_passage, gold.evidence_text), (passage, passage.text[:9]))
        with self.assertRaisesMessage(services.AdjudicationError, "outside passage"):
            self.save(version=1, verdict="supported", evidence="new", passage=str(passage.id), start="5", end="9999")
        with self.assertRaisesMessage(services.AdjudicationError, "gave no evidence"):
            self.save(version=1, verdict="supported", evidence="b")  # B labelled it unsupported, no span

    def test_it_refuses_an_adjudicator_who_labelled_the_answer(self):
        self.a.groups.add(*self.adj.groups.all())
        self.a = type(self.a).objects.get(pk=self.a.pk)
        with self.assertRaises(PermissionDenied):
            self.save(self.a)
        with override_settings(ADJUDICATOR_MAY_ADJUDICATE_OWN=True):
            self.assertEqual(self.save(self.a).adjudicator, self.a)

    def test_it_closes_only_with_full_gold_and_freezes(self):
        with self.assertRaisesMessage(services.AdjudicationError, "1 claim still has no gold label"):
            services.audit_close(self.audit, self.lead)
        with self.assertRaises(PermissionDenied):
            services.audit_close(self.audit, self.adj)
        self.save()
        services.audit_close(self.audit, self.lead)
        self.audit.refresh_from_db()
        self.assertEqual(self.audit.status, "closed")
        self.assertIsNotNone(self.audit.closed_at)
        with self.assertRaises(services.AuditClosed):
            self.save(version=1, verdict="supported")
        self.assertEqual(GoldLabel.objects.get(claim=self.claim).verdict, "unsupported")

    def test_it_reopens_only_for_a_lead_with_a_reason(self):
        self.save()
        services.audit_close(self.audit, self.lead)
        with self.assertRaises(PermissionDenied):
            services.audit_reopen(self.audit, self.adj, "why not")
        with self.assertRaisesMessage(services.AdjudicationError, "reason is required"):
            services.audit_reopen(self.audit, self.lead, "")
        services.audit_reopen(self.audit, self.lead, "Claim 1 was mislabelled")
        self.audit.refresh_from_db()
        self.assertEqual(self.audit.status, "adjudication")
        event = HistoryEvent.objects.filter(audit=self.audit, kind="audit").last()
        self.assertEqual((event.action, event.user, event.reason), ("reopened", self.lead, "Claim 1 was mislabelled"))
        self.assertEqual(self.save(version=1, verdict="supported").version, 2)
        self.assertTrue(HistoryEvent.objects.filter(audit=self.audit, action="closed", user=self.lead).exists())


class AdjudicationViewTests(TestCase):
    def setUp(self):
        self.a, self.b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj, self.lead = make_user("adj", "adjudicator"), make_user("lead", "lead")
        self.audit = make_labelled_audit(self.a, self.b, n_answers=2)
        make_gold(self.audit)
        self.item = AuditAnswer.objects.filter(audit=self.audit).order_by("position").first()
        self.claim = Claim.objects.get(answer=self.item.answer, position=0)
        self.client.force_login(self.adj)

    def url(self, item=None):
        return f"/adjudicate/{self.audit.id}/answers/{(item or self.item).id}/"

    def save_url(self, claim=None):
        return f"{self.url()}claims/{(claim or self.claim).id}/"

    def post(self, **data):
        return self.client.post(
            self.save_url(),
            {"verdict": "unsupported", "evidence": "none", "version": "0", "reason": "B is right", **data},
            headers={"HX-Request": "true"},
        )

    def test_it_lists_only_disputed_claims_in_the_queue(self):
        Label.objects.filter(claim__position=2, assignment__slot="A").update(verdict="contradicted")
        make_gold(self.audit)
        r = self.client.get("/adjudicate/")
        body = r.content.decode()
        self.assertEqual(body.count("Claim number 0 says"), 2)  # claim 0 of both answers
        self.assertEqual(body.count("Claim number 2 says"), 2)
        self.assertNotIn("Claim number 1 says", body)  # agreed everywhere
        self.assertContains(r, "<strong>4</strong> disputed claims, <strong>0</strong> resolved", html=False)
        self.assertContains(r, "A")
        claim = Claim.objects.get(answer=self.audit.items.order_by("position")[0].answer, position=2)
        link = rf'<a href="/adjudicate/{self.audit.id}/answers/\d+/\?claim={claim.id}">Claim number 2 says'
        self.assertRegex(body, link)  # each disputed claim opens the adjudication page at that claim

    def test_it_lists_agreed_claims_the_judge_disputes_separately(self):
        judge_audit(self.audit, lambda c: "contradicted" if c.position == 1 else "supported")
        r = self.client.get("/adjudicate/")
        self.assertContains(r, "Judge-error review: annotators agree, the judge differs (2)")
        self.assertContains(r, "Claim number 1 says", count=2)

    def test_it_hides_answers_the_adjudicator_labelled(self):
        self.a.groups.add(*self.adj.groups.all())
        self.client.force_login(self.a)
        r = self.client.get("/adjudicate/")
        self.assertNotContains(r, "Claim number 0 says")
        self.assertContains(r, "2 answers you labelled are left to other adjudicators")
        self.assertEqual(self.client.get(self.url()).status_code, 404)
        self.assertEqual(self.post().status_code, 404)
        with override_settings(ADJUDICATOR_MAY_ADJUDICATE_OWN=True):
            self.assertEqual(self.client.get(self.url()).status_code, 200)

    def test_it_shows_both_labels_named_and_the_judge(self):
        judge_audit(self.audit, lambda c: "supported")
        r = self.client.get(self.url())
        self.assertContains(r, "ann1")
        self.assertContains(r, "ann2")
        self.assertContains(r, 'class="evidence ev-a"')  # A's evidence highlighted in its passage
        self.assertContains(r, "evidence verified")
        self.assertContains(r, f'id="claim-block-{self.claim.id}"')

    def test_it_saves_gold_and_rerenders_the_claim_block(self):
        r = self.post()
        self.assertEqual(r.status_code, 200)
        self.assertContains(r, "Saved gold (version 1)")
        self.assertNotContains(r, "<html")
        gold = GoldLabel.objects.get(claim=self.claim)
        self.assertEqual((gold.source, gold.adjudicator, gold.reason), ("adjudicated", self.adj, "B is right"))

    def test_it_refuses_a_stale_save_with_409_and_the_current_value(self):
        self.post()
        other = make_user("adj2", "adjudicator")
        self.client.force_login(other)
        r = self.post(verdict="supported", evidence="a", reason="A is right")
        self.assertEqual(r.status_code, 409)
        self.assertContains(r, "someone else changed the gold", status_code=409)
        self.assertContains(r, 'name="version" value="1"', status_code=409)
        self.assertContains(r, "Reason: B is right", status_code=409)
        self.assertEqual(GoldLabel.objects.get(claim=self.claim).verdict, "unsupported")

    def test_it_answers_400_without_a_reason(self):
        r = self.post(reason="")
        self.assertContains(r, "A reason is required", status_code=400)
        self.assertFalse(GoldLabel.objects.filter(claim=self.claim).exists())

    def test_it_forbids_annotators_and_leads_to_adjudicate(self):
        for user in (self.b, self.lead):
            self.client.force_login(user)
            self.assertEqual(self.client.get("/adjudicate/").status_code, 403)
            self.assertEqual(self.client.get(self.url()).status_code, 403)
            self.assertEqual(self.post().status_code, 403)
        self.assertFalse(GoldLabel.objects.filter(claim=self.claim).exists())

    def test_it_shows_history_to_leads_only(self):
        self.post()
        self.assertEqual(self.client.get(f"{self.url()}history/").status_code, 403)
        self.client.force_login(self.lead)
        r = self.client.get(f"{self.url()}history/")
        self.assertContains(r, "adjudicated")
        self.assertContains(r, "B is right")
        self.assertContains(r, "agreed")

    def test_it_closes_and_reopens_from_the_audit_page_controls(self):
        self.client.force_login(self.lead)
        r = self.client.post(f"/adjudicate/{self.audit.id}/close/", {"next": "/audits/"})
        self.assertRedirects(r, "/audits/", fetch_redirect_response=False)
        self.audit.refresh_from_db()
        self.assertEqual(self.audit.status, "adjudication")  # refused: 2 claims without gold
        for claim in Claim.objects.filter(position=0):
            services.gold_adjudicate(
                self.audit, claim, user=self.adj, verdict="supported", reason="ok", expected_version=0
            )
        self.client.post(f"/adjudicate/{self.audit.id}/close/", {"next": "https://evil.example/"})
        self.audit.refresh_from_db()
        self.assertEqual(self.audit.status, "closed")
        self.client.force_login(self.adj)
        self.assertEqual(self.post(version="1").status_code, 409)
        self.assertEqual(self.client.post(f"/adjudicate/{self.audit.id}/reopen/", {"reason": "x"}).status_code, 403)
        self.client.force_login(self.lead)
        self.client.post(f"/adjudicate/{self.audit.id}/reopen/", {"reason": ""})
        self.assertEqual(Audit.objects.get(pk=self.audit.pk).status, "closed")
        self.client.post(f"/adjudicate/{self.audit.id}/reopen/", {"reason": "recheck claim 1"})
        self.assertEqual(Audit.objects.get(pk=self.audit.pk).status, "adjudication")
        history = self.client.get(f"{self.url()}history/")  # the audit's own events, with the reason
        self.assertContains(history, "Audit: closed")
        self.assertContains(history, "Audit: reopened")
        self.assertContains(history, "recheck claim 1")

    def test_it_renders_the_audit_actions_include(self):
        request = RequestFactory().get("/audits/1/")
        request.user = self.lead
        html = render_to_string(
            "adjudication/_audit_actions.html", {"audit": self.audit, "is_lead": True}, request=request
        )
        self.assertIn("4 of 6 claims have gold; 2 still missing", html)
        self.assertIn(f"/adjudicate/export/{self.audit.id}/", html)
        self.assertIn("Close audit", html)
        self.assertIn("provisional", html)
        self.assertIn(f"/adjudicate/{self.audit.id}/answers/{self.item.id}/history/", html)

    def test_it_says_whether_missing_gold_waits_for_adjudication_or_for_labels(self):
        """ "2 still missing" did not say whether the lead should chase the adjudicators or the annotators."""
        request = RequestFactory().get("/audits/1/")
        request.user = self.lead

        def html():
            ctx = {"audit": self.audit, "is_lead": True}
            return render_to_string("adjudication/_audit_actions.html", ctx, request=request)

        self.assertIn("2 still missing: 2 disputed, waiting for adjudication.", html())
        self.assertIn("Closing needs gold on every claim (2 missing: 2 disputed).", html())
        other = AuditAnswer.objects.filter(audit=self.audit).exclude(pk=self.item.pk).get()
        GoldLabel.objects.filter(audit=self.audit, claim__answer=other.answer).delete()
        Assignment.objects.filter(audit_answer=other, slot="B").update(status="started")
        n = Claim.objects.filter(answer=other.answer).count()
        waiting = f"{n} waiting for both annotators' labels"
        self.assertIn(f"{1 + n} still missing: {waiting}; 1 disputed, waiting for adjudication.", html())
        Assignment.objects.filter(audit_answer__audit=self.audit).delete()  # as a draft audit, not assigned yet
        GoldLabel.objects.filter(audit=self.audit).delete()
        Audit.objects.filter(pk=self.audit.pk).update(status="draft")
        self.audit.refresh_from_db()
        self.assertIn("6 still missing: 6 not assigned to annotators yet.", html())  # it said "6 disputed"


class QueryCountTests(TestCase):
    """Pages and the save endpoint run a fixed number of queries whatever the number of claims."""

    def setUp(self):
        self.a, self.b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.adj = make_user("adj", "adjudicator")
        self.client.force_login(self.adj)

    def counts(self, url_of, **post):
        out = []
        for n_claims, name in ((3, "small"), (25, "big")):
            audit = make_labelled_audit(
                self.a,
                self.b,
                n_answers=2 if name == "small" else 6,
                n_claims=n_claims,
                name=name,
                verdicts=lambda i, p, s: "unsupported" if s == "B" and p % 2 == 0 else "supported",
            )
            make_gold(audit)
            judge_audit(audit, lambda c: "contradicted", content_hash=name * 8)
            url = url_of(audit)
            call = (lambda u=url: self.client.post(u, post)) if post else (lambda u=url: self.client.get(u))
            call()  # warm the per-user role cache shape the same way for both sizes
            with CaptureQueriesContext(connection) as ctx:
                self.assertIn(call().status_code, (200, 409))
            out.append(len(ctx))
        self.assertEqual(out[0], out[1])
        return out[0]

    def first(self, audit):
        item = AuditAnswer.objects.filter(audit=audit).order_by("position").first()
        return item, Claim.objects.get(answer=item.answer, position=0)

    def test_it_keeps_queue_queries_constant(self):
        n = self.counts(lambda audit: "/adjudicate/")
        with self.assertNumQueries(n):
            self.client.get("/adjudicate/")

    def test_it_keeps_adjudication_view_queries_constant(self):
        def url(audit):
            item, _ = self.first(audit)
            return f"/adjudicate/{audit.id}/answers/{item.id}/"

        n = self.counts(url)
        # +1: assignments on the same answer in other audits; +5: the next/previous answer links (the audit's
        # assignments, the user's assignments, its labels, its claims (those without a label are disputes too),
        # its gold), whatever the number of answers; +1: the audit's guidelines (with whether this adjudicator has
        # read them)
        self.assertEqual(n, 16)

    def test_it_keeps_save_queries_constant(self):
        def url(audit):
            item, claim = self.first(audit)
            return f"/adjudicate/{audit.id}/answers/{item.id}/claims/{claim.id}/"

        n = self.counts(url, verdict="unsupported", evidence="none", reason="because", version="0")
        self.assertEqual(n, 22)  # +2: that check, in the view and in the service; +1: the labels the gold rests on

    def test_it_keeps_history_page_queries_constant(self):
        lead = make_user("lead", "lead")
        self.client.force_login(lead)
        audit = make_labelled_audit(self.a, self.b, n_answers=1, n_claims=3)
        make_gold(audit)
        item = AuditAnswer.objects.get(audit=audit)
        url = f"/adjudicate/{audit.id}/answers/{item.id}/history/"
        with self.assertNumQueries(4):  # session, user with roles, item, events
            self.client.get(url)
        for claim in Claim.objects.filter(answer=item.answer):
            services.gold_adjudicate(
                audit,
                claim,
                user=self.adj,
                verdict="unsupported",
                reason="r",
                expected_version=GoldLabel.objects.filter(claim=claim).count(),
            )
        with self.assertNumQueries(4):
            self.assertContains(self.client.get(url), "Gold label: adjudicated", count=3)
