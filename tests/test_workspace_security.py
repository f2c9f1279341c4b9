"""The workspace is blind, private, CSRF-protected, escapes what it shows and costs a fixed number of queries."""

from django.db import connection
from django.test import Client, TestCase
from django.test.utils import CaptureQueriesContext

from annotations.models import Assignment, Label
from audit.models import JudgeVerdict
from tests.factories import (
    evidence_post,
    make_annotators,
    make_assigned_audit,
    make_judge_version,
    make_user,
    passage_of,
)

HX = {"HX-Request": "true"}
JUDGE_SECRET = "JUDGE-REASON-7f3a"
JUDGE_QUOTE = "JUDGE-EVIDENCE-91c2"
OTHER_NOTE = "OTHER-ANNOTATOR-NOTE-5d8e"


class AccessTests(TestCase):
    def setUp(self):
        self.ann, self.other = make_annotators()
        self.audit, self.mine = make_assigned_audit(self.ann, self.other)
        self.theirs = Assignment.objects.get(audit_answer=self.mine[0].audit_answer, annotator=self.other)
        self.claim = self.mine[0].audit_answer.answer.claims.first()
        self.client.force_login(self.ann)

    def test_it_returns_404_for_an_oversized_id_in_the_path(self):
        big, mine = "9" * 25, self.mine[0].pk
        for url in (f"/label/{mine}/claim/{big}/", f"/label/{big}/claim/{self.claim.pk}/"):
            self.assertEqual(self.client.post(url, {"verdict": "supported"}).status_code, 404, url)
        self.assertFalse(Label.objects.exists())

    def test_it_returns_404_for_another_annotators_assignment(self):
        t = self.theirs.pk
        self.assertEqual(self.client.get(f"/label/{t}/").status_code, 404)
        for url, data in [
            (f"/label/{t}/claim/{self.claim.pk}/", {"verdict": "supported"}),
            (f"/label/{t}/answer/", {"note": "x"}),
            (f"/label/{t}/submit/", {}),
            (f"/label/{t}/time/", {"seconds": 10}),
        ]:
            self.assertEqual(self.client.post(url, data, headers=HX).status_code, 404, url)
            self.assertEqual(self.client.get(url).status_code, 404, url)
        self.assertFalse(Label.objects.exists())
        mine = f"/label/{self.mine[0].pk}/claim/{self.claim.pk}/"
        self.assertEqual(self.client.get(mine).status_code, 405)  # one's own POST endpoint: wrong method
        self.theirs.refresh_from_db()
        self.assertEqual((self.theirs.active_seconds, self.theirs.note), (0, ""))

    def test_it_returns_404_for_an_audit_without_my_answers(self):
        stranger = make_user("stranger", "annotator")
        self.client.force_login(stranger)
        self.assertEqual(self.client.get(f"/label/queue/{self.audit.pk}/").status_code, 404)
        self.assertEqual(self.client.get(f"/label/{self.mine[0].pk}/").status_code, 404)
        self.assertEqual(self.client.get("/label/queue/999999/").status_code, 404)

    def test_it_forbids_people_without_the_annotator_role(self):
        self.client.force_login(make_user("lead", "lead"))
        self.assertEqual(self.client.get(f"/label/{self.mine[0].pk}/").status_code, 403)

    def test_it_refuses_an_htmx_post_without_the_csrf_token(self):
        client = Client(enforce_csrf_checks=True)
        client.force_login(self.ann)
        url = f"/label/{self.mine[0].pk}/claim/{self.claim.pk}/"
        self.assertEqual(client.post(url, {"verdict": "supported"}, headers=HX).status_code, 403)
        self.assertEqual(client.post(f"/label/{self.mine[0].pk}/time/", {"seconds": 5}).status_code, 403)
        self.assertFalse(Label.objects.exists())
        page = client.get(f"/label/{self.mine[0].pk}/")
        token = page.context["csrf_token"]
        self.assertContains(page, f'hx-headers=\'{{"x-csrftoken": "{token}"}}\'')
        r = client.post(url, {"verdict": "supported"}, headers={**HX, "X-CSRFToken": str(token)})
        self.assertEqual(r.status_code, 200)


class BlindnessTests(TestCase):
    def test_it_never_sends_judge_verdicts_or_the_other_annotators_labels(self):
        ann, other = make_annotators()
        audit, mine = make_assigned_audit(ann, other, n_answers=2)
        a = mine[0]
        claims = list(a.audit_answer.answer.claims.all())
        version = make_judge_version("judge-x", content_hash="h" * 64)
        for c in claims:
            JudgeVerdict.objects.create(
                claim=c,
                judge_version=version,
                raw_verdict="contradicted",
                verdict="contradicted",
                evidence=JUDGE_QUOTE,
                reason=JUDGE_SECRET,
                passage_external_id="passage 1",
            )
        theirs = Assignment.objects.get(audit_answer=a.audit_answer, annotator=other)
        p = passage_of(a)
        Label.objects.create(
            assignment=theirs,
            claim=claims[0],
            verdict="contradicted",
            note=OTHER_NOTE,
            evidence_passage=p,
            evidence_start=0,
            evidence_end=9,
            evidence_text=p.text[:9],
        )
        theirs.note = OTHER_NOTE
        theirs.save()
        client = Client()
        client.force_login(ann)
        responses = [
            client.get(f"/label/{a.pk}/"),
            client.get(f"/label/queue/{audit.pk}/"),
            client.get("/"),
            client.post(f"/label/{a.pk}/claim/{claims[0].pk}/", {"verdict": "supported"}, headers=HX),
            client.post(f"/label/{a.pk}/claim/{claims[0].pk}/", evidence_post(p, "Paris"), headers=HX),
            client.post(f"/label/{a.pk}/answer/", {"note": "mine"}, headers=HX),
            client.post(f"/label/{a.pk}/submit/", {}, headers=HX),
        ]
        for r in responses:
            html = r.content.decode()
            self.assertIn(r.status_code, (200, 422), html[:200])
            for secret in (JUDGE_SECRET, JUDGE_QUOTE, OTHER_NOTE, other.username, "judge-x"):
                self.assertNotIn(secret, html, f"{secret} leaked into {r.request['PATH_INFO']}")
        # Only the annotator's own evidence is marked: the other label's mark (0-9) is absent.
        self.assertNotIn(
            f'data-claims="{claims[0].pk}" title="Evidence for claim 1">{p.text[:9]}</mark>',
            responses[0].content.decode(),
        )


