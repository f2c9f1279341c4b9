from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render

from audit import roles, selectors
from audit.models import Answer
from audit.spans import evidence_span, segments
from audit.validation import row_id


@roles.lead_required
def answers(request):
    g = request.GET
    qs = selectors.answer_search(
        q=g.get("q", "").strip(),
        dataset_id=row_id(g.get("dataset")),
        meta_key=g.get("meta_key", "").strip(),
        meta_value=g.get("meta_value", "").strip(),
    )
    page = Paginator(qs, 50).get_page(g.get("page"))
    ctx = {"page": page, "datasets": selectors.dataset_counts(), "filters": g}
    template = "audit/answers.html#results" if request.htmx else "audit/answers.html"
    return render(request, template, ctx)


@roles.lead_required
def answer_detail(request, answer_id):
    try:
        answer = selectors.answer_with_parts(answer_id, judge_version_id=row_id(request.GET.get("version")))
    except Answer.DoesNotExist:
        raise Http404 from None
    spans = [(c.span_start, c.span_end, c) for c in answer.claim_list]
    _mark_judge_evidence(answer)
    ctx = {
        "answer": answer,
        "answer_segments": segments(answer.text, spans),
        "unlocated": sum(c.span_start is None for c in answer.claim_list),
    }
    return render(request, "audit/answer.html", ctx)


def _mark_judge_evidence(answer):
    """Cut each passage into segments with the judge's verified evidence marked (claim position as tag)."""
    by_passage = {}
    for claim in answer.claim_list:
        for v in claim.verdicts:
            if v.guard_passed:
                by_passage.setdefault(v.passage_external_id, []).append((v.evidence, claim.position))
    for p in answer.passage_list:
        spans = []
        for evidence, position in by_passage.get(p.external_id, []):
            span = evidence_span(p.text, evidence)
            if span:
                spans.append((*span, position + 1))
        p.segments = segments(p.text, spans)
