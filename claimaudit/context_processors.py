from audit import roles


def roles_context(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "is_lead": roles.has_role(user, roles.LEAD),
        "is_annotator": roles.has_role(user, roles.ANNOTATOR),
        "is_adjudicator": roles.has_role(user, roles.ADJUDICATOR),
    }
