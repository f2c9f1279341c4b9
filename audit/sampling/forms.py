from django import forms
from django.core.exceptions import ValidationError

from audit.models import Audit, Dataset, JudgeVersion, Policy
from audit.sampling import population as pop
from audit.sampling.allocation import DEFAULT_FAIL_RATE
from audit.sampling.services import SEED_MAX, check_inputs


def refusal_fields(exc):
    """A preview's or draw's refusal as [(field, message)], the one reading of it for the New audit page and the
    audits API: a ValidationError's own fields, a stratification key's refusal on strata, else no field (None)."""
    if isinstance(exc, ValidationError) and hasattr(exc, "error_dict"):
        return [(field, " ".join(messages)) for field, messages in exc.message_dict.items()]
    field = "strata" if isinstance(exc, pop.StrataError) else None
    return [(field, " ".join(getattr(exc, "messages", [str(exc)])))]


def _lines(text, what):
    """'key = value' lines -> [(key, value)]; the value is after the LAST '=' (stratum labels contain '=')."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if "=" not in line:
            raise forms.ValidationError(f"{what}, line {n}: expected 'name = value', got {line.strip()!r}.")
        key, value = line.rsplit("=", 1)
        out.append((key.strip(), value.strip()))
    return out


class AuditForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="e.g. 2026-W48")
    dataset = forms.ModelChoiceField(Dataset.objects.all())
    created_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    created_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    meta_filters = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="One 'field = value' per line (field.key: nested): keep answers whose metadata matches.",
    )
    exclude_audited = forms.BooleanField(required=False, label="Exclude answers already in an audit")
    size = forms.IntegerField(min_value=1, max_value=5000, initial=150)
    strata = forms.CharField(
        required=False,
        label="Strata keys",
        help_text="Comma separated: judge, length, meta.FIELD (meta.FIELD.KEY: nested). Empty: simple random sample.",
    )
    judge_version = forms.ModelChoiceField(
        JudgeVersion.objects.all(),
        required=False,
        help_text="For the judge key; default: the latest with verdicts here.",
    )
    allocation = forms.ChoiceField(choices=Audit.Allocation.choices, initial="proportional")
    default_fail_rate = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=DEFAULT_FAIL_RATE,
        required=False,
        label="Expected failure rate (Neyman)",
        help_text="Needed for Neyman allocation only.",
    )
    fail_rates = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Per-stratum failure rates",
        help_text="One 'stratum = rate' per line, e.g. 'judge=fail = 0.6'.",
    )
    min_per_stratum = forms.IntegerField(min_value=0, max_value=5000, initial=0)
    seed = forms.IntegerField(required=False, min_value=0, max_value=SEED_MAX, help_text="Empty: a random seed.")
    policy = forms.ChoiceField(
        choices=Policy.choices,
        initial=Policy.STRICT,
        required=False,
        help_text="Default strict; the report shows both.",
    )

    def clean_policy(self):
        return self.cleaned_data["policy"] or Policy.STRICT

    def clean_strata(self):
        try:
            return pop.parse_strata_keys(self.cleaned_data["strata"])
        except pop.StrataError as e:
            raise forms.ValidationError(str(e))

    def clean_meta_filters(self):
        pairs = _lines(self.cleaned_data["meta_filters"], "Metadata filters")
        for key, _ in pairs:
            if not pop.meta_path_ok(key):
                raise forms.ValidationError(f"Metadata field {key!r}: use letters, digits, '_' or '-' (a.b: nested).")
        return dict(pairs)

    def clean_fail_rates(self):
        rates = {}
        for key, value in _lines(self.cleaned_data["fail_rates"], "Failure rates"):
            try:
                rates[key] = float(value)
            except ValueError:
                raise forms.ValidationError(f"Failure rate for {key!r} is not a number: {value!r}.")
            if not 0 <= rates[key] <= 1:
                raise forms.ValidationError(f"Failure rate for {key!r} must be between 0 and 1.")
        return rates

    def clean(self):
        d = super().clean()
        if (
            d.get("allocation") == "neyman"
            and d.get("default_fail_rate") is None
            and "default_fail_rate" not in self.errors
        ):
            self.add_error("default_fail_rate", "Neyman allocation needs an expected failure rate.")
        elif d.get("default_fail_rate") is None:
            d["default_fail_rate"] = DEFAULT_FAIL_RATE  # unused by the other allocations
        window = {k: d.get(k) and d[k].isoformat() for k in ("created_from", "created_to")}
        if d.get("size") is not None and d.get("min_per_stratum") is not None:
            try:
                check_inputs(window, d["size"], d["min_per_stratum"])
            except ValidationError as e:
                self.add_error(None, e)
        return d

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if name and Audit.objects.filter(name=name).exists():
            raise forms.ValidationError("An audit with this name exists already.")
        return name

    def service_kwargs(self):
        d = self.cleaned_data
        f = {"meta": d["meta_filters"], "exclude_audited": d["exclude_audited"]}
        if d["created_from"]:
            f["created_from"] = d["created_from"].isoformat()
        if d["created_to"]:
            f["created_to"] = d["created_to"].isoformat()
        if d["judge_version"]:
            f["judge_version"] = d["judge_version"].id
        return {
            "dataset": d["dataset"],
            "population_filter": f,
            "strata_keys": d["strata"],
            "allocation_method": d["allocation"],
            "size": d["size"],
            "min_per_stratum": d["min_per_stratum"],
            "expected_fail_rates": {"*": d["default_fail_rate"], **d["fail_rates"]},
        }


class JudgeForm(forms.Form):
    backend = forms.ChoiceField(choices=[("offline", "Offline baseline (no API)"), ("anthropic", "Anthropic LLM")])
