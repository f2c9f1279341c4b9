from audit.models import GuidelinesVersion


def guidelines_versions(audit_id):
    return list(GuidelinesVersion.objects.filter(audit_id=audit_id).select_related("author").order_by("-version")[:200])
