"""Property: every URL pattern of the site (read from the URLconf, so a new view is covered without a change
here), asked by a lead, an adjudicator and an annotator with hostile query strings (GET) and hostile values for
the fields its module reads (POST), on an audit with labels in progress, answers with a status the app means
(never a 5xx), shows no traceback and echoes no user text unescaped. Derandomized and bounded, so every run
sends the same requests; each example is rolled back, so one request never prepares the next."""

import importlib
import inspect
import re

import pytest
from django import forms
from django.apps import apps
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import judge_audit, make_assigned_audit, make_labelled_audit, make_labels, make_user
from tests.forms_on_pages import forms_on
from tests.test_security import _patterns

BOUNDED = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
FORMS = settings(BOUNDED, max_examples=400)
MEANT = {200, 201, 204, 301, 302, 303, 304, 400, 403, 404, 405, 409, 422}
STATE_REFUSALS = {"Nothing to undo on this answer."}  # 400s about the state, not about a value sent
SCRIPT = "<script>alert(1)</script>"
HOSTILE = [
    "abc",
    "-1",
    "0",
    str(2**63),
    str(2**64 + 1),
    str(10**30),
    "1.5",
    "1e9",
    "NaN",
    "１２",
    "",
    " ",
    "x\x00y",
    "x" * 10_000,
    "nonsense",
    SCRIPT,
    "2026-13-45",
    "on",
]
PLAUSIBLE = ["1", "supported", "unsupported", "contradicted", "non_assertive", "A", "B", "true", "checked", "csv"]
COMMON_KEYS = ["page", "q", "version", "next", "status", "format", "level", "audit", "week", "seed", "name"]
# The API has its own schema-driven run; the admin is Django's own; the set-password link carries a token.
SKIP = ("api/", "admin/")

PATTERNS = [(route, view) for _, route, view in _patterns() if not route.startswith(SKIP)]
FIELD = re.compile(r"""(?:\.get|\.getlist|\[)\(?\s*["']([a-z_][a-z0-9_]*)["']""")


def _read_fields(view):
    """The field names a view's module reads: keys it looks up in a mapping, and the fields of every form it
    can reach (its own and those of a `forms` module it imports). Extra names are harmless: views ignore them."""
    module = importlib.import_module(getattr(view, "view_class", view).__module__)
    found = set(FIELD.findall(inspect.getsource(module)))
    for value in list(vars(module).values()):
        reachable = vars(value).values() if inspect.ismodule(value) and value.__name__.endswith("forms") else [value]
        for form in reachable:
            if inspect.isclass(form) and issubclass(form, forms.BaseForm):
                found |= set(getattr(form, "base_fields", ()))
    return sorted(found | set(COMMON_KEYS))


@pytest.fixture
def world(db):
    lead, adj = make_user("lead", "lead"), make_user("adj", "adjudicator")
    ann, bob = make_user("ann", "annotator"), make_user("bob", "annotator")
    done = make_labelled_audit(ann, bob, name="2026-W47")  # submitted by both: one dispute per answer
    judge_audit(done, "supported")
    _, mine = make_assigned_audit(ann, bob, name="2026-W48")  # labels in progress
    make_labels(mine[:1])
    ids = {m._meta.model_name: list(m._base_manager.values_list("pk", flat=True)[:6]) for m in apps.get_models()}
    return {"lead": lead, "adj": adj, "ann": ann, "ids": ids}


KWARG_MODEL = {
    "audit_id": "audit",
    "assignment_id": "assignment",
    "claim_id": "claim",
    "item_id": "auditanswer",
    "answer_id": "answer",
    "user_id": "user",
    "run_id": "judgerun",
    "batch_id": "importbatch",
    "definition_id": "judgedefinition",
    "version_id": "judgeversion",
    "token_id": "apitoken",
}


def _url(route, ids, draw):
    def fill(m):
        kind, name = m.group(1), m.group(2)
        if kind not in ("int", "id"):
            return draw(st.sampled_from(["x", "MQ", "a" * 300]))
        real = [str(i) for i in ids.get(KWARG_MODEL.get(name, ""), [])]
        return draw(st.sampled_from(real + ["0", str(2**63), str(10**30)]))

    return "/" + re.sub(r"<(\w+):(\w+)>", fill, route)


