"""Cross-cutting checks over every URL the app serves: login required, CSRF enforced, CSP sent. Hostile
values for every URL: tests/test_every_view_property.py."""

import re

from django.test import Client, TestCase
from django.urls import URLPattern, URLResolver, get_resolver

from tests.factories import make_answer, make_audit, make_user

PUBLIC = {"login", "password_set"}  # the set-password link carries its own token


def _patterns(resolver=None, prefix=""):
    for p in (resolver or get_resolver()).url_patterns:
        if isinstance(p, URLResolver):
            if p.app_name in ("djdt", "admin"):  # the admin has its own login (tests/test_people.py)
                continue
            yield from _patterns(p, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield p.name, prefix + str(p.pattern), p.callback


def _concrete(route):
    """Fill every <int:x> or <id:x> converter with 1 and <str:x>/<slug:x> with 'x'."""
    route = re.sub(r"<(?:int|id):\w+>", "1", route)
    return "/" + re.sub(r"<(?:str|slug):\w+>", "x", route)


class EveryUrlTests(TestCase):
    def setUp(self):
        answer = make_answer()
        make_audit([answer])

    def test_it_finds_the_app_urls(self):
        names = {name for name, _, _ in _patterns()}
        for expected in ("answers", "import", "judge_runs", "audits", "workspace", "adjudication_queue", "report"):
            self.assertIn(expected, names)

    def test_it_requires_login_on_every_url_but_login(self):
        for name, route, _ in _patterns():
            if name in PUBLIC:
                continue
            url = _concrete(route)
            for method in ("get", "post"):
                r = getattr(self.client, method)(url)
                if url.startswith("/api/v1/") and name not in ("openapi-json", "openapi-view"):
                    self.assertIn(r.status_code, (401, 404, 405), f"{method.upper()} {url} ({name}): {r.status_code}")
                    continue  # the API answers 401 (JSON), not a redirect to the login page
                self.assertEqual(r.status_code, 302, f"{method.upper()} {url} ({name}) answered {r.status_code}")
                self.assertTrue(r["Location"].startswith("/login/"), f"{url} redirects to {r['Location']}")

    def test_it_refuses_every_post_without_csrf_token(self):
        user = make_user("everyone", "lead", "annotator", "adjudicator")
        client = Client(enforce_csrf_checks=True)
        client.force_login(user)
        for name, route, _ in _patterns():
            url = _concrete(route)
            r = client.post(url, {"x": "1"}, headers={"HX-Request": "true"})
            # The API takes tokens only, never the session cookie: a cookie-only POST is not even authenticated.
            refused = (401, 403, 405) if url.startswith("/api/") else (403, 405)
            self.assertIn(r.status_code, refused, f"POST {url} ({name}) without CSRF answered {r.status_code}")

    def test_it_sends_a_strict_csp_with_a_nonce(self):
        user = make_user("lead", "lead")
        self.client.force_login(user)
        csp = self.client.get("/").headers["Content-Security-Policy"]
        self.assertIn("script-src 'self' 'nonce-", csp)
        self.assertIn("style-src 'self'", csp)
        self.assertNotIn("unsafe-inline", csp)
