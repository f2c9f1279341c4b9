"""The file formats page: the README's import sections and docs/IMPORT_SHAPES.md, for a lead in the app."""

import pytest
from django.urls import reverse

from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_it_shows_the_native_shape_and_every_tools_shape_to_a_lead(client, django_assert_num_queries):
    client.force_login(make_user("lead", "lead"))
    assert reverse("import_formats") in client.get(reverse("import")).content.decode()
    with django_assert_num_queries(2):  # session, user with roles
        body = client.get(reverse("import_formats")).content.decode()
    assert "<h2>Importing answers</h2>" in body and "<h2>Import formats: the shapes teams already have</h2>" in body
    assert "Required: <code>id</code>" in body  # the native shape, from the README
    assert "<h1>Importing the files real tools write</h1>" in body and "<td>auto (<code>ragas</code>)</td>" in body
    assert 'href="#tool-shapes"' in body and 'id="tool-shapes"' in body  # the README's link to the shapes, here
    assert "## The demo" not in body and "make demo" not in body  # only the import sections of the README


def test_it_keeps_the_formats_page_for_leads(client):
    client.force_login(make_user("ann", "annotator"))
    assert client.get(reverse("import_formats")).status_code == 403


@pytest.mark.browser
def test_it_reaches_the_formats_page_from_the_import_form_and_passes_axe(live_server, page, login, transactional_db):
    login(page, make_user("lead", "lead"))
    page.goto(f"{live_server.url}{reverse('import')}")
    page.get_by_role("link", name="file formats").click()
    page.wait_for_url(f"{live_server.url}{reverse('import_formats')}")
    assert page.locator("table").count() >= 2 and page.js_errors == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scroll at 1280
