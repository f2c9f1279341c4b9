from django import forms

from annotations.assignments import selectors


def _annotator_field(multiple=False):
    cls = forms.ModelMultipleChoiceField if multiple else forms.ModelChoiceField
    kwargs = {"widget": forms.CheckboxSelectMultiple} if multiple else {}
    field = cls(selectors.annotators(), **kwargs)
    field.label_from_instance = lambda u: u.get_username()
    return field


class AssignForm(forms.Form):
    annotators = _annotator_field(multiple=True)


class AnnotatorForm(forms.Form):
    annotator = _annotator_field()
