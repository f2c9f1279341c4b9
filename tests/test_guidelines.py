"""Guidelines: versioned Markdown per audit, rendered safely, read before the first answer, `g` in the
workspace and on the adjudication page, inherited by a new audit."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotations.models import GuidelinesSeen
from audit.guidelines.services import guidelines_save
from audit.models import GuidelinesVersion, HistoryEvent
from audit.sampling.services import audit_create
from tests.factories import make_answer, make_assigned_audit, make_dataset, make_user

EVIL = (
    "# Rules\n\nLabel **every** claim.\n\n<script>window.pwned=1</script>\n\n"
    '<img src=x onerror="window.pwned=2">\n\n[click](javascript:window.pwned=3)\n'
)


@pytest.fixture
def lead(db):
    c = Client()
    user = make_user("lead", "lead")
    c.force_login(user)
    c.user = user
    return c


def test_it_keeps_every_edit_as_a_version_with_author_and_time(lead):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    assert lead.post(f"/audits/{audit.pk}/guidelines/", {"text": "Version one"}).status_code == 302
    lead.post(f"/audits/{audit.pk}/guidelines/", {"text": "Version one"})  # unchanged: no new version
    lead.post(f"/audits/{audit.pk}/guidelines/", {"text": "Version **two**"})
    versions = list(GuidelinesVersion.objects.filter(audit=audit).order_by("version"))
    assert [(v.version, v.text, v.author.username) for v in versions] == [
        (1, "Version one", "lead"),
        (2, "Version **two**", "lead"),
    ]
    assert HistoryEvent.objects.filter(audit=audit, action="guidelines").count() == 2
    page = lead.get(f"/audits/{audit.pk}/guidelines/?version=1").content.decode()
    assert '<h2 id="shown_h">Version 1 (not the current one)</h2>' in page and "<p>Version one</p>" in page
    assert "<strong>two</strong>" in lead.get(f"/audits/{audit.pk}/guidelines/").content.decode()


def test_it_renders_markdown_with_html_escaped_and_no_script_links(lead):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    lead.post(f"/audits/{audit.pk}/guidelines/", {"text": EVIL})
    page = lead.get(f"/audits/{audit.pk}/guidelines/").content.decode()
    shown = page.split('class="guidelines-text">')[1].split("</section>")[0]
    assert "<h1>Rules</h1>" in shown and "<strong>every</strong>" in shown
    assert "<script" not in shown and "<img" not in shown and "&lt;script&gt;" in shown
    assert 'href="javascript:' not in shown


def test_it_refuses_oversized_guidelines_naming_the_field(lead):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    r = lead.post(f"/audits/{audit.pk}/guidelines/", {"text": "x" * 100_001})
    assert r.status_code == 400 and "Guidelines are limited to 100,000 characters" in r.content.decode()
    assert not GuidelinesVersion.objects.exists()


def test_it_shows_the_guidelines_before_the_first_answer_then_not_again(db):
    ann = make_user("ann", "annotator")
    audit, mine = make_assigned_audit(ann)
    guidelines_save(audit, "Read me first", None)
    c = Client()
    c.force_login(ann)
    r = c.get(f"/label/{mine[0].pk}/")
    assert r.status_code == 302 and r.url == f"/label/guidelines/{audit.pk}/?next=/label/{mine[0].pk}/"
    page = c.get(r.url).content.decode()
    assert "Read me first" in page and 'value="/label/' in page
    r = c.post(f"/label/guidelines/{audit.pk}/", {"next": f"/label/{mine[0].pk}/"})
    assert r.status_code == 302 and r.url == f"/label/{mine[0].pk}/"
    assert GuidelinesSeen.objects.get(user=ann, audit=audit).version == 1
    page = c.get(f"/label/{mine[0].pk}/").content.decode()
    assert 'id="guidelines_dialog"' in page and "evidence.js" in page and "Read me first" not in page  # filled on `g`
    assert f'data-dialog="guidelines_dialog" hx-get="/label/guidelines/{audit.pk}/"' in page
    assert "{#" not in page and "guidelines_for" not in page  # the dialog template's comment stays a comment
    fragment = c.get(f"/label/guidelines/{audit.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert "Read me first" in fragment and "<html" not in fragment and "version 1" in fragment
    assert c.post(f"/label/guidelines/{audit.pk}/", {"next": "https://evil.example/"}).url == "/"


def test_it_hides_an_audits_guidelines_from_annotators_not_on_it(db):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    guidelines_save(audit, "Internal", None)
    c = Client()
    c.force_login(make_user("stranger", "annotator"))
    assert c.get(f"/label/guidelines/{audit.pk}/").status_code == 404


def test_it_starts_a_new_audit_from_the_previous_audits_guidelines(db):
    ds = make_dataset()
    for _ in range(4):
        make_answer(ds)
    lead = make_user("lead", "lead")
    first = audit_create(name="w1", dataset=ds, size=2, seed=1, user=lead)
    guidelines_save(first, "Week one rules", lead)
    guidelines_save(first, "Week one rules, revised", lead)
    second = audit_create(name="w2", dataset=ds, size=2, seed=2, user=lead)
    (g,) = GuidelinesVersion.objects.filter(audit=second)
    assert g.text == "Week one rules, revised" and g.copied_from.audit == first and g.version == 1


def test_it_keeps_workspace_queries_constant_with_guidelines(db):
    ann = make_user("ann", "annotator")
    counts = []
    for name, n in (("small", 1), ("large", 6)):
        audit, mine = make_assigned_audit(ann, name=name, n_answers=n, n_claims=2 * n)
        for i in range(n):
            guidelines_save(audit, f"Version {i}", None)
        GuidelinesSeen.objects.create(user=ann, audit=audit, version=1)
        c = Client()
        c.force_login(ann)
        with CaptureQueriesContext(connection) as ctx:
            assert c.get(f"/label/{mine[0].pk}/").status_code == 200
        counts.append(len(ctx))
    assert counts[0] == counts[1]


def test_it_shows_the_latest_guidelines_to_whoever_read_any_version_in_a_fixed_number_of_queries(db):
    ann, other = make_user("ann", "annotator"), make_user("other", "annotator")
    audit, mine = make_assigned_audit(ann, other)
    c = Client()
    c.force_login(ann)
    with CaptureQueriesContext(connection) as without:
        c.get(f"/label/{mine[0].pk}/")
    n_without = len(without)  # read now: the next request empties the connection's query log
    guidelines_save(audit, "First rules", None)
    guidelines_save(audit, "Second rules", None)
    GuidelinesSeen.objects.create(user=other, audit=audit, version=2)  # someone else's reading counts for nothing
    assert c.get(f"/label/{mine[0].pk}/").status_code == 302
    GuidelinesSeen.objects.create(user=ann, audit=audit, version=1)  # any version read opens the page
    with CaptureQueriesContext(connection) as with_guidelines:
        page = c.get(f"/label/{mine[0].pk}/").content.decode()
    assert len(with_guidelines) == n_without + 1  # the latest version, then (only then) whether it was read
    assert 'data-dialog="guidelines_dialog"' in page  # the text is fetched when `g` opens it
    fragment = c.get(f"/label/guidelines/{audit.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert "Second rules" in fragment and "version 2" in fragment and "First rules" not in fragment


def test_it_refuses_empty_guidelines_with_400_naming_the_field_and_keeps_the_text(lead):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    lead.post(f"/audits/{audit.pk}/guidelines/", {"text": "Label every claim."})
    for blank in ("", "  \r\n\t "):
        r = lead.post(f"/audits/{audit.pk}/guidelines/", {"text": blank})
        page = r.content.decode()
        assert r.status_code == 400 and "Text: guidelines cannot be empty" in page
        assert f">{blank}</textarea>" in page  # what was typed stays in the editor
    r = lead.post(f"/audits/{audit.pk}/guidelines/", {"text": "nul\x00byte"})
    assert r.status_code == 400 and "text: contains a NUL character" in r.content.decode()
    assert list(GuidelinesVersion.objects.filter(audit=audit).values_list("text", flat=True)) == ["Label every claim."]


def test_it_shows_an_old_versions_source_and_restores_it_as_a_new_version(lead):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    for text in ("# One\n\nLabel <b>every</b> claim.", "# Two"):
        lead.post(f"/audits/{audit.pk}/guidelines/", {"text": text})
    page = lead.get(f"/audits/{audit.pk}/guidelines/?version=1").content.decode()
    assert "<pre># One\n\nLabel &lt;b&gt;every&lt;/b&gt; claim.</pre>" in page  # the source, escaped
    form = page.split(f'action="/audits/{audit.pk}/guidelines/restore/"')[1].split("</form>")[0]
    assert "csrfmiddlewaretoken" in form and 'name="version" value="1"' in form and "Restore this version" in form
    assert "Restore this version" not in lead.get(f"/audits/{audit.pk}/guidelines/").content.decode()

    r = lead.post(f"/audits/{audit.pk}/guidelines/restore/", {"version": "1"}, follow=True)
    assert "Version 1 restored: saved as version 3." in r.content.decode()
    versions = list(GuidelinesVersion.objects.filter(audit=audit).order_by("version").values_list("version", "text"))
    assert versions[2] == (3, versions[0][1]) and len(versions) == 3
    event = HistoryEvent.objects.filter(audit=audit, action="guidelines").latest("id")
    assert (event.new["version"], event.new["restores"], event.user) == (3, 1, lead.user)
    lead.post(f"/audits/{audit.pk}/guidelines/restore/", {"version": "1"})  # the current text already
    assert GuidelinesVersion.objects.filter(audit=audit).count() == 3

    for bad in ("9", "x", "", "1" * 30):
        r = lead.post(f"/audits/{audit.pk}/guidelines/restore/", {"version": bad})
        assert r.status_code == 400 and "Version: " in r.content.decode(), bad
    assert lead.get(f"/audits/{audit.pk}/guidelines/restore/").status_code == 405
    csrf = Client(enforce_csrf_checks=True)
    csrf.force_login(lead.user)
    assert csrf.post(f"/audits/{audit.pk}/guidelines/restore/", {"version": "2"}).status_code == 403


def test_it_keeps_the_guidelines_editor_free_of_inline_styles(lead):
    audit, _ = make_assigned_audit(make_user("ann", "annotator"))
    page = lead.get(f"/audits/{audit.pk}/guidelines/").content.decode()
    assert "style=" not in page.split("<body")[1] and "guidelines.css" in page
