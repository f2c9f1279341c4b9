from django.shortcuts import render
from django.template.defaultfilters import filesizeformat

from audit.ingest import selectors
from audit.ingest.forms import ImportForm, max_upload_bytes
from audit.ingest.services import answers_import
from audit.roles import lead_required

FORM_OVERHEAD = 64 * 1024  # multipart headers and the other fields


@lead_required
def import_page(request):
    """Upload a file and import it synchronously (the request lasts as long as the import)."""
    batch, status, too_big = None, 200, None
    form = ImportForm()
    if request.method == "POST":
        # Refuse an oversized body before Django reads and spools it.
        if int(request.META.get("CONTENT_LENGTH") or 0) > max_upload_bytes() + FORM_OVERHEAD:
            too_big, status = f"The upload is over the {filesizeformat(max_upload_bytes())} limit.", 413
        else:
            form = ImportForm(request.POST, request.FILES)
            if form.is_valid():
                d = form.cleaned_data
                batch = answers_import(d["file"], dataset_name=d["dataset_name"], file_name=d["file"].name,
                                       user=request.user, update=d["update"], judge_name=d["judge_name"])
            status = 200 if batch and batch.status != batch.Status.FAILED else 400
    ctx = {"form": form, "batch": batch, "too_big": too_big, "max_bytes": max_upload_bytes(),
           "datasets": selectors.dataset_names(), "recent": selectors.recent_imports()}
    # htmx only swaps 2xx responses: the outcome is in the content.
    return render(request, "ingest/import.html#import_panel" if request.htmx else "ingest/import.html", ctx,
                  status=200 if request.htmx else status)
