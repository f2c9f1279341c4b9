from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotations.adjudication import export, selectors, services
from annotations.guidelines.gate import guidelines_for, guidelines_gate
from audit import roles
from audit.models import Audit, AuditAnswer, Verdict
from audit.redirects import safe_next
from audit.validation import row_id

GOLD_CONTEXT = {"verdict_choices": Verdict.choices, "verdict_sets": Verdict.sets()}


@roles.adjudicator_required
def queue(request):
    done = request.GET.get("done", "")  # the audit whose last dispute the adjudicator just left
    status, q = request.GET.get("status", ""), request.GET.get("q", "").strip()[:200]
    status = status if status in ("open", "resolved") else ""
    audits = selectors.filter_queue(selectors.adjudication_queue(request.user), status, q)
    ctx = {"audits": audits, "done": row_id(done), "status": status, "q": q}
    return render(request, "adjudication/queue.html", ctx)


def _item_or_404(request, audit_id, item_id):
    try:
        item = selectors.adjudication_item(audit_id, item_id)
    except AuditAnswer.DoesNotExist:
        raise Http404("No such answer in this audit.") from None
    try:
        services.check_may_adjudicate(request.user, item, item.assignment_list)
    except PermissionDenied as e:
        raise Http404(str(e)) from None
    item.slots = {a.slot: a for a in item.assignment_list}
    return item


def _current_row(rows, claim_id):
    wanted = [r for r in rows if str(r["claim"].id) == claim_id]
    return (wanted or [r for r in rows if r["kind"] == "disputed"] or rows or [None])[0]


@roles.adjudicator_required
@require_GET
def adjudicate(request, audit_id, item_id):
    item = _item_or_404(request, audit_id, item_id)
    rows = selectors.claim_rows(item)
    current = _current_row(rows, request.GET.get("claim", ""))
    by_kind = {k: [r for r in rows if r["kind"] == k] for k in ("disputed", "judge_review", "agreed")}
    partial = request.htmx and request.htmx.target == "passages"
    guidelines = None if partial else guidelines_for(request.user, audit_id)  # read first, then `g`
    if gate := guidelines_gate(request, audit_id, guidelines):
        return gate
    nav = {} if partial else selectors.adjudication_neighbours(request.user, item.audit, item)
    ctx = {
        **GOLD_CONTEXT,
        **nav,
        "item": item,
        "audit": item.audit,
        "current": current,
        "disputed": by_kind["disputed"],
        "review": by_kind["judge_review"],
        "agreed": by_kind["agreed"],
        "answer_segments": selectors.answer_segments(item.answer),
        "passages": selectors.passage_segments(item.answer.passage_list, current),
        "guidelines": guidelines,
    }
    return render(request, "adjudication/adjudicate.html#passages" if partial else "adjudication/adjudicate.html", ctx)


@roles.adjudicator_required
@require_POST
def gold_save(request, audit_id, item_id, claim_id):
    item = _item_or_404(request, audit_id, item_id)
    row = next((r for r in selectors.claim_rows(item) if r["claim"].id == claim_id), None)
    if row is None:
        raise Http404("No such claim in this answer.")
    post, status, error = request.POST, 200, ""
    try:
        row["gold"] = services.gold_adjudicate(
            item.audit,
            row["claim"],
            user=request.user,
            verdict=post.get("verdict", ""),
            evidence=post.get("evidence", "none"),
            passage=post.get("passage"),
            start=post.get("start"),
            end=post.get("end"),
            reason=post.get("reason", ""),
            expected_version=_int(post.get("version")),
        )
        post = None  # saved: the block shows the stored value, not the form as sent
    except services.StaleGold as e:
        row["gold"], status, error = e.current, 409, str(e)
    except services.AuditClosed as e:
        status, error = 409, str(e)
    except services.AdjudicationError as e:
        status, error = 400, str(e)
    ctx = {
        "item": item,
        "audit": item.audit,
        "row": selectors.with_form(row, post),
        "error": error,
        "saved": post is None,
        **GOLD_CONTEXT,
    }
    return render(request, "adjudication/adjudicate.html#claim_block", ctx, status=status)


@roles.adjudicator_required
@require_POST
def take_all(request, audit_id, item_id):
    """Take annotator A's (or B's) label, with one reason, for every disputed claim of the answer that has
    no adjudicated gold yet."""
    item = _item_or_404(request, audit_id, item_id)
    slot, reason = request.POST.get("slot", ""), request.POST.get("reason", "")
    try:
        n = services.gold_take_all(item, selectors.claim_rows(item), slot, user=request.user, reason=reason)
        messages.success(request, f"Took {slot.upper()}'s label for {n} claim{'s' if n != 1 else ''}.")
    except services.AdjudicationError as e:
        messages.error(request, f"Nothing taken: {e}")
        if slot in ("a", "b"):  # the page comes back with the slot chosen, not A's again
            return redirect(f"{reverse('adjudicate', args=[audit_id, item_id])}?take={slot}")
    return redirect("adjudicate", audit_id, item_id)


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1  # no version sent: never matches, so the save is refused as stale


@roles.lead_required
def history(request, audit_id, item_id):
    try:
        item, events = selectors.answer_history(audit_id, item_id)
    except AuditAnswer.DoesNotExist:
        raise Http404("No such answer in this audit.") from None
    return render(request, "adjudication/history.html", {"item": item, "audit": item.audit, "events": events})


def _back(request):
    return redirect(safe_next(request, reverse("audits")))


@roles.lead_required
@require_POST
def close(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    try:
        audit, stopped = services.audit_close(audit, request.user)
        messages.success(request, f"Audit {audit.name} is closed: labels and gold are frozen.{stopped_text(stopped)}")
    except services.AdjudicationError as e:
        messages.error(request, str(e))
    return _back(request)


@roles.lead_required
@require_POST
def reopen(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    try:
        services.audit_reopen(audit, request.user, request.POST.get("reason", ""))
        messages.success(request, f"Audit {audit.name} is reopened for adjudication.")
    except services.AdjudicationError as e:
        messages.error(request, str(e))
    return _back(request)


@roles.lead_required
@require_GET
def export_gold(request, audit_id):
    audit = get_object_or_404(Audit, pk=audit_id)
    g = request.GET
    level, fmt = g.get("level", "claim"), g.get("format", "csv")
    if level not in export.LEVELS or fmt not in export.FORMATS:
        return HttpResponse(
            f"level must be one of {', '.join(export.LEVELS)} and format one of {', '.join(export.FORMATS)}.",
            status=400,
            content_type="text/plain",
        )
    data = export.export_bytes(audit, level=level, fmt=fmt, names=g.get("names") == "1")
    response = HttpResponse(data, content_type=export.CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{export.file_name(audit, level, fmt)}"'
    return response


def stopped_text(stopped):
    """What the close says of the judge runs it stopped (services.audit_close)."""
    if not stopped:
        return ""
    runs = ", ".join(map(str, stopped))
    return (
        f" Judge run{'s' if len(stopped) > 1 else ''} {runs} over it {'were' if len(stopped) > 1 else 'was'} still "
        "active and stopped (cancelled): a closed audit is not judged again; what was stored is kept."
    )
