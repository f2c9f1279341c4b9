import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from playwright.sync_api import sync_playwright

from claimaudit.staticfiles import minified
from tests.factories import PASSWORD, make_assigned_audit, make_user

CHROMIUM = "/usr/bin/chromium"

# Requests the live server is still answering. A page's teardown waits until none is left, so a request the
# browser sent last (a beacon, a poll) never races the database flush between tests.
_in_flight = threading.Condition()
_in_flight.count = 0
_wsgi_call = WSGIHandler.__call__


def _counted_call(self, environ, start_response):
    with _in_flight:
        _in_flight.count += 1
    try:
        return _wsgi_call(self, environ, start_response)
    finally:
        with _in_flight:
            _in_flight.count -= 1
            _in_flight.notify_all()


WSGIHandler.__call__ = _counted_call


def live_server_idle(timeout=60):
    """Wait (on the condition, not a sleep) until the live server answers no request."""
    with _in_flight:
        assert _in_flight.wait_for(lambda: _in_flight.count == 0, timeout), "the live server is still answering"


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


def axe_violations(pg):
    """axe-core's critical and serious violations on the page as it is now: [(rule, [targets])]."""

    results = Axe().run(pg).response["violations"]
    return [(v["id"], [n["target"] for n in v["nodes"]][:5]) for v in results if v["impact"] in ("critical", "serious")]


@pytest.fixture
def page(browser):
    """A 1280x800 page. axe-core checks every page the test leaves with goto() and the page it ends on: a
    critical or serious violation on any of them fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.set_default_timeout(30_000)  # a guard against hanging, not a speed check: the machine may be busy
    errors, found = [], []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    pg.axe = lambda: axe_violations(pg)
    goto = pg.goto

    def checked_goto(url, **kwargs):
        if pg.url.startswith("http"):
            found.extend((pg.url, v) for v in pg.axe())
        return goto(url, **kwargs)

    pg.goto = checked_goto
    yield pg
    # The page reports time on task every 15 s and when it closes: from here on drop those reports and let
    # any request in flight finish, or the server would still be reading when the database is flushed.
    context.route("**/time/", lambda route: route.abort())
    if pg.url.startswith("http"):
        pg.wait_for_load_state("networkidle")
    if pg.url.startswith("http") and not errors:
        found.extend((pg.url, v) for v in pg.axe())
    context.close()
    live_server_idle()
    assert found == [], f"axe-core: critical or serious violations: {found}"


@pytest.fixture(params=["source", "minified"])
def assets(request, page):
    """Run a browser test twice: on the static files as written, and on the project's own CSS and JavaScript
    as `collectstatic` minifies them for production (served to the page in place of the sources)."""
    served, prefix = [], settings.STATIC_URL.strip("/")
    if request.param == "minified":

        def serve(route):
            name = urlsplit(route.request.url).path.removeprefix(f"/{prefix}/")
            served.append(name)
            body = minified(name, Path(finders.find(name)).read_text(encoding="utf-8"))
            route.fulfill(body=body, content_type="text/css" if name.endswith(".css") else "text/javascript")

        for own in ("js", "css"):  # the project's own files are the top level of static/; * stops at a slash
            page.route(f"**/{prefix}/*.{own}", serve)
    yield request.param
    assert request.param == "source" or any(n.endswith(".js") for n in served), "no minified script was served"


@pytest.fixture
def login(live_server):
    """login(page, user): log in through the real form."""

    def do(pg, user):
        pg.goto(f"{live_server.url}/login/", timeout=60_000)  # the server's first request loads the URLconf
        pg.fill("input[name=username]", user.username)
        pg.fill("input[name=password]", PASSWORD)
        pg.keyboard.press("Enter")
        pg.wait_for_url(f"{live_server.url}/")
        return pg

    return do


@pytest.fixture(autouse=True)
def _clear_cache():
    # One test's cached values must not leak into the next (the login throttle is in the database).
    cache.clear()


@pytest.fixture
def open_workspace(live_server, page, login):
    """open_workspace(init_script=None): an annotator's one-answer audit (2 claims, 2 passages) open in the page at
    its first claim, the script (if any) added before the page loads; returns (the assignment, its first claim)."""

    def do(init_script=None):
        ann = make_user("ann", "annotator")
        _, mine = make_assigned_audit(ann, n_answers=1, n_claims=2, n_passages=2)
        first = mine[0].audit_answer.answer.claims.order_by("position").first()
        if init_script:
            page.add_init_script(init_script)
        login(page, ann)
        page.goto(f"{live_server.url}/label/{mine[0].pk}/")
        page.wait_for_selector(f"#claim-{first.pk}.current")
        return mine[0], first

    return do
