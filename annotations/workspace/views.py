"""The annotation workspace: thin views over selectors (reads) and services (writes).
Only the assignment's own annotator reaches any of it; everyone else gets 404."""

from functools import wraps

from django.contrib import messages
from django.http import HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotations.guidelines.gate import guidelines_for, guidelines_gate
from annotations.models import Assignment, Label
from annotations.workspace import selectors, services
from audit.redirects import safe_next
from audit.roles import annotator_required, lead_required

PAGE = "workspace/workspace.html"


def owned(*methods):
    """The view gets the request user's own assignment; anyone else's is a 404 whatever the method,
    so the URL space reveals nothing about other people's work."""

    def decorator(view):
        @wraps(view)
        @annotator_required
        def wrapped(request, assignment_id, *args, **kwargs):
            assignment = selectors.own_assignment(request.user, assignment_id)
            if request.method not in methods:
                return HttpResponseNotAllowed(methods)
            return view(request, assignment, *args, **kwargs)

        return wrapped

    return decorator


def _ctx(assignment, **extra):
    audit = assignment.audit_answer.audit
    locked = audit.is_closed or assignment.status == Assignment.Status.SUBMITTED
    return {
        "assignment": assignment,
        "audit": audit,
        "answer": assignment.audit_answer.answer,
        "locked": locked,
        # named: the row and passage partials test them, and a missing name is looked up through every context level
        "oob": False,
        "fresh_note": False,
        "error": "",
        "problems": None,
        **extra,
    }


@owned("GET", "HEAD")
def workspace(request, a):
    guidelines = guidelines_for(request.user, a.audit_answer.audit_id)  # read first, then `g` shows them
    gate = guidelines_gate(request, a.audit_answer.audit_id, guidelines)
    return gate or render(request, PAGE, _ctx(a, ws=selectors.workspace(a), guidelines=guidelines))


@annotator_required
@require_GET
def shortcuts(request):
    """The list of keys, put in its dialog the first time it opens rather than carried by every workspace page."""
    return render(request, f"{PAGE}#shortcuts", {"flag_names": selectors.FLAG_NAMES})


def _label_params(post):
    """Only the fields the request carries: each control saves its own field."""
    kw = {}
    if "verdict" in post:
        kw["verdict"] = post["verdict"]
    if "note" in post:
        kw["note"] = post["note"]
    flags = {f: post[f] for f in Label.FLAGS if f in post}  # a flag button posts the state it showed
    if bad := [f for f, shown in flags.items() if shown not in ("true", "false")]:
        raise services.Invalid(f"{', '.join(bad)}: must be true or false (the flag as shown).")
    if flags:
        kw["flags"] = {f: shown == "false" for f, shown in flags.items()}
    if post.get("evidence") == "clear":
        kw["evidence"] = None
    elif post.get("evidence") == "attach" or "passage" in post:
        kw["evidence"] = {k: post.get(k) for k in ("passage", "start", "end", "text")}
    return kw


def _status(e):
    return 409 if isinstance(e, services.Refused) else 400


def _refused(request, response, e):
    """A refusal of the workspace is the answer being locked (submitted in another tab, or the audit closed): the
    page reloads read-only rather than failing one control at a time, and says that what was pressed last (this
    change, and any the page held behind it) was not saved."""
    if isinstance(e, services.Refused):
        response["HX-Refresh"] = "true"
        messages.error(request, "Not saved: your last change came after this answer was locked (see below).")
    return response


def _grouped(problems):
    """The submit box's list: [(why, [claims])] in the order the claims come."""
    grouped = {}
    for claim, why in problems:
        grouped.setdefault(why, []).append(claim)
    return list(grouped.items())


def _problems_box(request, a):
    """The submit box out of band, its list recomputed: sent with a row's save while the page shows a list."""
    claims = selectors.answer_claims(a.audit_answer.answer_id, a.audit_answer.audit)
    problems = _grouped(services.submit_problems(a, claims, selectors.labels_by_claim(a)))
    return render_to_string(f"{PAGE}#submit_box", _ctx(a, problems=problems, oob=True), request)


def _row_html(request, a, claim, label, old, **ctx):
    """The claim's row, and the passages its evidence left or entered (out of band)."""
    html = render_to_string(f"{PAGE}#claim", _ctx(a, row=selectors.row(a, claim, label), **ctx), request)
    if old and "evidence" in old:
        moved = {label.evidence_passage_id, (old["evidence"] or {}).get("passage")} - {None}
        for passage, segs in selectors.passages_with_marks(a, moved):
            html += render_to_string(f"{PAGE}#passage", {"passage": passage, "segs": segs, "oob": True})
    return html


