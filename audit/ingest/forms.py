from django import forms
from django.template.defaultfilters import filesizeformat

from audit.ingest.spool import max_upload_bytes


class ImportForm(forms.Form):
    file = forms.FileField(label="File (.jsonl or .csv)")
    dataset = forms.CharField(required=False, max_length=100)  # an existing dataset's name (select)
    new_dataset = forms.CharField(required=False, max_length=100, label="or a new dataset")
    update = forms.BooleanField(required=False, label="Replace changed answers (like --update)")
    judge_name = forms.CharField(
        required=False, max_length=200, initial="external", label="Name of the judge behind imported verdicts"
    )

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > max_upload_bytes():
            raise forms.ValidationError(
                f"The file is {filesizeformat(f.size)}; the limit is "
                f"{filesizeformat(max_upload_bytes())}. Use the import_answers command."
            )
        return f

    def clean(self):
        data = super().clean()
        data["dataset_name"] = (data.get("new_dataset") or "").strip() or (data.get("dataset") or "").strip()
        if not data["dataset_name"]:
            self.add_error("new_dataset", "Choose a dataset or type a new name.")
        data["judge_name"] = (data.get("judge_name") or "").strip() or "external"
        return data
