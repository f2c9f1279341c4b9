from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audit.guidelines import selectors, services
from audit.guidelines.render import render_markdown
from audit.models import Audit
from audit.roles import lead_required


@lead_required
def guidelines_edit(request, audit_id):
    """The lead's page: the current guidelines rendered, the editor, and every earlier version (one of them
    shown with ?version=N, rendered and as its Markdown source)."""
    audit = get_object_or_404(Audit, pk=audit_id)
    if request.method == "POST":
        try:
            services.guidelines_save(audit, request.POST.get("text", ""), request.user)
        except ValidationError as e:
            return _page(request, audit, error=" ".join(e.messages), text=request.POST.get("text", ""))
        messages.success(request, "Guidelines saved as a new version.")
        return redirect("guidelines_edit", audit.pk)
    return _page(request, audit, wanted=request.GET.get("version", ""))


@require_POST
@lead_required
def guidelines_restore(request, audit_id):
    """Save an earlier version's text as the newest version (the versions in between stay)."""
    audit = get_object_or_404(Audit, pk=audit_id)
    raw = request.POST.get("version", "")
    try:
        number = _version_number(raw)
        version, restored = services.guidelines_restore(audit, number, request.user)
    except ValidationError as e:
        return _page(request, audit, error=" ".join(e.messages), wanted=raw)
    if restored:
        messages.success(request, f"Version {number} restored: saved as version {version.version}.")
    else:
        messages.info(request, f"Version {number} is the current text already: nothing saved.")
    return redirect("guidelines_edit", audit.pk)


def _version_number(raw):
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9:
        raise ValidationError("Version: a version number (1, 2, ...) is needed.")
    return int(raw)


def _page(request, audit, *, error=None, text=None, wanted=""):
    """The page, with `error` (status 400) and the text the editor keeps (else the current version's)."""
    versions = selectors.guidelines_versions(audit.pk)
    shown = next((v for v in versions if str(v.version) == wanted), versions[0] if versions else None)
    ctx = {
        "audit": audit,
        "versions": versions,
        "shown": shown,
        "html": render_markdown(shown.text) if shown else "",
        "text": text if text is not None else (versions[0].text if versions else ""),
        "error": error,
        "max_chars": services.MAX_CHARS,
    }
    return render(request, "guidelines/edit.html", ctx, status=400 if error else 200)
