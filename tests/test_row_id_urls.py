"""An id in a URL beyond what the databases store (over 64 bits) names no row: 404 on every page, never
the driver's overflow (SQLite raised OverflowError, a 500, on the adjudication pages)."""

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import make_labelled_audit, make_user

HUGE = str(2**63)


@pytest.fixture
def world(db):
    adj = make_user("adj", "adjudicator", "lead")
    audit = make_labelled_audit(make_user("ann", "annotator"), make_user("bob", "annotator"))
    return adj, audit, audit.items.order_by("position").first()


def test_it_answers_404_for_an_id_over_64_bits_in_any_url_part(world):
    adj, audit, item = world
    client = Client(raise_request_exception=False)
    client.force_login(adj)
    for method, url in [
        ("get", f"/adjudicate/{HUGE}/answers/{item.pk}/"),
        ("get", f"/adjudicate/{audit.pk}/answers/{HUGE}/"),
        ("get", f"/adjudicate/{HUGE}/answers/{item.pk}/history/"),
        ("post", f"/adjudicate/{HUGE}/answers/{item.pk}/take-all/"),
        ("post", f"/adjudicate/{HUGE}/answers/{item.pk}/claims/1/"),
        ("get", f"/reports/{10**30}/"),
    ]:
        assert (url, getattr(client, method)(url).status_code) == (url, 404)


def test_it_still_builds_and_resolves_the_largest_stored_id(world):
    url = reverse("audit_detail", args=[2**63 - 1])
    assert url == f"/audits/{2**63 - 1}/"
