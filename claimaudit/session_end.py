"""What a page open since before its session ended hears when it posts through htmx: a line saying why the press
was not saved, as text/plain the page shows in its status line. Left alone, htmx would follow the login redirect
and swap the login page into the control's place, and the page would report the press as saved; a page open
across a new login posts a CSRF token that login rotated, and would be told only "error 403"."""

from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpResponse, HttpResponseForbidden
from django.views.csrf import csrf_failure as django_csrf_failure

RELOAD = "Reload the page (copy first any note you have not saved)."


class LoginRequired(LoginRequiredMiddleware):
    """Django's login requirement for every view not marked login_not_required; 401 for htmx."""

    def handle_no_permission(self, request, view_func):
        if not request.htmx:  # set by HtmxMiddleware before any view middleware runs
            return super().handle_no_permission(request, view_func)
        said = f"Not saved: you are logged out (the session ended). {RELOAD}"
        return HttpResponse(said, status=401, content_type="text/plain; charset=utf-8")


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: Django's page, or for htmx the line saying the page is out of date."""
    if not request.htmx:  # set by HtmxMiddleware before any view middleware runs
        return django_csrf_failure(request, reason)
    said = f"Not saved: this page is out of date (you logged in again since it opened). {RELOAD}"
    return HttpResponseForbidden(said, content_type="text/plain; charset=utf-8")
