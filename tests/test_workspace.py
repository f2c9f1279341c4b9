"""The annotation workspace through the Django test client: saving, submitting, time, reopening."""

import re
import threading
from datetime import timedelta
from unittest import mock

from django.core import mail as django_mail
from django.db import connections
from django.test import TestCase, TransactionTestCase
from django.urls import reverse
from django.utils import timezone

from annotations.models import Assignment, Label
from annotations.workspace import services
from annotations.workspace.selectors import FLAG_NAMES, annotator_audits, claim_url_prefix
from audit.models import HistoryEvent, Passage, Verdict
from tests.factories import evidence_post, make_annotators, make_assigned_audit, make_user, passage_of

HX = {"HX-Request": "true"}


class WorkspaceTestCase(TestCase):
    def setUp(self):
        self.ann, self.other = make_annotators()
        self.audit, self.mine = make_assigned_audit(self.ann, self.other)
        self.a = self.mine[0]
        self.claims = list(self.a.audit_answer.answer.claims.order_by("position"))
        self.client.force_login(self.ann)

    def url(self, a=None, claim=None, what=""):
        a = a or self.a
        if claim is not None:
            return f"/label/{a.pk}/claim/{claim.pk}/"
        return f"/label/{a.pk}/{what}"

    def save(self, claim, data, a=None):
        return self.client.post(self.url(a, claim), data, headers=HX)

    def label_all(self, a=None, verdict="unsupported"):
        a = a or self.a
        for c in a.audit_answer.answer.claims.all():
            self.assertEqual(self.save(c, {"verdict": verdict}, a).status_code, 200)


