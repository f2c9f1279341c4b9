"""Password validators (length, common, numeric, similarity to the user) wherever a password is set."""

from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import TestCase

from tests.factories import PASSWORD, make_user

User = get_user_model()


class CreateUserPasswordTests(TestCase):
    def refused(self, username, password, **kw):
        with self.assertRaises(CommandError) as ctx:
            call_command("create_user", username, "--password", password, stdout=StringIO(), **kw)
        self.assertFalse(User.objects.filter(username=username).exists())
        return str(ctx.exception)

    def test_it_refuses_a_weak_password_with_the_validators_messages(self):
        self.assertIn("This password is too short. It must contain at least 10 characters.", self.refused("m1", "a"))
        self.assertIn("This password is too common.", self.refused("m2", "password123"))
        self.assertIn("This password is entirely numeric.", self.refused("m3", "73918264051"))
        self.assertIn("The password is too similar to the username.", self.refused("margaretha", "margaretha1"))

    def test_it_refuses_a_weak_password_for_an_existing_user_and_keeps_the_old_one(self):
        user = make_user("ann1", "annotator")
        with self.assertRaises(CommandError):
            call_command("create_user", "ann1", "--password", "123", stdout=StringIO())
        user.refresh_from_db()
        self.assertTrue(user.check_password(PASSWORD))

    def test_it_accepts_a_strong_password_and_the_demo_password(self):
        call_command("create_user", "maria", "--password", "tide-cobalt-river-42", stdout=StringIO())
        self.assertTrue(User.objects.get(username="maria").check_password("tide-cobalt-river-42"))
        call_command("load_demo", stdout=StringIO())  # its users are made through create_user
        self.assertTrue(User.objects.get(username="ann1").check_password("claim-audit-demo"))

    def test_it_updates_a_name_that_differs_only_in_case_or_spacing(self):
        make_user("ann1", "annotator")
        out = StringIO()
        call_command("create_user", " ANN1 ", "--password", "tide-cobalt-river-42", stdout=out)
        self.assertIn("Updated ann1", out.getvalue())
        self.assertEqual(User.objects.count(), 1)


class PasswordChangePageTests(TestCase):
    def setUp(self):
        self.user = make_user("ann1", "annotator")
        self.client.force_login(self.user)

    def change(self, new, old=PASSWORD):
        return self.client.post("/password/", {"old_password": old, "new_password1": new, "new_password2": new})

    def test_it_links_the_page_from_the_top_bar_for_every_user(self):
        self.assertContains(self.client.get("/"), 'href="/password/"')
        self.assertContains(self.client.get("/password/"), "Change password")

    def test_it_refuses_weak_passwords_with_the_reasons(self):
        r = self.change("ann1x")
        self.assertEqual(r.status_code, 200)
        self.assertContains(r, "This password is too short")
        self.assertContains(r, "too similar to the username")
        self.assertContains(self.change("1234567890"), "This password is entirely numeric")
        self.assertContains(
            self.change("tide-cobalt-river-42", old="wrong"), "Your old password was entered incorrectly"
        )
        self.user.refresh_from_db()
        self.assertTrue(self.user.check_password(PASSWORD))

    def test_it_changes_the_password_and_keeps_the_session(self):
        r = self.change("tide-cobalt-river-42")
        self.assertRedirects(r, "/password/done/")
        self.assertEqual(self.client.get("/").status_code, 200)  # still logged in
        self.client.post("/logout/")
        r = self.client.post("/login/", {"username": "ann1", "password": "tide-cobalt-river-42"})
        self.assertRedirects(r, "/", fetch_redirect_response=False)
