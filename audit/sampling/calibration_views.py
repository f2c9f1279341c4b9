"""The page that creates a claim-level calibration sample (audit.sampling.calibration)."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render

from audit.models import Audit, Dataset, JudgeVersion
from audit.roles import lead_required
from audit.sampling.calibration import DEFAULT_SIZE, calibration_audit_create
from audit.sampling.services import SEED_MAX


class CalibrationForm(forms.Form):
    name = forms.CharField(max_length=100)
    dataset = forms.ModelChoiceField(Dataset.objects.all())
    judge_version = forms.ModelChoiceField(
        JudgeVersion.objects.filter(level="claim"), help_text="Claims are stratified by this version's verdict."
    )
    size = forms.IntegerField(min_value=1, max_value=5000, initial=DEFAULT_SIZE)
    meta_field = forms.CharField(
        max_length=100, required=False, help_text="Optional: also stratify by meta.FIELD (FIELD.KEY: nested)."
    )
    seed = forms.IntegerField(required=False, min_value=0, max_value=SEED_MAX, help_text="Empty: a random seed.")

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if Audit.objects.filter(name=name).exists():
            raise forms.ValidationError("An audit with this name exists already.")
        return name


@lead_required
def calibration_new(request):
    form = CalibrationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            audit = calibration_audit_create(
                name=d["name"], dataset=d["dataset"], version=d["judge_version"], size=d["size"], seed=d["seed"],
                meta_field=d["meta_field"] or None, user=request.user,
            )  # fmt: skip
        except ValidationError as exc:
            form.add_error(None, exc if hasattr(exc, "error_dict") else " ".join(exc.messages))
        else:
            messages.success(request, f"Calibration sample {audit.name}: {audit.calibration_items.count()} claims.")
            return redirect("audit_detail", audit.id)
    return render(request, "sampling/calibration_new.html", {"form": form}, status=400 if form.errors else 200)
