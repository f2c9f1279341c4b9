"""Pages of the judge definitions: the list, one definition (edit its wording: saving mints a version),
one version (read-only, with its diff against the previous version)."""

from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import redirect, render

from audit.judge import definitions
from audit.models import JudgeDefinition, JudgeVersion
from audit.roles import lead_required


@lead_required
def definition_list(request):
    definitions.definitions_seed()
    versions = Prefetch("versions", JudgeVersion.objects.order_by("-created_at", "-id"), to_attr="vlist")
    rows = JudgeDefinition.objects.prefetch_related(versions)
    return render(request, "judge/definitions.html", {"rows": rows})


@lead_required
def definition_detail(request, definition_id):
    definition = _get(JudgeDefinition, definition_id)
    current = definitions.current_version(definition)
    fields = definitions.EDITABLE[definition.level]
    data = {f: current.spec.get(f, "") for f in fields} | {"model": current.model, "effort": current.effort}
    ctx = {"definition": definition, "current": current, "fields": fields, "efforts": definitions.EFFORTS}
    status = 200
    if request.method == "POST":
        data = {k: request.POST.get(k, "") for k in data}
        try:
            version, warnings, minted = definitions.definition_save(
                definition, data, request.user, confirm=request.POST.get("confirm") == "on"
            )
        except definitions.DefinitionError as exc:
            ctx["error"], status = {"field": exc.field, "message": str(exc)}, 400
        else:
            if version is not None:
                return redirect("judge_version", version_id=version.pk)
            ctx["warnings"], ctx["diff"] = warnings, minted  # unsaved: the diff the save would make
    ctx["data"] = data
    ctx["versions"] = definition.versions.select_related("edit__user").order_by("-created_at", "-id")
    return render(request, "judge/definition.html", ctx, status=status)


@lead_required
def version_detail(request, version_id):
    version = _get(JudgeVersion.objects.select_related("definition", "previous", "edit__user"), version_id)
    # The wording a version sends; the offline baseline has none (no heading over an empty text).
    texts = [(f, version.spec[f]) for f in definitions.EDITABLE.get(version.level, ()) if version.spec.get(f)]
    ctx = {"version": version, "texts": texts, "diff": definitions.version_diff(version)}
    ctx["ref"] = definitions.version_ref(version)
    return render(request, "judge/version.html", ctx)


def _get(model_or_qs, pk):
    qs = model_or_qs if hasattr(model_or_qs, "filter") else model_or_qs.objects
    obj = qs.filter(pk=pk).first()
    if obj is None:
        raise Http404
    return obj
