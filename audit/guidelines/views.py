from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render

from audit.guidelines import selectors, services
from audit.guidelines.render import render_markdown
from audit.models import Audit
from audit.roles import lead_required


@lead_required
def guidelines_edit(request, audit_id):
    """The lead's page: the current guidelines rendered, the editor, and every earlier version."""
    audit = get_object_or_404(Audit, pk=audit_id)
    error = None
    if request.method == "POST":
        try:
            services.guidelines_save(audit, request.POST.get("text", ""), request.user)
        except ValidationError as e:
            error = " ".join(e.messages)
        else:
            messages.success(request, "Guidelines saved as a new version.")
            return redirect("guidelines_edit", audit.pk)
    versions = selectors.guidelines_versions(audit.pk)
    wanted = request.GET.get("version", "")
    shown = next((v for v in versions if str(v.version) == wanted), versions[0] if versions else None)
    ctx = {
        "audit": audit,
        "versions": versions,
        "shown": shown,
        "html": render_markdown(shown.text) if shown else "",
        "text": request.POST.get("text", "") if error else (versions[0].text if versions else ""),
        "error": error,
        "max_chars": services.MAX_CHARS,
    }
    return render(request, "guidelines/edit.html", ctx, status=400 if error else 200)