def _values(ids):
    real = sorted({str(i) for pks in ids.values() for i in pks})
    one = st.sampled_from(HOSTILE + PLAUSIBLE + real)
    return st.lists(one, min_size=1, max_size=3)  # a repeated key now and then


def _check(r, what, fields):
    assert r.status_code in MEANT, f"{what}: {r.status_code}"
    body = r.content.decode("utf-8", "replace") if not r.streaming else ""
    assert "Traceback" not in body, what
    if r.status_code == 400 and body not in STATE_REFUSALS:  # a refusal of a value names its field
        text = re.sub(r"<[^>]*>", " ", body).replace("_", " ").lower()  # what the user reads, not markup
        named = [k for k in fields if re.search(rf"\b{k.replace('_', ' ')}\b", text)]
        assert named, f"{what}: 400 names no field: {text[-300:]!r}"
    if "html" in r.get("Content-Type", ""):
        assert SCRIPT not in body, f"{what}: user text not escaped"


@pytest.mark.parametrize(("route", "view"), PATTERNS, ids=[r or "home" for r, _ in PATTERNS])
def test_it_answers_every_view_with_a_meant_status_whatever_the_values(world, route, view):
    fields = _read_fields(view)
    ids = world["ids"]
    client = Client(raise_request_exception=False)

    @BOUNDED
    @given(data=st.data())
    def example(data):
        draw = data.draw
        url = _url(route, ids, draw)
        query = draw(st.dictionaries(st.sampled_from(fields), _values(ids), max_size=4))
        form = draw(st.dictionaries(st.sampled_from(fields), _values(ids), max_size=6))
        htmx = draw(st.sampled_from([{}, {"HX-Request": "true"}]))
        for who in ("lead", "adj", "ann"):
            with transaction.atomic():
                client.force_login(world[who])
                _check(client.get(url, query, headers=htmx), f"{who} GET {url} {query!r:.300}", fields)
                _check(client.post(url, form, headers=htmx), f"{who} POST {url} {form!r:.300}", fields)
                transaction.set_rollback(True)

    example()


def _rendered_forms(client, ids):
    """Every POST form the pages show this client, each page asked with up to 3 real ids per URL part."""
    found = {}
    for route, _ in PATTERNS:
        urls = ["/" + route]
        for part in re.findall(r"<\w+:\w+>", route):
            real = ids.get(KWARG_MODEL.get(re.search(r":(\w+)", part)[1], ""), [])[:3]
            urls = [u.replace(part, str(i), 1) for u in urls for i in real]
        for url in urls:
            r = client.get(url)
            if r.status_code == 200 and "html" in r.get("Content-Type", "") and not r.streaming:
                for action, fields, htmx in forms_on(r.content.decode(), url):
                    found.setdefault((action, tuple(sorted(fields))), (action, fields, htmx))
    return [f for f in found.values() if not f[0].startswith(("/logout/", "/password/"))]


@pytest.mark.parametrize("who", ["lead", "adj", "ann"])
def test_it_answers_every_form_the_pages_show_whatever_its_fields_hold(world, who):
    """The forms as rendered (so they reach past the first check), some fields swapped for hostile values: the
    same rules, and an htmx form's refusal is a fragment for its target, never a whole page."""
    client = Client(raise_request_exception=False)
    client.force_login(world[who])
    forms = _rendered_forms(client, world["ids"])
    assert forms, "the pages show no form"
    hostile = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=2)

    @FORMS
    @given(data=st.data())
    def example(data):
        url, fields, htmx = data.draw(st.sampled_from(forms))
        sent = {k: data.draw(st.one_of(st.just(v), hostile), label=k) for k, v in fields.items()}
        headers = {"HX-Request": "true"} if htmx else {}
        with transaction.atomic():
            client.force_login(world[who])
            r = client.post(url, sent, headers=headers)
            _check(r, f"{who} POST {url} {sent!r:.300}", list(fields) or COMMON_KEYS)
            page = r.content.lstrip()[:15].lower() == b"<!doctype html>"
            assert not (htmx and r.status_code == 400 and page), f"{url}: an htmx refusal sent a whole page"
            transaction.set_rollback(True)

    example()
