import unicodedata

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.db.models import Count, Q, Subquery

from annotations.assignments import selectors as assignment_selectors
from annotations.models import Assignment
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
        # offered: whoever can take at least one of the person's assignments not started (who is not already the
        # other annotator of every one of them); one query, run when the select renders
        waiting = Assignment.objects.filter(annotator=person, status=Assignment.Status.ASSIGNED)
        total = waiting.order_by().values("annotator").annotate(n=Count("pk")).values("n")
        on_them = Count("assignments", filter=Q(assignments__audit_answer__in=waiting.values("audit_answer")))
        takers = self.fields["to"].queryset.exclude(pk=person.pk).annotate(on_them=on_them)
        self.fields["to"].queryset = takers.filter(on_them__lt=Subquery(total))
        self.fields["to"].label_from_instance = lambda u: u.get_username()
