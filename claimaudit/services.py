"""Writes of the project package: personal API tokens."""

from django.utils import timezone

from claimaudit.models import ApiToken


class TokenError(ValueError):
    pass


def api_token_create(user, name):
    """(token row, raw token). The raw token is shown once; only its sha256 is kept."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise TokenError("a token needs a name of 1 to 100 characters")
    if not user.is_active:
        raise TokenError(f"user {user.username!r} is inactive: no token")
    return ApiToken.mint(user, name)


def api_token_revoke(user, token_id):
    """Revoke one of the user's own tokens; False when there is no such live token of theirs."""
    return bool(ApiToken.objects.filter(pk=token_id, user=user, revoked_at=None).update(revoked_at=timezone.now()))
