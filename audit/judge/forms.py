from django import forms
from django.conf import settings

from audit.models import Dataset
from audit.validation import BIGINT_MAX


class StartRunForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all(), empty_label=None)
    backend = forms.ChoiceField(choices=[("anthropic", "Anthropic LLM"), ("offline", "Offline baseline (no API)")])
    use_batch = forms.BooleanField(required=False, label="Batch API (about half price, results within 24 h)")
    budget_usd = forms.FloatField(required=False, min_value=0.01, label="Budget (USD)")
    budget_tokens = forms.IntegerField(required=False, min_value=1, max_value=BIGINT_MAX, label="Budget (tokens)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Without a key the LLM judge can only be refused: offer the baseline that runs.
        self.llm_ready = bool(settings.ANTHROPIC_API_KEY)
        self.fields["backend"].initial = "anthropic" if self.llm_ready else "offline"
        self.fields["backend"].widget.attrs["aria-describedby"] = "backend-help"


class EstimateForm(forms.Form):
    """The start form's scope and backend, read from the query string for the bill before the run."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all())
    backend = forms.ChoiceField(choices=StartRunForm.base_fields["backend"].choices)
    use_batch = forms.BooleanField(required=False)


class ResumeForm(forms.Form):
    retry_failed = forms.BooleanField(required=False)
    budget_usd = forms.FloatField(required=False, min_value=0.01)
    budget_tokens = forms.IntegerField(required=False, min_value=1, max_value=BIGINT_MAX)
