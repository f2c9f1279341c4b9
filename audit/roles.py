"""The three roles are Django groups; a person may hold several."""

from functools import wraps

from django.core.exceptions import PermissionDenied

LEAD = "audit leads"
ANNOTATOR = "annotators"
ADJUDICATOR = "adjudicators"
ALL = (LEAD, ANNOTATOR, ADJUDICATOR)
BY_SHORT_NAME = {"lead": LEAD, "annotator": ANNOTATOR, "adjudicator": ADJUDICATOR}


def role_names(user):
    """The user's role names, read once per request (the login backend reads them with the user)."""
    if not user.is_authenticated:
        return set()
    if not hasattr(user, "_role_names"):
        remember_role_names(user, user.groups.values_list("name", flat=True))
    return user._role_names


def remember_role_names(user, names):
    user._role_names = set(names)


def has_role(user, role):
    return user.is_superuser or role in role_names(user)


def role_required(role):
    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not has_role(request.user, role):
                raise PermissionDenied(f"This page is for {role}.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


lead_required = role_required(LEAD)
annotator_required = role_required(ANNOTATOR)
adjudicator_required = role_required(ADJUDICATOR)