class PageTests(WorkspaceTestCase):
    def test_it_shows_question_claims_passages_and_progress(self):
        r = self.client.get(self.url())
        self.assertContains(r, "answer 1 of 3")
        self.assertContains(r, '<progress max="3" value="0"')
        for c in self.claims:
            self.assertContains(r, f'id="claim-{c.pk}"')
            self.assertContains(r, f'<mark class="claim-span" data-claim="{c.pk}"')
        self.assertContains(r, 'data-passage="', count=3)
        self.assertContains(r, 'data-verdict=""', count=3)  # each row is rendered whole by the server:
        url = f'hx-post="/label/{self.a.pk}/claim/{self.claims[0].pk}/"'
        self.assertContains(r, url, count=2)  # the row's form (its buttons) and its note post to it
        self.assertContains(r, 'aria-pressed="false"', count=(4 + 3) * 3)  # verdicts and flags
        row = re.search(rf'<li id="claim-{self.claims[0].pk}".*?</li>', r.content.decode(), re.S).group(0)
        button = r'<button name="(\w+)" value="(\w*)"[^>]*>(?:<kbd>\w</kbd> )?([^<]+?)(?: <kbd>|</button>)'
        buttons = re.findall(button, row)
        verdicts = [(v.value, v.label) for v in Verdict]  # the row's labels are the enum's and the help's
        flags = [(f, name) for f, name, _, _ in FLAG_NAMES]
        self.assertEqual([(v, n) for k, v, n in buttons if k == "verdict" and v], verdicts)
        self.assertEqual([(k, n) for k, v, n in buttons if k != "verdict" and k != "evidence"], flags)
        self.assertContains(r, '<dialog id="shortcuts" aria-label="Keyboard shortcuts"></dialog>')  # filled when opened
        self.assertNotContains(r, "Undo the last change")
        self.assertContains(r, f'href="/label/{self.mine[1].pk}/" rel="next"')

    def test_it_loads_htmx_without_the_debug_script_that_would_replace_the_page_on_a_400(self):
        with self.settings(DEBUG=True):  # make demo runs with DEBUG on: "Nothing to undo" (400) blanked the page
            page = self.client.get(self.url()).content.decode()
        self.assertIn('src="/static/django_htmx/htmx-2.min.js"', page)
        self.assertNotIn("django-htmx.js", page)

    def test_it_answers_a_save_after_the_session_ended_with_401_and_saves_nothing(self):
        self.client.logout()
        r = self.save(self.claims[0], {"verdict": "supported"})
        self.assertEqual((r.status_code, r["Content-Type"]), (401, "text/plain; charset=utf-8"))
        self.assertIn("logged out", r.content.decode())
        self.assertFalse(Label.objects.filter(claim=self.claims[0]).exists())
        self.assertEqual(self.client.get(self.url()).status_code, 302)  # a page still goes to the login page

    def test_it_serves_the_shortcut_list_its_dialog_loads_to_annotators_only(self):
        with self.assertNumQueries(2):  # the session, the user with their roles
            r = self.client.get("/label/shortcuts/", headers={"HX-Request": "true"})
        self.assertContains(r, "Undo the last change")
        for _, name, hint, key in FLAG_NAMES:
            self.assertContains(r, f"<dt>{name} <kbd>{key}</kbd></dt><dd>{hint}</dd>", html=False)
        self.client.logout()
        self.assertEqual(self.client.get("/label/shortcuts/").status_code, 302)  # to the login page

    def test_it_builds_each_rows_url_as_the_save_route_reverses_it(self):
        for assignment_id, claim_id in ((7, 1234), (1234, 7), (10, 10)):
            url = reverse("workspace_label", args=[assignment_id, claim_id])
            self.assertEqual(f"{claim_url_prefix(assignment_id)}{claim_id}/", url)

    def test_it_lists_the_annotators_answers_in_the_queue(self):
        self.label_all()
        self.client.post(self.url(what="submit/"))
        r = self.client.get(f"/label/queue/{self.audit.pk}/")
        self.assertContains(r, "1 of 3 answers submitted")
        for a in self.mine:
            self.assertContains(r, f'href="/label/{a.pk}/"')
        self.assertContains(r, "3 / 3")
        self.assertContains(r, f'id="label-next" href="/label/{self.mine[1].pk}/"')

    def test_it_lists_audits_with_progress_on_home(self):
        self.label_all()
        self.client.post(self.url(what="submit/"))
        [row] = annotator_audits(self.ann)
        self.assertEqual(
            (row["audit"], row["total"], row["submitted"], row["next_assignment_id"]),
            (self.audit, 3, 1, self.mine[1].pk),
        )
        r = self.client.get("/")
        self.assertContains(r, "1 of 3 answers submitted")
        self.assertContains(r, f'href="/label/{self.mine[1].pk}/"')


