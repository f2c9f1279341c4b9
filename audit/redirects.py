"""Where a form sends the user back to: its `next` when that is a path on this site, else a default."""

from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request, default):
    """The POST's (else the query's) `next` when it is a local path, else default. Only a path starting with
    one slash is taken: shortcuts.redirect() would look up a bare word such as `abc` as a URL name (a 500)."""
    nxt = request.POST.get("next") or request.GET.get("next") or ""
    local = nxt.startswith("/") and url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return nxt if local else default
