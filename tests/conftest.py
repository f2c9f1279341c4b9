import pytest
from django.core.cache import cache
from playwright.sync_api import sync_playwright

from tests.factories import PASSWORD

CHROMIUM = "/usr/bin/chromium"


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


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    yield pg
    context.close()


@pytest.fixture
def login(live_server):
    """login(page, user): log in through the real form."""

    def do(pg, user):
        pg.goto(f"{live_server.url}/login/")
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
