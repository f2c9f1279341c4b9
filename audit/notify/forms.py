from django import forms
from django.core.validators import URLValidator


class EmailSettingsForm(forms.Form):
    email_enabled = forms.BooleanField(required=False, label="Email me about my audits, runs and imports")


class WebhookForm(forms.Form):
    webhook_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        validators=[URLValidator(schemes=["http", "https"])],
        label="Webhook URL",
        help_text="Empty: no webhook. Events are POSTed as JSON, signed with HMAC-SHA256.",
    )
    new_secret = forms.BooleanField(required=False, label="Generate a new signing secret")
