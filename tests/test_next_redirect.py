"""A form's `next` (where to go back to) that is no path on this site, such as `abc`, sends the user to the
default page; Django's redirect() would read such a word as a URL name and answer 500."""

import pytest
from django.test import Client

from annotations.models import Assignment
from tests.factories import make_labelled_audit, make_user


@pytest.fixture
def world(db):
    lead = make_user("lead", "lead", "adjudicator")
    ann, bob = make_user("ann", "annotator"), make_user("bob", "annotator")
    audit = make_labelled_audit(ann, bob)
    submitted = Assignment.objects.filter(annotator=ann).first()
    return {"lead": lead, "ann": ann, "audit": audit, "submitted": submitted}


@pytest.mark.parametrize("nxt", ["abc", "home2", "javascript:alert(1)", "//evil.example/x"])
def test_it_sends_a_next_that_is_no_local_path_to_the_default_page(world, nxt):
    client = Client(raise_request_exception=False)
    audit = world["audit"]
    client.force_login(world["lead"])
    for url, form, default in [
        (f"/label/{world['submitted'].pk}/reopen/", {"reason": "why"}, "/"),
        (f"/adjudicate/{audit.pk}/reopen/", {"reason": "why"}, "/audits/"),
        (f"/adjudicate/{audit.pk}/close/", {}, "/audits/"),
        (f"/label/guidelines/{audit.pk}/", {}, "/"),
    ]:
        r = client.post(url, {**form, "next": nxt})
        assert (url, r.status_code, r["Location"]) == (url, 302, default)


def test_it_follows_a_next_that_is_a_local_path(world):
    client = Client()
    client.force_login(world["ann"])
    r = client.post(f"/label/guidelines/{world['audit'].pk}/", {"next": "/label/queue/1/?x=1"})
    assert r["Location"] == "/label/queue/1/?x=1"