class SaveTests(WorkspaceTestCase):
    def test_it_saves_a_verdict_and_returns_the_row(self):
        c = self.claims[0]
        r = self.save(c, {"verdict": "unsupported"})
        self.assertContains(r, f'id="claim-{c.pk}"')
        self.assertContains(r, 'data-verdict="unsupported"')
        self.assertNotContains(r, "<html")
        label = Label.objects.get(assignment=self.a, claim=c)
        self.assertEqual((label.verdict, label.version), ("unsupported", 1))
        self.a.refresh_from_db()
        self.assertEqual(self.a.status, Assignment.Status.STARTED)
        ev = HistoryEvent.objects.get(kind="label")
        self.assertEqual(
            (ev.action, ev.user, ev.claim, ev.old, ev.new),
            ("save", self.ann, c, {"verdict": ""}, {"verdict": "unsupported"}),
        )

    def test_it_is_idempotent_under_double_clicks(self):
        c = self.claims[0]
        for _ in range(2):
            self.assertEqual(self.save(c, {"verdict": "supported"}).status_code, 200)
        self.assertEqual(Label.objects.filter(assignment=self.a, claim=c).count(), 1)
        self.assertEqual(Label.objects.get(assignment=self.a, claim=c).version, 1)
        self.assertEqual(HistoryEvent.objects.filter(kind="label").count(), 1)

    def test_it_saves_only_the_field_sent(self):
        c = self.claims[0]
        self.save(c, {"verdict": "contradicted"})
        self.save(c, {"note": "  says 1999, passage says 2001 "})
        self.save(c, {"needs_context": "false"})  # a flag button posts the state it shows: the save turns it on
        self.save(c, {"not_atomic": "true"})  # and off (it was off: nothing changes)
        label = Label.objects.get(assignment=self.a, claim=c)
        self.assertEqual(
            (label.verdict, label.note, label.flag_needs_context, label.flag_not_atomic),
            ("contradicted", "says 1999, passage says 2001", True, False),
        )
        r = self.client.get(self.url())
        self.assertContains(r, "says 1999, passage says 2001</textarea>")
        self.assertContains(r, 'data-verdict="contradicted"')
        self.assertContains(r, 'name="needs_context" value="true" aria-pressed="true"')
        self.assertContains(r, 'name="not_atomic" value="false" aria-pressed="false"')
        self.assertEqual(label.version, 3)

    def test_it_refuses_a_flag_state_that_is_not_true_or_false(self):
        r = self.save(self.claims[0], {"not_atomic": "false", "needs_context": "on"})
        self.assertContains(r, "needs_context: must be true or false", status_code=400)  # the bad one named
        self.assertNotContains(r, "not_atomic:", status_code=400)
        self.assertFalse(Label.objects.filter(assignment=self.a).exists())

    def test_it_attaches_verified_evidence_and_marks_it_in_the_passage(self):
        c, p = self.claims[0], passage_of(self.a, 1)
        r = self.save(c, {"verdict": "supported", **evidence_post(p, "Paris is the capital of France")})
        label = Label.objects.get(assignment=self.a, claim=c)
        self.assertEqual((label.evidence_passage, label.evidence_text), (p, "Paris is the capital of France"))
        self.assertEqual(p.text[label.evidence_start : label.evidence_end], label.evidence_text)
        self.assertContains(r, f'<article class="passage" id="passage-{p.pk}" hx-swap-oob="true">')
        self.assertContains(r, f'<mark class="evidence" data-claims="{c.pk}"')
        page = self.client.get(self.url())
        self.assertContains(
            page,
            f'<mark class="evidence" data-claims="{c.pk}" title="Evidence for claim 1">'
            "Paris is the capital of France</mark>",
        )
        r = self.save(c, {"evidence": "clear"})
        self.assertIsNone(Label.objects.get(assignment=self.a, claim=c).evidence_passage_id)
        self.assertNotContains(r, '<mark class="evidence"')

    def test_it_marks_evidence_two_claims_share_with_both_and_shortens_a_long_quote(self):
        c0, c1, p = self.claims[0], self.claims[1], passage_of(self.a, 1)
        self.save(c0, {"verdict": "supported", **evidence_post(p, "Paris is the capital of France")})
        self.save(c1, {"verdict": "supported", **evidence_post(p, "Paris is the capital")})
        long = "x" * 450
        Label.objects.filter(assignment=self.a, claim=c1).update(evidence_text=long)  # as a long span would be
        page = self.client.get(self.url())
        self.assertContains(
            page, f'<mark class="evidence" data-claims="{c0.pk} {c1.pk}" title="Evidence for claim 1, 2">Paris is the'
        )
        self.assertContains(page, f'<mark class="evidence" data-claims="{c0.pk}" title="Evidence for claim 1">')
        self.assertContains(page, f"<blockquote>{'x' * 399}…</blockquote>")

    def test_it_refuses_evidence_that_does_not_match_the_passage(self):
        c, p = self.claims[0], passage_of(self.a)
        bad = {**evidence_post(p, "Paris"), "text": "Lyon!"}
        r = self.save(c, bad)
        self.assertContains(r, "does not match passage", status_code=400)
        self.assertContains(r, f'id="claim-{c.pk}"', status_code=400)
        foreign = Passage.objects.get(answer=self.mine[1].audit_answer.answer, position=0)
        r = self.save(c, evidence_post(foreign, "Paris"))
        self.assertContains(r, "no passage of this answer", status_code=400)
        r = self.save(c, {**evidence_post(p, "Paris"), "end": 10_000})
        self.assertEqual(r.status_code, 400)
        self.assertFalse(Label.objects.filter(evidence_passage__isnull=False).exists())

    def test_it_maps_browser_offsets_over_crlf_passages(self):
        p = passage_of(self.a)
        p.text = "Line one.\r\nParis is big.\r\nEnd."
        p.save()
        dom = p.text.replace("\r\n", "\n")
        start = dom.index("Paris is big.\nEnd")
        quote = "Paris is big.\nEnd"
        r = self.save(self.claims[0], {"passage": p.pk, "start": start, "end": start + len(quote), "text": quote})
        self.assertEqual(r.status_code, 200)
        label = Label.objects.get(assignment=self.a)
        self.assertEqual(p.text[label.evidence_start : label.evidence_end], "Paris is big.\r\nEnd")

    def test_it_shows_an_inline_message_when_evidence_is_missing(self):
        c = self.claims[0]
        r = self.save(c, {"verdict": "supported"})
        self.assertContains(r, "Evidence needed")
        r = self.save(c, {"note": "the passage is a table image"})
        self.assertNotContains(r, "Evidence needed")
        self.assertContains(r, "your note explains why")

    def test_it_rejects_unknown_verdicts_and_foreign_claims(self):
        self.assertEqual(self.save(self.claims[0], {"verdict": "maybe"}).status_code, 400)
        foreign = self.mine[1].audit_answer.answer.claims.first()
        self.assertEqual(self.save(foreign, {"verdict": "supported"}).status_code, 404)

    def test_it_saves_the_answer_level_fields(self):
        r = self.client.post(self.url(what="answer/"), {"field": "omission", "checked": "1"}, headers=HX)
        self.assertContains(r, 'id="answer-fields"')
        self.client.post(self.url(what="answer/"), {"note": "misses the 2024 change"}, headers=HX)
        self.a.refresh_from_db()
        self.assertEqual((self.a.omission, self.a.note), (True, "misses the 2024 change"))
        self.assertEqual(HistoryEvent.objects.filter(kind="assignment", action="answer_fields").count(), 2)

    def test_it_refuses_edits_in_a_closed_audit(self):
        self.audit.status = "closed"
        self.audit.save()
        r = self.save(self.claims[0], {"verdict": "supported"})
        self.assertContains(r, "audit is closed", status_code=409)
        self.assertFalse(Label.objects.exists())


