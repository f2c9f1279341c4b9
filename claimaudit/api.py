"""The HTTP API under /api/v1/: one NinjaAPI, personal-token auth, JSON errors, the apps' routers.

django-ninja: pydantic schemas validate every input before it reaches a service, the OpenAPI 3 schema
(/api/v1/openapi.json) and the docs page (/api/v1/docs, served from the package's own static files,
no CDN) are generated from the same function signatures, and its endpoints are plain functions like
the app's views. Every endpoint needs `Authorization: Bearer <token>`; the token acts as its user.
"""

import re
from functools import cache, wraps

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.urls import path
from django.utils import timezone
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.views import openapi_json
from ninja.security import HttpBearer

from annotations.api import progress_router
from annotations.api import router as annotations_router
from audit import roles
from audit.api import BadRequest
from audit.api import router as audit_router
from claimaudit.models import ApiToken, token_hash


class TokenAuth(HttpBearer):
    """The token's user; with roles, a user holding none of them is a 403 here, before any input is read."""

    def __init__(self, *role_names):
        super().__init__()
        self.role_names = role_names

    def authenticate(self, request, token):
        row = (
            ApiToken.objects.select_related("user")
            .filter(key_hash=token_hash(token), revoked_at=None, user__is_active=True)
            .first()
        )
        if row is None:
            return None
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=timezone.now())
        request.user = row.user
        if self.role_names and not any(roles.has_role(row.user, r) for r in self.role_names):
            raise HttpError(403, f"This endpoint is for {' or '.join(self.role_names)}.")
        refuse_unknown_query(request)
        return row.user


def refuse_unknown_query(request):
    """400 naming each query parameter the operation's OpenAPI entry does not list: a misspelt option
    (?levl=answer) would otherwise be ignored and its default used. Checked after the token and the role."""
    route = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", request.resolver_match.route)
    known = _query_names().get((route, request.method.lower()))
    unknown = sorted(set(request.GET) - known) if known is not None else []
    if unknown:
        raise BadRequest(
            "invalid request", [{"field": k, "message": "not a parameter of this endpoint"} for k in unknown]
        )


@cache
def _query_names():
    return {
        (path, method): {p["name"] for p in op.get("parameters", ()) if p["in"] == "query"}
        for path, ops in api.get_openapi_schema().get("paths", {}).items()
        for method, op in ops.items()
    }


def _docs_login(view):
    """The docs page needs a login; the OpenAPI schema a login or a token (so that tools can fetch it)."""
    if getattr(view, "func", None) is not openapi_json:
        return login_required(view)
    with_login = login_required(view)

    @wraps(view)
    def schema(request, *args, **kwargs):
        if not request.user.is_authenticated and TokenAuth()(request):
            return view(request, *args, **kwargs)
        return with_login(request, *args, **kwargs)

    return schema


api = NinjaAPI(
    title="Claim Audit API",
    version="1",
    description="Import answers, run the judge, draw audits, read reports and gold labels.",
    auth=TokenAuth(),
    docs_decorator=_docs_login,
    urls_namespace="api",
)
api.add_router("/", audit_router, auth=TokenAuth(roles.LEAD))
api.add_router("/", annotations_router, auth=TokenAuth(roles.LEAD))
api.add_router("/", progress_router, auth=TokenAuth(roles.LEAD, roles.ANNOTATOR))


def _error(request, status, message, errors=()):
    return api.create_response(request, {"message": message, "errors": list(errors)}, status=status)


@api.exception_handler(BadRequest)
def _bad_request(request, exc):
    return _error(request, exc.status, exc.message, exc.errors)


@api.exception_handler(NinjaValidationError)
def _invalid(request, exc):
    errors = [
        {"field": ".".join(str(x) for x in e.get("loc", ())[1:]) or "body", "message": e.get("msg", "invalid")}
        for e in exc.errors
    ]
    return _error(request, 400, "invalid request", errors)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return _error(request, 401, "a valid API token is required: Authorization: Bearer <token>")


@api.exception_handler(HttpError)
def _http_error(request, exc):
    return _error(request, exc.status_code, str(exc))


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return _error(request, 413, f"The JSON body is over {limit:,} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE).")


@api.exception_handler(Http404)
def _not_found(request, exc):
    return _error(request, 404, "not found")


def _token_only(view):
    """The site's login-required middleware leaves the API to the token check (docs keep their own)."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        return view(*args, **kwargs)

    wrapped.login_required = False
    wrapped.json_errors = True  # a request refused before the view (e.g. NUL in a field) answers JSON too
    return wrapped


patterns, app_name, namespace = api.urls
urls = ([path(str(p.pattern), _token_only(p.callback), name=p.name) for p in patterns], app_name, namespace)
