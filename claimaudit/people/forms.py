import unicodedata

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator

from annotations.assignments import selectors as assignment_selectors
from audit import roles

ROLE_CHOICES = [(short, short) for short in roles.BY_SHORT_NAME]


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple)


class PersonForm(RolesForm):
    username = forms.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    email = forms.EmailField(required=False, max_length=254)
    field_order = ["username", "email", "roles"]

    def clean_username(self):
        # The login form's normalisation; names differing only in case are one person (one throttle counter).
        name = unicodedata.normalize("NFKC", self.cleaned_data["username"]).strip()
        if get_user_model().objects.filter(username__iexact=name).exists():
            raise forms.ValidationError(f"{name} is taken (names differing only in case count as the same).")
        return name


class DeactivateForm(forms.Form):
    reason = forms.CharField(max_length=500, required=False)


class ReassignForm(forms.Form):
    """Whom a person's open work goes to: an active annotator other than the person."""

    to = forms.ModelChoiceField(assignment_selectors.annotators(), label="Reassign all open assignments to")

    def __init__(self, *args, person, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["to"].queryset = self.fields["to"].queryset.exclude(pk=person.pk)
        self.fields["to"].label_from_instance = lambda u: u.get_username()