class SubmitTests(WorkspaceTestCase):
    def submit(self, a=None, **data):
        return self.client.post(self.url(a, what="submit/"), data, headers=HX)

    def test_it_refuses_to_submit_with_unlabelled_claims(self):
        self.save(self.claims[0], {"verdict": "unsupported"})
        r = self.submit()
        self.assertContains(r, "Needs a verdict: <a", status_code=422)
        self.assertContains(r, f'data-goto="{self.claims[1].pk}"', status_code=422)
        self.a.refresh_from_db()
        self.assertEqual(self.a.status, Assignment.Status.STARTED)

    def test_it_needs_evidence_or_a_note_when_the_audit_requires_evidence(self):
        self.label_all(verdict="supported")
        r = self.submit()
        self.assertContains(r, "Needs evidence from a passage", status_code=422)
        for c in self.claims[1:]:
            self.save(c, {"note": "no passage quotes it verbatim"})
        self.save(self.claims[0], evidence_post(passage_of(self.a), "Paris is the capital"))
        self.assertEqual(self.submit().status_code, 200)

    def test_it_lets_evidence_be_optional(self):
        self.audit.evidence_required = False
        self.audit.save()
        self.label_all(verdict="contradicted")
        self.assertEqual(self.submit().status_code, 200)

    def test_it_locks_calls_gold_and_opens_the_next_answer(self):
        self.label_all()
        with mock.patch("annotations.workspace.services.gold_on_submit") as gold:
            r = self.submit(seconds="7")
        gold.assert_called_once_with(self.a.audit_answer)
        self.assertEqual(r["HX-Redirect"], f"/label/{self.mine[1].pk}/")
        self.a.refresh_from_db()
        self.assertEqual((self.a.status, self.a.active_seconds), (Assignment.Status.SUBMITTED, 7))
        self.assertIsNotNone(self.a.submitted_at)
        r = self.save(self.claims[0], {"verdict": "supported"})
        self.assertContains(r, "submitted and locked", status_code=409)
        self.assertEqual(Label.objects.get(assignment=self.a, claim=self.claims[0]).verdict, "unsupported")
        self.assertEqual(self.client.post(self.url(what="time/"), {"seconds": 30}).status_code, 204)
        self.a.refresh_from_db()
        self.assertEqual(self.a.active_seconds, 7)
        self.assertContains(self.client.get(self.url()), "read-only")

    def test_it_goes_to_the_queue_after_the_last_answer(self):
        for a in self.mine:
            self.label_all(a)
            r = self.submit(a)
        self.assertEqual(r["HX-Redirect"], f"/label/queue/{self.audit.pk}/")
        r = self.client.post(self.url(self.mine[0], what="submit/"))  # a plain form post
        self.assertRedirects(r, f"/label/{self.mine[0].pk}/")

    def test_it_lets_a_lead_reopen_with_a_reason(self):
        self.ann.email = "ann@example.org"
        self.ann.save()
        self.label_all()
        self.submit()
        lead = make_user("lead", "lead")
        self.assertEqual(self.client.post(self.url(what="reopen/"), {"reason": "x"}).status_code, 403)
        self.client.force_login(lead)
        self.client.post(self.url(what="reopen/"), {"reason": ""})
        self.a.refresh_from_db()
        self.assertEqual(self.a.status, Assignment.Status.SUBMITTED)
        with self.captureOnCommitCallbacks(execute=True):  # the email goes once the reopen commits
            r = self.client.post(self.url(what="reopen/"), {"reason": "claim 2 mislabelled", "next": "/audits/"})
        self.assertRedirects(r, "/audits/", fetch_redirect_response=False)
        self.a.refresh_from_db()
        self.assertEqual((self.a.status, self.a.submitted_at), (Assignment.Status.STARTED, None))
        ev = HistoryEvent.objects.get(action="reopen")
        self.assertEqual((ev.user, ev.reason), (lead, "claim 2 mislabelled"))
        self.client.force_login(self.ann)
        self.assertEqual(self.save(self.claims[0], {"verdict": "supported"}).status_code, 200)
        self.assertContains(self.client.get(self.url()), "Reopened by the audit lead: claim 2 mislabelled")
        [mail] = [m for m in django_mail.outbox if "reopened" in m.subject]
        self.assertEqual(mail.to, [self.ann.email])
        self.assertIn("Why: claim 2 mislabelled", mail.body)
        self.assertIn(f"/label/{self.a.pk}/", mail.body)
        queue = self.client.get(f"/label/queue/{self.audit.pk}/").content.decode()
        self.assertIn('title="claim 2 mislabelled">reopened</span>', queue)

    def test_it_reloads_a_page_whose_answer_was_submitted_elsewhere(self):
        self.label_all()
        self.submit()  # in another tab
        for r in (
            self.save(self.claims[0], {"verdict": "supported"}),
            self.client.post(self.url(what="answer/"), {"note": "x"}, headers=HX),
            self.client.post(self.url(what="undo/"), headers=HX),
            self.submit(),
        ):
            self.assertEqual((r.status_code, r.get("HX-Refresh")), (409, "true"))
        r = self.save(self.claims[0], {"verdict": "bogus"})  # invalid, not locked: no reload
        self.assertNotIn("HX-Refresh", r)

    def test_it_sends_the_submit_list_again_recomputed_with_a_save_while_the_page_shows_it(self):
        self.save(self.claims[0], {"verdict": "unsupported"})
        r = self.submit()
        self.assertContains(r, 'name="problems_shown"', status_code=422)
        r = self.save(self.claims[1], {"verdict": "unsupported", "problems_shown": "1"})
        html = r.content.decode()
        self.assertIn('id="submit-box"', html)
        self.assertIn('hx-swap-oob="true"', html.split('id="submit-box"', 1)[1].split(">", 1)[0])
        listed = set(map(int, re.findall(r'data-goto="(\d+)"', html)))
        self.assertEqual(listed, {c.pk for c in self.claims[2:]})  # claims 1 and 2 have their verdicts now
        self.assertNotIn("submit-box", self.save(self.claims[2], {"verdict": "unsupported"}).content.decode())

    def test_it_sends_the_submit_list_again_recomputed_with_an_undo_while_the_page_shows_it(self):
        self.save(self.claims[0], {"verdict": "unsupported"})
        self.assertContains(self.submit(), 'name="problems_shown"', status_code=422)
        r = self.client.post(self.url(what="undo/"), {"problems_shown": "1"}, headers=HX)  # claim 1 loses its verdict
        html = r.content.decode()
        self.assertIn('hx-swap-oob="true"', html.split('id="submit-box"', 1)[1].split(">", 1)[0])
        self.assertEqual(set(map(int, re.findall(r'data-goto="(\d+)"', html))), {c.pk for c in self.claims})
        self.save(self.claims[0], {"verdict": "unsupported"})
        self.assertNotIn("submit-box", self.client.post(self.url(what="undo/"), headers=HX).content.decode())


