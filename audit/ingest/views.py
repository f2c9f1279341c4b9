import re

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat

from audit.guidelines.render import render_markdown
from audit.ingest import selectors
from audit.ingest.forms import ImportForm, max_upload_bytes
from audit.ingest.services import import_upload
from audit.models import ImportBatch
from audit.roles import lead_required

FORM_OVERHEAD = 64 * 1024  # multipart headers and the other fields
HTMX_STOP_POLLING = 286  # htmx swaps this response, then stops polling


# The import sections of the README (the native shape, the formats) and the tools' shapes, shown in the app.
IMPORT_DOCS = (("README.md", ("Importing answers", "Import formats")), ("docs/IMPORT_SHAPES.md", None))
SHAPES_LINK = ("](docs/IMPORT_SHAPES.md)", "](#tool-shapes)")  # the README links the shapes; here they follow


def _doc(path, sections):
    """A Markdown file of the repository, or only its `### ` sections whose titles start so."""
    try:
        text = (settings.BASE_DIR / path).read_text(encoding="utf-8")
    except OSError:
        return f"*{path} is not part of this installation.*"
    if sections:
        text = "".join("## " + part for part in re.split(r"(?m)^### ", text)[1:] if part.startswith(sections))
    return text


def _body_too_big(request):
    # Checked before request.FILES is touched, so an oversized body is never read or spooled to disk.
    return int(request.META.get("CONTENT_LENGTH") or 0) > max_upload_bytes() + FORM_OVERHEAD


@lead_required
def import_page(request):
    """Upload a file: small ones import in the request, larger ones are queued for the task worker and the
    result section polls their progress (import_batch)."""
    form, batch, too_big, status = ImportForm(), None, None, 200
    if request.method == "POST" and _body_too_big(request):
        too_big, status = f"The upload is over the {filesizeformat(max_upload_bytes())} limit.", 413
    elif request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            d = form.cleaned_data
            batch = import_upload(
                d["file"],
                dataset_name=d["dataset_name"],
                user=request.user,
                update=d["update"],
                judge_name=d["judge_name"],
                fmt=d["format"],
                mapping=d["mapping"],
            )
        status = 400 if not batch or batch.status == batch.Status.FAILED else 202 if batch.is_active else 200
        if status != 400:  # a fresh form, pointing at the dataset just filled
            form = ImportForm(initial={"dataset": batch.dataset_name, "judge_name": d["judge_name"]})
    return _page(request, form, batch, too_big, status, choose_again=status in (400, 413))


@lead_required
def import_batch(request, batch_id):
    """One import: its progress while queued or running (htmx polls the result section), then its outcome."""
    try:
        batch = selectors.import_batch(batch_id)
    except ImportBatch.DoesNotExist:
        raise Http404 from None
    if request.htmx:
        return render(
            request,
            "ingest/import.html#import_result",
            {"batch": batch},
            status=200 if batch.is_active else HTMX_STOP_POLLING,
        )
    return _page(request, ImportForm(initial={"dataset": batch.dataset_name}), batch, None, 200)


def _page(request, form, batch, too_big, status, *, choose_again=False):
    """choose_again: the upload was refused and the form comes back, its file field empty (no browser keeps
    a file input's value across a response): say so next to the field."""
    ctx = {
        "choose_again": choose_again,
        "form": form,
        "batch": batch,
        "too_big": too_big,
        "max_bytes": max_upload_bytes(),
        "inline_bytes": settings.IMPORT_INLINE_BYTES,
        "datasets": selectors.dataset_names(),
        "recent": selectors.recent_imports(),
    }
    # htmx swaps only 2xx responses: for htmx the outcome is in the content, not the status.
    return render(
        request,
        "ingest/import.html#import_panel" if request.htmx else "ingest/import.html",
        ctx,
        status=200 if request.htmx else status,
    )


@lead_required
def import_formats(request):
    """What a file to import may hold, as the repository documents it, for a lead without the repository."""
    docs = [render_markdown(_doc(path, sections).replace(*SHAPES_LINK)) for path, sections in IMPORT_DOCS]
    return render(request, "ingest/formats.html", {"docs": docs})
