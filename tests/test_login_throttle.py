"""Login throttling (django-axes): one counter per normalised username and client address, held in the
database so that every process of the app sees the same count."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import TestCase, override_settings

from tests.factories import PASSWORD, make_user

VARIANTS = [" ann1", "ann1 ", "ann1\t", "ａｎｎ１", "ANN1", "\u00a0Ann1"]


class ThrottleTests(TestCase):
    def setUp(self):
        self.user = make_user("ann1", "annotator")

    def login(self, username, password="wrong", **headers):  # noqa: S107
        return self.client.post("/login/", {"username": username, "password": password}, headers=headers)

    def test_it_counts_every_variant_of_a_username_as_one(self):
        codes = [self.login(v).status_code for v in VARIANTS[:5]]
        self.assertEqual(codes, [200, 200, 200, 200, 429])  # the 5th failure locks the name out
        r = self.login("ann1", PASSWORD)
        self.assertEqual(r.status_code, 429)
        self.assertContains(r, "Too many failed logins", status_code=429)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_it_lets_the_right_password_in_before_the_limit_and_starts_again(self):
        for v in VARIANTS[:4]:
            self.assertEqual(self.login(v).status_code, 200)
        self.assertEqual(self.login(" ann1 ", PASSWORD).status_code, 302)  # the form strips it too
        self.client.post("/logout/")
        self.assertEqual([self.login("ann1").status_code for _ in range(4)], [200] * 4)  # reset on success

    def test_it_ignores_forwarded_headers_unless_a_trusted_proxy_is_configured(self):
        codes = [self.login("ann1", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code for i in range(5)]
        self.assertEqual(codes[-1], 429)  # a forged header does not buy new counters

    @override_settings(TRUSTED_PROXY_HEADER="X-Forwarded-For")
    def test_it_keys_on_the_client_address_from_the_trusted_proxy_header(self):
        # Behind the proxy REMOTE_ADDR is the proxy for everyone; the proxy appends the real client.
        attacker = [self.login("ann1", **{"X-Forwarded-For": f"10.9.9.{i}, 203.0.113.5"}) for i in range(5)]
        self.assertEqual([r.status_code for r in attacker], [200, 200, 200, 200, 429])  # forged left parts ignored
        self.assertEqual(self.login("ann1", PASSWORD, **{"X-Forwarded-For": "203.0.113.5"}).status_code, 429)
        # The same account from another client is not locked out by the attacker's failures.
        self.assertEqual(self.login("ann1", PASSWORD, **{"X-Forwarded-For": "198.51.100.7"}).status_code, 302)

    @override_settings(TRUSTED_PROXY_HEADER="X-Real-IP")
    def test_it_falls_back_to_remote_addr_when_the_header_is_missing_or_malformed(self):
        codes = [self.login("ann1", **({"X-Real-IP": "not-an-address"} if i % 2 else {})).status_code for i in range(5)]
        self.assertEqual(codes[-1], 429)


def _run(spec):
    out = subprocess.run(
        [sys.executable, "-m", "tests.login_process", json.dumps(spec)],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.django_db(transaction=True)
def test_it_counts_failures_across_two_processes(tmp_path):
    """Process 1 fails three times and exits; process 2 fails twice more and is then refused with the
    right password: five failures in all, though neither process saw more than three."""
    make_user("ann1", "annotator")  # both processes use this test's database (committed rows)
    s = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgres://{s['USER']}@{s['HOST']}:{s['PORT'] or 5432}/{s['NAME']}"
    else:
        url = f"sqlite:///{Path(s['NAME']).resolve()}"
    first = _run({"database_url": url, "attempts": [[v, "x"] for v in VARIANTS[:3]]})
    second = _run({"database_url": url, "attempts": [[VARIANTS[3], "x"], [VARIANTS[4], "x"], ["ann1", PASSWORD]]})
    assert first == [200, 200, 200]
    assert second == [200, 429, 429]