class TimeTests(WorkspaceTestCase):
    def test_it_adds_capped_active_seconds(self):
        Assignment.objects.filter(pk=self.a.pk).update(started_at=timezone.now() - timedelta(minutes=10))
        self.client.post(self.url(what="time/"), {"seconds": 15})
        self.client.post(self.url(what="time/"), {"seconds": 5000})
        self.client.post(self.url(what="time/"), {"seconds": "junk"})
        self.a.refresh_from_db()
        self.assertEqual(self.a.active_seconds, 15 + services.MAX_TIME_INCREMENT)
        self.assertEqual(self.a.status, Assignment.Status.STARTED)

    def test_it_bounds_time_by_the_wall_clock(self):
        for _ in range(10):  # 10 x 120 s claimed within a second of starting
            self.client.post(self.url(what="time/"), {"seconds": 120})
        self.a.refresh_from_db()
        self.assertLessEqual(self.a.active_seconds, 2 * services.MAX_TIME_INCREMENT + 1)


class ConcurrencyTests(TransactionTestCase):
    def test_it_keeps_one_label_when_two_tabs_save_at_once(self):
        ann, other = make_annotators()
        _, mine = make_assigned_audit(ann, other, n_answers=1)
        a = Assignment.objects.select_related("audit_answer__audit", "audit_answer__answer").get(pk=mine[0].pk)
        claim = a.audit_answer.answer.claims.first()
        barrier, errors = threading.Barrier(6), []

        def tab(i):
            try:
                barrier.wait()
                services.claim_label_save(a, claim, user=ann, verdict="supported" if i % 2 else "unsupported")
            except Exception as e:
                errors.append(e)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=tab, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        label = Label.objects.get(assignment=a, claim=claim)
        events = HistoryEvent.objects.filter(kind="label").count()
        self.assertEqual(label.version, events)  # every recorded change bumped the version exactly once
        self.assertGreaterEqual(events, 1)
