from django import forms

from audit.models import Dataset


class StartRunForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all(), empty_label=None)
    backend = forms.ChoiceField(choices=[("anthropic", "Anthropic LLM"), ("offline", "Offline baseline (no API)")])
    use_batch = forms.BooleanField(required=False, label="Batch API (about half price, results within 24 h)")
    budget_usd = forms.FloatField(required=False, min_value=0.01, label="Budget (USD)")
    budget_tokens = forms.IntegerField(required=False, min_value=1, label="Budget (tokens)")


class ResumeForm(forms.Form):
    retry_failed = forms.BooleanField(required=False)
    budget_usd = forms.FloatField(required=False, min_value=0.01)
    budget_tokens = forms.IntegerField(required=False, min_value=1)
