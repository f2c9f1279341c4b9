"""Session limits and caching headers for logged-in pages."""

import time

from django.conf import settings
from django.contrib.auth import logout
from django.utils.cache import add_never_cache_headers

ACTIVITY_STEP = 60  # seconds: the last-activity stamp is rewritten at most this often (one session write)


def stamp_login(sender, request, user, **kwargs):
    """user_logged_in receiver: a session starts its absolute and idle clocks at login."""
    now = int(time.time())
    request.session["login_at"] = now
    request.session["seen_at"] = now


class SessionLimitsMiddleware:
    """Logs out a session idle for SESSION_IDLE_TIMEOUT seconds or older than SESSION_COOKIE_AGE seconds
    since login (the request then goes on as anonymous, so the login page follows), and marks every
    response to a logged-in user Cache-Control: no-store, so no browser or proxy keeps a copy of
    labels, gold or exports. Place after AuthenticationMiddleware, before LoginRequiredMiddleware."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated:
            self._check(request)
        response = self.get_response(request)
        if request.user.is_authenticated:
            add_never_cache_headers(response)
        return response

    def _check(self, request):
        session, now = request.session, int(time.time())
        login_at, seen_at = session.get("login_at", now), session.get("seen_at", now)
        if now - seen_at > settings.SESSION_IDLE_TIMEOUT or now - login_at > settings.SESSION_COOKIE_AGE:
            logout(request)
            return
        # htmx GETs (polling progress, refreshing a fragment) are not activity: a page left open would
        # otherwise keep its session alive for ever.
        background = request.method == "GET" and request.headers.get("HX-Request") == "true"
        if "login_at" not in session or (not background and now - seen_at >= ACTIVITY_STEP):
            session["login_at"], session["seen_at"] = login_at, now
