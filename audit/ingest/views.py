from django.shortcuts import render
from django.template.defaultfilters import filesizeformat

from audit.ingest import selectors
from audit.ingest.forms import ImportForm, max_upload_bytes
from audit.ingest.services import answers_import
from audit.roles import lead_required

FORM_OVERHEAD = 64 * 1024  # multipart headers and the other fields


def _body_too_big(request):
    # Checked before request.FILES is touched, so an oversized body is never read or spooled to disk.
    return int(request.META.get("CONTENT_LENGTH") or 0) > max_upload_bytes() + FORM_OVERHEAD


@lead_required
def import_page(request):
    """Upload a file and import it synchronously (the request lasts as long as the import)."""
    form, batch, too_big, status = ImportForm(), None, None, 200
    if request.method == "POST" and _body_too_big(request):
        too_big, status = f"The upload is over the {filesizeformat(max_upload_bytes())} limit.", 413
    elif request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            d = form.cleaned_data
            batch = answers_import(d["file"], dataset_name=d["dataset_name"], file_name=d["file"].name,
                                   user=request.user, update=d["update"], judge_name=d["judge_name"])
        status = 200 if batch and batch.status != batch.Status.FAILED else 400
        if status == 200:  # a fresh form, pointing at the dataset just filled
            form = ImportForm(initial={"dataset": batch.dataset.name, "judge_name": d["judge_name"]})
    ctx = {"form": form, "batch": batch, "too_big": too_big, "max_bytes": max_upload_bytes(),
           "datasets": selectors.dataset_names(), "recent": selectors.recent_imports()}
    # htmx swaps only 2xx responses: for htmx the outcome is in the content, not the status.
    return render(request, "ingest/import.html#import_panel" if request.htmx else "ingest/import.html", ctx,
                  status=200 if request.htmx else status)
