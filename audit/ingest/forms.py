from django import forms
from django.template.defaultfilters import filesizeformat

from audit.ingest.formats import FORMATS, MappingError, parse_mapping
from audit.ingest.spool import max_upload_bytes

FORMAT_LABELS = {
    "auto": "Detect from the fields",
    "native": "Native (id, question, answer, passages)",
    "ragas": "Ragas samples (user_input, response, retrieved_contexts; or question, answer, contexts)",
    "deepeval": "DeepEval test cases or a test run (input, actual_output, retrieval_context)",
    "langchain": "LangChain output or LangSmith runs (input, answer, context documents)",
    "ragtruth": "RAGTruth responses joined to source_info (response, source_info.question, source_info.passages)",
    "mapping": "Field mapping (below)",
}


class ImportForm(forms.Form):
    file = forms.FileField(label="File (.jsonl, .json, .csv or .parquet; .gz too)")
    format = forms.ChoiceField(choices=[(f, FORMAT_LABELS[f]) for f in FORMATS], initial="auto", required=False)
    mapping = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Field mapping, one target=source a line (e.g. question=prompt, passage.text=content)",
    )
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

    def clean_mapping(self):
        try:
            return parse_mapping(line for line in self.cleaned_data["mapping"].splitlines() if line.strip())
        except MappingError as e:
            raise forms.ValidationError(str(e)) from None

    def clean(self):
        data = super().clean()
        chosen, typed = (data.get("dataset") or "").strip(), (data.get("new_dataset") or "").strip()
        data["dataset_name"] = typed or chosen
        if not data["dataset_name"]:
            self.add_error("new_dataset", "Choose a dataset or type a new name.")
        elif chosen and typed and chosen != typed:  # which one was meant? never guess where answers go
            self.add_error("new_dataset", f"Choose the dataset {chosen} or type the new name {typed}, not both.")
        data["judge_name"] = (data.get("judge_name") or "").strip() or "external"
        data["format"] = data.get("format") or "auto"
        if data.get("mapping") and data["format"] not in ("auto", "mapping"):
            self.add_error("mapping", "A field mapping goes with the 'Field mapping' format.")
        elif data["format"] == "mapping" and "mapping" in data and not data["mapping"]:
            self.add_error("mapping", "Give at least one target=source line.")
        return data