class EscapingTests(TestCase):
    def test_it_escapes_question_answer_passage_and_claim_text(self):
        ann = make_user("ann", "annotator")
        audit, mine = make_assigned_audit(ann, n_answers=1)
        answer = mine[0].audit_answer.answer
        answer.question = "<script>alert('q')</script>"
        answer.text = '<img src=x onerror="alert(1)"> rest'
        answer.save()
        answer.claims.update(text="<b>bold claim</b>")
        answer.passages.update(text="<script>alert('p')</script>", source="<i>src</i>")
        self.client.force_login(ann)
        r = self.client.get(f"/label/{mine[0].pk}/")
        html = r.content.decode()
        for raw in ("<script>alert", "<img src=x", "<b>bold", "<i>src"):
            self.assertNotIn(raw, html)
        self.assertIn("&lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt;", html)
        self.assertIn("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;", html)
        self.assertNotIn("style=", html)  # CSP: no inline styles
        self.assertNotIn("<script>", html.replace('<script src="', ""))  # no inline scripts of ours


class QueryCountTests(TestCase):
    def count(self, fn):
        with CaptureQueriesContext(connection) as ctx:
            r = fn()
        self.assertLess(r.status_code, 300, r.content[:300])
        return len(ctx)

    def test_it_keeps_page_and_save_queries_constant(self):
        ann = make_user("ann", "annotator")
        _, small = make_assigned_audit(ann, name="small", n_answers=1, n_claims=5, n_passages=3)
        _, big = make_assigned_audit(ann, name="big", n_answers=8, n_claims=40, n_passages=20)
        self.client.force_login(ann)
        pages, saves, evidence, queues = [], [], [], []
        for a in (small[0], big[0]):
            claims = list(a.audit_answer.answer.claims.order_by("position"))
            for c in claims:  # every claim labelled, so the page renders full rows
                Label.objects.create(assignment=a, claim=c, verdict="unsupported", note="n")
            Assignment.objects.filter(pk=a.pk).update(status="started")
            pages.append(self.count(lambda a=a: self.client.get(f"/label/{a.pk}/")))
            saves.append(
                self.count(
                    lambda a=a, c=claims[-1]: self.client.post(
                        f"/label/{a.pk}/claim/{c.pk}/", {"verdict": "supported"}, headers=HX
                    )
                )
            )
            evidence.append(
                self.count(
                    lambda a=a, c=claims[-1]: self.client.post(
                        f"/label/{a.pk}/claim/{c.pk}/", evidence_post(passage_of(a, 2), "Paris"), headers=HX
                    )
                )
            )
            queues.append(self.count(lambda a=a: self.client.get(f"/label/queue/{a.audit_answer.audit_id}/")))
        self.assertEqual(pages[0], pages[1])
        self.assertEqual(saves[0], saves[1])
        self.assertEqual(evidence[0], evidence[1])
        self.assertEqual(queues[0], queues[1])
        a = big[0]
        c = a.audit_answer.answer.claims.order_by("position").first()
        with self.assertNumQueries(pages[0]):
            self.client.get(f"/label/{a.pk}/")
        with self.assertNumQueries(saves[0]):
            self.client.post(f"/label/{a.pk}/claim/{c.pk}/", {"verdict": "contradicted"}, headers=HX)
        self.assertLessEqual(pages[0], 8)
        # session, user with roles, the assignment locked with its audit, the label with its claim, the
        # update, the history row: 6, plus the savepoint pair a TestCase wraps around the service's atomic
        self.assertEqual(saves[0], 8)

    def test_it_answers_a_refused_submit_with_its_rows_in_queries_constant_in_claims(self):
        ann = make_user("ann", "annotator")
        _, small = make_assigned_audit(ann, name="small", n_answers=1, n_claims=2, n_passages=2)
        _, big = make_assigned_audit(ann, name="big", n_answers=1, n_claims=40, n_passages=20)
        self.client.force_login(ann)
        counts = []
        for a in (small[0], big[0]):
            claims = list(a.audit_answer.answer.claims.all())
            for c in claims:  # supported without evidence: every claim is listed, and its row sent back
                Label.objects.create(assignment=a, claim=c, verdict="supported")
            Assignment.objects.filter(pk=a.pk).update(status="started")
            with CaptureQueriesContext(connection) as ctx:
                r = self.client.post(f"/label/{a.pk}/submit/", headers=HX)
            self.assertEqual(r.status_code, 422)
            self.assertEqual(r.content.decode().count('hx-swap-oob="true"'), len(claims))
            counts.append(len(ctx))
        self.assertEqual(counts[0], counts[1])

    def test_it_keeps_home_queries_constant(self):
        ann = make_user("ann", "annotator")
        make_assigned_audit(ann, name="w1", n_answers=2)
        self.client.force_login(ann)
        n = self.count(lambda: self.client.get("/"))
        make_assigned_audit(ann, name="w2", n_answers=6)
        make_assigned_audit(ann, name="w3", n_answers=4)
        with self.assertNumQueries(n):
            self.client.get("/")
