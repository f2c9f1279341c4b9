from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audit.models import Audit, NotificationSettings
from audit.notify import forms, services
from audit.roles import lead_required


def email_settings(request):
    """Any signed-in person: email notifications on or off."""
    if request.method == "POST":
        form = forms.EmailSettingsForm(request.POST)
        if form.is_valid():
            services.email_settings_save(request.user, email_enabled=form.cleaned_data["email_enabled"])
            messages.success(request, "Saved.")
            return redirect("email_settings")
    row = NotificationSettings.objects.filter(user=request.user).first()
    form = forms.EmailSettingsForm(initial={"email_enabled": row.email_enabled if row else True})
    return render(request, "notify/settings.html", {"form": form})


@lead_required
@require_POST
def audit_webhook(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    form = forms.WebhookForm(request.POST)
    if form.is_valid():
        d = form.cleaned_data
        services.audit_webhook_save(audit, url=d["webhook_url"], new_secret=d["new_secret"], user=request.user)
        messages.success(request, "Webhook saved." if d["webhook_url"] else "Webhook removed.")
        return redirect("audit_detail", audit.pk)
    errors = "; ".join(f"{form.fields[f].label} ({f}): {' '.join(e)}" for f, e in form.errors.items())
    ctx = {"audit": audit, "errors": errors, "sent_url": request.POST.get("webhook_url", "")}
    return render(request, "notify/webhook_error.html", ctx, status=400)