@annotator_required
def label_save(request, assignment_id, claim_id):
    """One control's field of one claim's label. The workspace posts once per verdict, so the service reads
    and locks the assignment itself, in one statement."""
    if request.method != "POST":
        selectors.own_assignment(request.user, assignment_id)  # someone else's is a 404 whatever the method
        return HttpResponseNotAllowed(["POST"])
    try:
        a, claim, label, old = services.own_claim_label_save(
            request.user, assignment_id, claim_id, **_label_params(request.POST)
        )
    except (services.Refused, services.Invalid) as e:
        a = selectors.own_assignment(request.user, assignment_id)
        claim = selectors.own_claim(a, claim_id)
        ctx = _ctx(a, row=selectors.row(a, claim), error=str(e))
        return _refused(request, render(request, f"{PAGE}#claim", ctx, status=_status(e)), e)
    html = _row_html(request, a, claim, label, old)
    if request.POST.get("problems_shown"):
        html += _problems_box(request, a)
    return HttpResponse(html)


@owned("POST")
def undo(request, a):
    """Revert the latest change: the response swaps the changed row (and passages) out of band."""
    try:
        claim, label, old = services.claim_label_undo(a, user=request.user)
    except (services.Refused, services.Invalid) as e:
        return _refused(request, HttpResponse(str(e), status=_status(e), content_type="text/plain"), e)
    html = _row_html(request, a, claim, label, old, oob=True, fresh_note=True)
    return HttpResponse(html + (_problems_box(request, a) if request.POST.get("problems_shown") else ""))


@owned("POST")
def answer_fields(request, a):
    kw = {"note": request.POST["note"]} if "note" in request.POST else {}
    if request.POST.get("field") == "omission":
        kw["omission"] = "checked" in request.POST
    status, error, refusal = 200, "", None
    try:
        services.assignment_fields_save(a, user=request.user, **kw)
    except (services.Refused, services.Invalid) as e:
        status, error, refusal = _status(e), str(e), e
    return _refused(request, render(request, f"{PAGE}#answer_fields", _ctx(a, error=error), status=status), refusal)


def _listed_rows(request, a, e):
    """The rows a refused submit names, as stored, out of band: another tab may have changed them since this page
    drew them, and the list must not point at a row that shows nothing wrong. A fixed number of queries."""
    listed = {claim.pk for claim, _ in getattr(e, "problems", [])}
    rows = [r for r in selectors.workspace(a)["rows"] if r.claim.pk in listed] if listed else []
    return "".join(render_to_string(f"{PAGE}#claim", _ctx(a, row=r, oob=True), request) for r in rows)


@owned("POST")
def submit(request, a):
    try:
        services.assignment_submit(a, request.user, seconds=request.POST.get("seconds", 0))
    except (services.Refused, services.Invalid) as e:
        if not request.htmx:
            messages.error(request, f"Not submitted: {e}")
            return redirect("workspace", a.pk)
        status = 409 if isinstance(e, services.Refused) else 422  # 422: the claims listed are not ready
        ctx = _ctx(a, error=str(e), problems=_grouped(getattr(e, "problems", [])))
        html = render_to_string(f"{PAGE}#submit_box", ctx, request) + _listed_rows(request, a, e)
        return _refused(request, HttpResponse(html, status=status), e)
    nxt = selectors.progress(a)["next_open_id"]
    url = reverse("workspace", args=[nxt]) if nxt else reverse("queue", args=[a.audit_answer.audit_id])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@owned("POST")
def time_add(request, a):
    services.assignment_time_add(a, request.POST.get("seconds", 0))
    return HttpResponse(status=204)


@require_GET
@annotator_required
def queue(request, audit_id):
    audit, items = selectors.queue(request.user, audit_id)
    done = sum(i.status == Assignment.Status.SUBMITTED for i in items)
    nxt = next((i.pk for i in items if i.status != Assignment.Status.SUBMITTED), None)
    status, q = request.GET.get("status", ""), request.GET.get("q", "").strip()[:200]
    shown = [
        i
        for i in items
        if (not status or i.status == status) and q.casefold() in i.audit_answer.answer.question.casefold()
    ]
    ctx = {"audit": audit, "items": items, "shown": shown, "done": done, "next_id": nxt, "status": status, "q": q}
    ctx["statuses"] = Assignment.Status.choices
    return render(request, "workspace/queue.html", ctx)


@require_POST
@lead_required
def reopen(request, assignment_id):
    """A lead unlocks a submitted answer, with a reason. Form: templates/workspace/_reopen.html."""
    a = selectors.any_assignment(assignment_id)
    try:
        services.assignment_reopen(a, request.user, request.POST.get("reason", ""))
        messages.success(request, f"Answer {a.audit_answer.position + 1} reopened for {a.annotator}.")
    except (services.Refused, services.Invalid) as e:
        messages.error(request, f"Not reopened: {e}")
    return redirect(safe_next(request, reverse("home")))
