from audit.models import GuidelinesVersion


def guidelines_current(audit_id):
    """The audit's latest guidelines version (with its author), or None."""
    return (
        GuidelinesVersion.objects.filter(audit_id=audit_id)
        .select_related("author", "copied_from__audit")
        .order_by("-version")
        .first()
    )


def guidelines_versions(audit_id):
    return list(GuidelinesVersion.objects.filter(audit_id=audit_id).select_related("author").order_by("-version")[:200])
