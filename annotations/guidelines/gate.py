"""Annotators and adjudicators read an audit's guidelines before their first answer in it; afterwards the
workspace and the adjudication page keep them one key away (`g`)."""

from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotations.models import Assignment, GuidelinesSeen
from audit import roles
from audit.guidelines.render import render_markdown
from audit.models import Audit, GuidelinesVersion
from audit.redirects import safe_next


def guidelines_for(user, audit_id):
    """The audit's current guidelines with `.seen` (this person read some version); None when the audit has
    none. Not rendered: the pages that only gate on them or offer the button do not need the HTML. Two plain
    queries (one without guidelines): on SQLite the seen check as an EXISTS annotation was slower than both."""
    g = (
        GuidelinesVersion.objects.filter(audit_id=audit_id)
        .order_by("-version")
        .only("id", "audit_id", "version", "text", "created_at")
        .first()
    )
    if g is not None:
        g.seen = GuidelinesSeen.objects.filter(user=user, audit_id=audit_id).exists()
    return g


def guidelines_gate(request, audit_id, guidelines):
    """A redirect to the guidelines page when this person has not read them yet, else None."""
    if guidelines is None or guidelines.seen:
        return None
    return redirect(f"{reverse('guidelines_read', args=[audit_id])}?next={request.get_full_path()}")


def _may_read(user, audit):
    if roles.has_role(user, roles.LEAD) or roles.has_role(user, roles.ADJUDICATOR):
        return True
    return Assignment.objects.filter(audit_answer__audit=audit, annotator=user).exists()


@require_http_methods(["GET", "HEAD", "POST"])
def guidelines_read(request, audit_id):
    audit = Audit.objects.filter(pk=audit_id).first()
    if audit is None or not _may_read(request.user, audit):
        raise Http404("No such audit.")
    g = guidelines_for(request.user, audit.pk)
    target = safe_next(request, reverse("home"))
    if request.method == "POST":
        if g is not None:
            GuidelinesSeen.objects.update_or_create(user=request.user, audit=audit, defaults={"version": g.version})
        return redirect(target)
    if g is not None:
        g.html = render_markdown(g.text)  # here only: the page and the dialog that show them
    if request.htmx and g is not None:  # the workspace's and adjudication's dialog, filled when first opened
        return render(request, "guidelines/_dialog.html#guidelines_content", {"guidelines": g})
    return render(request, "guidelines/read.html", {"audit": audit, "guidelines": g, "next": target})
