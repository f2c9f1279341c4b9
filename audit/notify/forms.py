from django import forms
from django.core.validators import URLValidator


class EmailSettingsForm(forms.Form):
    email_enabled = forms.BooleanField(required=False, label="Email me about my audits, runs and imports")


class HttpURLField(forms.URLField):
    """A URL with the http or https scheme. Replaces URLField's own validator rather than adding a second one
    (both would say "Enter a valid URL." of the same bad value)."""

    default_validators = [URLValidator(schemes=["http", "https"])]


class WebhookForm(forms.Form):
    webhook_url = HttpURLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        label="Webhook URL",
        help_text="Empty: no webhook. Events are POSTed as JSON, signed with HMAC-SHA256.",
    )
    new_secret = forms.BooleanField(required=False, label="Generate a new signing secret")
