"""People management by leads: create with a one-time set-password link, roles, deactivation, the audit
trail of every change, the read-only admin for staff leads, constant query counts."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.db import connection
from django.test import Client, TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from annotations.models import Assignment, Label
from audit.models import HistoryEvent
from claimaudit.people.selectors import open_q, people, person
from claimaudit.people.services import person_deactivate
from tests.factories import make_answer, make_audit, make_labelled_audit, make_user

User = get_user_model()
STRONG = "tide-cobalt-river-42"


class RefusingMailer(BaseEmailBackend):
    def send_messages(self, messages):
        raise ConnectionRefusedError("no mail server")


def link_in(html):
    return re.search(r'value="(http://testserver/welcome/[^"]+)"', html).group(1)


class CreateAndFirstLoginTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)

    def create(self, **data):
        return self.client.post("/people/", {"username": "nina", "email": "nina@example.org", **data})

    @override_settings(EMAIL_ENABLED=True)
    def test_it_creates_a_person_whose_one_time_link_leads_to_first_login(self):
        r = self.create(roles=["annotator"])
        self.assertEqual(r.status_code, 200)
        link = link_in(r.content.decode())
        nina = User.objects.get(username="nina")
        self.assertFalse(nina.has_usable_password())
        self.assertEqual(set(nina.groups.values_list("name", flat=True)), {"annotators"})
        self.assertEqual(len(mail.outbox), 1)
        self.assertEqual(mail.outbox[0].to, ["nina@example.org"])
        self.assertIn(link, mail.outbox[0].body)

        newcomer = Client()
        r = newcomer.get(link, follow=True)
        self.assertContains(r, "Choose your password")
        form_url = r.redirect_chain[-1][0]
        r = newcomer.post(form_url, {"new_password1": "nina12", "new_password2": "nina12"})
        self.assertContains(r, "This password is too short")
        r = newcomer.post(form_url, {"new_password1": STRONG, "new_password2": STRONG})
        self.assertRedirects(r, "/", fetch_redirect_response=False)
        self.assertEqual(newcomer.get("/").context["user"].username, "nina")  # logged in

        self.assertContains(Client().get(link, follow=True), "This link is not valid")  # one time only
        r = Client().post("/login/", {"username": "nina", "password": STRONG})
        self.assertEqual(r.status_code, 302)
        actions = list(HistoryEvent.objects.filter(person=nina).values_list("action", "user__username"))
        self.assertEqual(actions, [("created", "lead"), ("link_issued", "lead"), ("password_set", "nina")])
        self.assertTrue(HistoryEvent.objects.filter(person=nina, audit__isnull=True).exists())
        self.assertNotIn(link.split("/")[-2], str(HistoryEvent.objects.filter(person=nina).values_list("new")))

    @override_settings(PASSWORD_RESET_TIMEOUT=7200)
    def test_it_says_when_the_link_expires(self):
        """It said "expires after a few days", whatever PASSWORD_RESET_TIMEOUT is."""
        r = self.create()
        self.assertContains(r, "expires in 2\xa0hours, on ")
        self.assertNotContains(r, "a few days")

    def test_it_shows_the_link_and_sends_nothing_without_mail(self):
        r = self.create()
        self.assertContains(r, "Nothing was mailed")
        self.assertEqual(len(mail.outbox), 0)
        self.assertTrue(link_in(r.content.decode()))

    @override_settings(EMAIL_ENABLED=True, MAILERS={"default": {"BACKEND": "tests.test_people.RefusingMailer"}})
    def test_it_still_shows_the_link_when_mail_fails(self):
        r = self.create()
        self.assertContains(r, "Nothing was mailed")
        self.assertTrue(link_in(r.content.decode()))

    def test_it_refuses_bad_values_with_400_and_the_field_named(self):
        make_user("Ann1", "annotator")
        for data, field in (
            ({"username": " ANN1 "}, "is taken"),
            ({"username": "bad name!"}, "Enter a valid username"),
            ({"email": "not-an-email"}, "Enter a valid email address"),
            ({"roles": ["owner"]}, "Select a valid choice"),
            ({"username": "x" * 151}, "at most 150 characters"),
        ):
            r = self.create(**data)
            self.assertEqual(r.status_code, 400, data)
            self.assertContains(r, field, status_code=400)
        self.assertFalse(User.objects.filter(username="nina").exists())

    def test_it_issues_a_new_link_that_replaces_nothing_until_used(self):
        nina = make_user("nina", "annotator")
        r = self.client.post(f"/people/{nina.pk}/link/")
        self.assertContains(Client().get(link_in(r.content.decode()), follow=True), "Choose your password")

    def test_it_keeps_people_pages_for_leads(self):
        ann = make_user("ann1", "annotator")
        self.client.force_login(ann)
        for url in ("/people/", f"/people/{ann.pk}/"):
            self.assertEqual(self.client.get(url).status_code, 403)
        self.assertEqual(self.client.post(f"/people/{ann.pk}/roles/", {"roles": ["lead"]}).status_code, 403)
        self.assertFalse(ann.groups.filter(name="audit leads").exists())


class RolesAndDeactivationTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.ann1, self.ann2 = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        self.client.force_login(self.lead)

    def test_it_gives_and_takes_roles_and_records_both(self):
        r = self.client.post(f"/people/{self.ann1.pk}/roles/", {"roles": ["annotator", "adjudicator"]})
        self.assertEqual(r.status_code, 302)
        self.assertEqual(set(self.ann1.groups.values_list("name", flat=True)), {"annotators", "adjudicators"})
        self.client.post(f"/people/{self.ann1.pk}/roles/", {"roles": ["adjudicator"]})
        self.assertEqual(set(self.ann1.groups.values_list("name", flat=True)), {"adjudicators"})
        events = HistoryEvent.objects.filter(person=self.ann1, action="roles").order_by("id")
        self.assertEqual(
            [(e.old, e.new, e.user_id) for e in events],
            [
                ({"roles": ["annotator"]}, {"roles": ["adjudicator", "annotator"]}, self.lead.pk),
                ({"roles": ["adjudicator", "annotator"]}, {"roles": ["adjudicator"]}, self.lead.pk),
            ],
        )
        self.assertEqual(self.client.post(f"/people/{self.ann1.pk}/roles/", {"roles": ["x"]}).status_code, 400)

    def test_it_refuses_to_remove_the_last_lead(self):
        self.client.post(f"/people/{self.lead.pk}/roles/", {"roles": ["annotator"]})
        self.assertTrue(self.lead.groups.filter(name="audit leads").exists())
        self.client.post(f"/people/{self.lead.pk}/active/", {"active": "0"})
        self.lead.refresh_from_db()
        self.assertTrue(self.lead.is_active)

    def test_it_deactivates_lists_open_work_for_reassignment_and_keeps_labels(self):
        audit = make_labelled_audit(self.ann1, self.ann2, n_answers=3, submitted=False)
        Assignment.objects.filter(annotator=self.ann1, audit_answer__position=0).update(status="submitted")
        Assignment.objects.filter(annotator=self.ann1, audit_answer__position=1).update(status="assigned")
        labels = Label.objects.filter(assignment__annotator=self.ann1).count()
        ann_client = Client()
        ann_client.force_login(self.ann1)
        self.assertEqual(ann_client.get("/").status_code, 200)

        r = self.client.post(f"/people/{self.ann1.pk}/active/", {"active": "0", "reason": "left the team"})
        self.assertRedirects(r, f"/people/{self.ann1.pk}/", fetch_redirect_response=False)
        self.ann1.refresh_from_db()
        self.assertFalse(self.ann1.is_active)
        self.assertEqual(ann_client.get("/").status_code, 302)  # their session ends
        self.assertEqual(
            Client().post("/login/", {"username": "ann1", "password": "pw-for-tests-only"}).status_code, 200
        )
        self.assertEqual(Label.objects.filter(assignment__annotator=self.ann1).count(), labels)

        page = self.client.get(f"/people/{self.ann1.pk}/").content.decode()
        self.assertIn("Open assignments (2)", page)
        for a in Assignment.objects.filter(annotator=self.ann1).exclude(status="submitted"):
            self.assertIn(f'href="/audits/{audit.pk}/assignments/#assignment-{a.pk}"', page)
        event = HistoryEvent.objects.get(person=self.ann1, action="deactivated")
        self.assertEqual((event.user, event.reason, event.audit), (self.lead, "left the team", None))

        r = self.client.post(f"/people/{self.ann1.pk}/link/", follow=True)
        self.assertContains(r, "reactivate them first")
        self.client.post(f"/people/{self.ann1.pk}/active/", {"active": "1"})
        self.ann1.refresh_from_db()
        self.assertTrue(self.ann1.is_active)

    def test_it_counts_the_same_open_work_on_the_list_the_person_page_and_deactivation(self):
        """Open is one definition (people.selectors.open_q): not submitted, whether assigned or started."""
        make_labelled_audit(self.ann1, self.ann2, n_answers=4, submitted=False)
        mine = Assignment.objects.filter(annotator=self.ann1).order_by("pk")
        for a, status in zip(mine, ["submitted", "assigned", "started", "started"], strict=True):
            Assignment.objects.filter(pk=a.pk).update(status=status)
        listed = next(p for p in people() if p.pk == self.ann1.pk).open_assignments
        _, on_page, _ = person(self.ann1.pk)
        left = person_deactivate(self.ann1, by=self.lead)
        expected = set(mine.exclude(status="submitted").values_list("pk", flat=True))
        self.assertEqual(set(mine.filter(open_q()).values_list("pk", flat=True)), expected)
        self.assertEqual(
            (listed, {a.pk for a in on_page}, set(left.values_list("pk", flat=True))), (3, expected, expected)
        )
        self.assertContains(self.client.get("/people/"), '<td class="num">3</td>')
        # The list says the leaver's open work waits for nobody, with the way to move it (it said only "deactivated")
        self.assertContains(
            self.client.get("/people/"), f'<a href="/people/{self.ann1.pk}/#open-h">3 open: reassign them</a>'
        )

    def test_it_refuses_a_bad_reason_with_400_and_the_field_named(self):
        r = self.client.post(f"/people/{self.ann1.pk}/active/", {"active": "0", "reason": "x" * 501})
        self.assertContains(r, "Reason: Ensure this value has at most 500 characters", status_code=400)
        r = self.client.post(f"/people/{self.ann1.pk}/active/", {"active": "0", "reason": "nul\x00byte"})
        self.assertEqual(r.status_code, 400)
        self.ann1.refresh_from_db()
        self.assertTrue(self.ann1.is_active)

    def test_it_refuses_a_set_password_link_of_a_deactivated_person(self):
        r = self.client.post(f"/people/{self.ann1.pk}/link/")
        link = link_in(r.content.decode())
        self.client.post(f"/people/{self.ann1.pk}/active/", {"active": "0"})
        self.assertContains(Client().get(link, follow=True), "This link is not valid")


class AdminTests(TestCase):
    MODELS = ("audit/answer", "audit/claim", "audit/audit", "audit/judgerun", "annotations/label")

    def setUp(self):
        a, b = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        make_labelled_audit(a, b, n_answers=2)

    def client_for(self, *role, staff):
        user = make_user(f"u{User.objects.count()}", *role)
        User.objects.filter(pk=user.pk).update(is_staff=staff)
        c = Client()
        c.force_login(user)
        return c

    def test_it_opens_read_only_list_views_to_staff_leads(self):
        c = self.client_for("lead", staff=True)
        self.assertEqual(c.get("/admin/").status_code, 200)
        for model in self.MODELS:
            r = c.get(f"/admin/{model}/")
            self.assertEqual(r.status_code, 200, model)
            self.assertNotContains(r, "/add/")
            self.assertEqual(c.get(f"/admin/{model}/add/").status_code, 403, model)
        self.assertContains(c.get("/admin/audit/audit/"), "2026-W48")

    def test_it_refuses_the_admin_to_anyone_else(self):
        for c in (self.client_for("lead", staff=False), self.client_for("annotator", staff=True)):
            r = c.get("/admin/audit/answer/")
            self.assertEqual(r.status_code, 302)
            self.assertTrue(r["Location"].startswith("/admin/login/"))


class QueryCountTests(TestCase):
    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.client.force_login(self.lead)

    def count(self, url):
        self.client.get(url)  # the session's activity stamp is written once
        with CaptureQueriesContext(connection) as ctx:
            self.assertEqual(self.client.get(url).status_code, 200)
        return len(ctx.captured_queries)

    def test_it_keeps_the_people_page_constant_from_small_to_large_team(self):
        small = self.count("/people/")
        for i in range(30):
            make_user(f"p{i}", "annotator", "adjudicator")
        self.assertEqual(self.count("/people/"), small)

    def test_it_keeps_the_person_page_constant_with_more_open_work(self):
        ann, other = make_user("ann1", "annotator"), make_user("ann2", "annotator")
        make_labelled_audit(ann, other, n_answers=1, submitted=False, name="small")
        small = self.count(f"/people/{ann.pk}/")
        make_labelled_audit(ann, other, n_answers=12, submitted=False, name="large")
        make_audit([make_answer()], name="another")
        self.assertEqual(self.count(f"/people/{ann.pk}/"), small)
        self.assertContains(self.client.get(f"/people/{ann.pk}/"), "Open assignments (13)")


@pytest.mark.browser
def test_it_takes_a_new_person_from_the_lead_page_to_first_login_in_chromium(
    live_server, browser, page, login, transactional_db
):
    lead = make_user("lead", "lead")
    login(page, lead)
    page.goto(f"{live_server.url}/people/")
    page.fill("input[name=username]", "nina")
    page.check("input[name=roles][value=annotator]")
    page.click("text=Create and get the link")
    link = page.input_value("input.set-password-link")
    assert link.startswith(f"{live_server.url}/welcome/")

    newcomer = browser.new_context().new_page()
    newcomer.goto(link)
    newcomer.wait_for_selector("text=Choose your password")
    newcomer.fill("input[name=new_password1]", STRONG)
    newcomer.fill("input[name=new_password2]", STRONG)
    newcomer.click("text=Set password and log in")
    newcomer.wait_for_url(f"{live_server.url}/")
    assert newcomer.locator(".topbar").inner_text().count("nina") == 1
    newcomer.goto(link)  # the link worked once
    assert newcomer.locator("text=This link is not valid").is_visible()
    newcomer.context.close()
    assert page.js_errors == []


class OpenWorkTests(TestCase):
    """Taking the annotator role away (or deactivating) with open assignments: warned before and after,
    marked on the audit's progress, and the open work reassigned in one step."""

    def setUp(self):
        self.lead = make_user("lead", "lead")
        self.ann1, self.ann2, self.ann3 = (make_user(f"ann{i}", "annotator") for i in (1, 2, 3))
        self.audit = make_labelled_audit(self.ann1, self.ann3, n_answers=3, submitted=False)
        Assignment.objects.filter(annotator=self.ann3).update(status="assigned")
        Assignment.objects.filter(annotator=self.ann3, audit_answer__position=0).update(status="started")
        self.client.force_login(self.lead)

    def progress_row(self, name):
        page = self.client.get(f"/audits/{self.audit.pk}/").content.decode()
        return next(r for r in page.split('id="progress-h"')[1].split("<tr>") if f"<td>{name}" in r)

    def test_it_warns_before_and_after_taking_the_annotator_role_and_marks_the_progress_table(self):
        page = self.client.get(f"/people/{self.ann3.pk}/").content.decode()
        assert "ann3 holds 3 open assignments: without the annotator role nobody labels them" in page
        assert "Deactivating ann3 leaves their 3 open assignments with nobody to label them" in page
        assert "tag warn" not in self.progress_row("ann3")

        r = self.client.post(f"/people/{self.ann3.pk}/roles/", {"roles": ["adjudicator"]}, follow=True)
        page = r.content.decode()
        assert "Roles of ann3: adjudicator." in page
        assert "ann3 no longer has the annotator role but still holds 3 open assignments" in page
        assert "ann3 no longer has the annotator role: nobody labels these 3 assignments" in page
        assert f'<a class="tag warn" href="/people/{self.ann3.pk}/">no longer an annotator</a>' in self.progress_row(
            "ann3"
        )
        assert "tag warn" not in self.progress_row("ann1")

    def test_it_warns_after_deactivating_and_marks_the_progress_table(self):
        r = self.client.post(f"/people/{self.ann3.pk}/active/", {"active": "0"}, follow=True)
        assert "ann3 is deactivated but still holds 3 open assignments" in r.content.decode()
        assert ">deactivated</a>" in self.progress_row("ann3")

    def test_it_reassigns_all_open_work_not_started_to_another_annotator(self):
        self.client.post(f"/people/{self.ann3.pk}/active/", {"active": "0"})
        page = self.client.get(f"/people/{self.ann3.pk}/").content.decode()
        form = page.split(f'action="/people/{self.ann3.pk}/reassign/"')[1].split("</form>")[0]
        assert "csrfmiddlewaretoken" in form and ">ann2</option>" in form and ">ann3<" not in form

        r = self.client.post(f"/people/{self.ann3.pk}/reassign/", {"to": self.ann2.pk}, follow=True)
        page = r.content.decode()
        assert "2 open assignments of ann3 moved to ann2." in page
        assert "1 stay with ann3 (started: its labels stay with it)." in page
        assert "restart with someone else (started: its labels are discarded)" in page  # the way to finish it
        assert Assignment.objects.filter(annotator=self.ann2).count() == 2
        assert list(Assignment.objects.filter(annotator=self.ann3).values_list("status", flat=True)) == ["started"]
        assert HistoryEvent.objects.filter(audit=self.audit, action="reassign").count() == 2
        event = HistoryEvent.objects.get(person=self.ann3, action="work_reassigned")
        assert (event.new, event.user) == ({"to": "ann2", "moved": 2, "kept": 1}, self.lead)

    def test_it_says_how_many_stay_for_each_reason(self):
        """Kept for two reasons: the counts of each (the reasons were run together as 'differ.; started')."""
        other = make_labelled_audit(self.ann2, self.ann3, n_answers=2, submitted=False, name="w49")
        Assignment.objects.filter(audit_answer__audit=other, annotator=self.ann3).update(status="assigned")
        r = self.client.post(f"/people/{self.ann3.pk}/reassign/", {"to": self.ann2.pk}, follow=True)
        page = r.content.decode()
        assert "2 open assignments of ann3 moved to ann2." in page
        assert (
            "3 stay with ann3: 2 (ann2 already labels this answer: the two annotators of an answer must differ), "
            "1 (started: its labels stay with it)." in page
        )

    def test_it_never_offers_or_gives_an_answer_to_its_other_annotator(self):
        page = self.client.get(f"/people/{self.ann3.pk}/").content.decode()
        form = page.split(f'action="/people/{self.ann3.pk}/reassign/"')[1].split("</form>")[0]
        assert ">ann1</option>" not in form and ">ann2</option>" in form  # ann1: the other annotator of all three
        r = self.client.post(f"/people/{self.ann3.pk}/reassign/", {"to": self.ann1.pk})
        assert r.status_code == 400 and "Select a valid choice" in r.content.decode()
        assert Assignment.objects.filter(annotator=self.ann3).count() == 3
        self.client.post(f"/people/{self.ann2.pk}/roles/", {"roles": ["adjudicator"]})  # nobody left who can take them
        page = self.client.get(f"/people/{self.ann3.pk}/").content.decode()
        assert 'id="no-taker"' in page and f'action="/people/{self.ann3.pk}/reassign/"' not in page

    def test_it_refuses_a_bad_target_with_400_naming_the_field(self):
        for bad in ("", "x", str(self.ann3.pk), str(self.lead.pk), "9" * 30):
            r = self.client.post(f"/people/{self.ann3.pk}/reassign/", {"to": bad})
            assert r.status_code == 400 and "Reassign all open assignments to" in r.content.decode(), bad
            assert "Select a valid choice" in r.content.decode() or "This field is required" in r.content.decode()
        assert Assignment.objects.filter(annotator=self.ann3).count() == 3
        csrf = Client(enforce_csrf_checks=True)
        csrf.force_login(self.lead)
        assert csrf.post(f"/people/{self.ann3.pk}/reassign/", {"to": self.ann2.pk}).status_code == 403
        ann = Client()
        ann.force_login(self.ann2)
        assert ann.post(f"/people/{self.ann3.pk}/reassign/", {"to": self.ann2.pk}).status_code == 403


class AuditPageTests(TestCase):
    def test_it_sends_the_lead_to_the_people_page_to_add_an_annotator(self):
        lead = make_user("lead", "lead")
        audit = make_labelled_audit(make_user("ann1", "annotator"), make_user("ann2", "annotator"), submitted=False)
        self.client.force_login(lead)
        page = self.client.get(f"/audits/{audit.pk}/").content.decode()
        assert "Every annotator is already on this audit" in page
        assert 'href="/people/#new-person">add a person</a>' in page and "create_user" not in page
