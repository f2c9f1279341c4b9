"""Log in and out. Failed logins are counted by django-axes in the database (so every web process shares
one count), per normalised username and client address; see the AXES_* settings."""

import ipaddress
import unicodedata

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth import views as auth_views
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import Group
from django.db import connection
from django.shortcuts import render
from django.urls import reverse_lazy
from django.views.decorators.http import require_POST

from audit.roles import remember_role_names

LOCKED = "Too many failed logins. Wait a few minutes and try again."


class RoleBackend(ModelBackend):
    """Django's ModelBackend, but the request's user comes with its role names in the same statement: every
    page checks a role. One small raw statement (the ORM would spend more compiling an aggregate than two
    plain queries cost); the aggregate is spelt per database."""

    AGGREGATE = {"sqlite": "group_concat(g.name, char(10))", "postgresql": "string_agg(g.name, chr(10))"}

    def get_user(self, user_id):
        users = get_user_model()
        through = users.groups.through._meta.db_table
        # Only the models' table names are formatted in; the id is a parameter.
        sql = (
            f"SELECT u.*, (SELECT {self.AGGREGATE[connection.vendor]} FROM {Group._meta.db_table} g "  # noqa: S608
            f"JOIN {through} ug ON ug.group_id = g.id WHERE ug.user_id = u.id) AS role_list "
            f"FROM {users._meta.db_table} u WHERE u.id = %s"
        )
        user = next(iter(users._default_manager.raw(sql, [user_id])), None)
        if user is None or not self.user_can_authenticate(user):
            return None
        remember_role_names(user, (user.role_list or "").split("\n") if user.role_list else [])
        return user


def normalise_username(raw):
    """The login form's normalisation (NFKC, surrounding whitespace stripped) plus casefold: " ann1",
    "ann1\\t", "ＡＮＮ１" and "ann1" are one name. Usernames are created through the same function."""
    return unicodedata.normalize("NFKC", raw or "").strip().casefold()[:150]


def throttle_username(request, credentials):
    """AXES_USERNAME_CALLABLE: the throttle's key for the username tried."""
    raw = (credentials or {}).get("username")
    if raw is None and request is not None:
        raw = request.POST.get("username", "")
    return normalise_username(raw)


def client_address(request):
    """AXES_CLIENT_IP_CALLABLE: the address of the client. Behind a trusted reverse proxy that sets
    TRUSTED_PROXY_HEADER (e.g. X-Forwarded-For or X-Real-IP), the right-most address in it, the one the
    proxy itself added (addresses to its left come from the client and can be forged); else REMOTE_ADDR."""
    header = settings.TRUSTED_PROXY_HEADER
    if header:
        value = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        candidate = value.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            pass  # absent or malformed: the request did not come through the proxy
    return request.META.get("REMOTE_ADDR", "")


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the login page again, with the reason, as 429."""
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")[:150]})
    return render(request, "registration/login.html", {"form": form, "locked": LOCKED}, status=429)


login_view = login_not_required(auth_views.LoginView.as_view(redirect_authenticated_user=True))
logout_view = require_POST(auth_views.LogoutView.as_view())
password_change_view = auth_views.PasswordChangeView.as_view(success_url=reverse_lazy("password_change_done"))
password_change_done_view = auth_views.PasswordChangeDoneView.as_view()
