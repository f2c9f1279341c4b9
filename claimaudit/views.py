from django.shortcuts import render

from annotations.adjudication.selectors import adjudicator_home
from annotations.assignments.selectors import audit_list
from annotations.workspace.selectors import annotator_audits
from audit import roles
from audit.judge.selectors import judge_runs


def home(request):
    user, ctx = request.user, {}
    if roles.has_role(user, roles.ANNOTATOR):
        ctx["my_audits"] = annotator_audits(user)
    if roles.has_role(user, roles.LEAD):
        ctx["recent_audits"] = list(audit_list()[:6])
        ctx["recent_runs"] = list(judge_runs()[:4])
    if roles.has_role(user, roles.ADJUDICATOR):
        ctx["adjudication"] = adjudicator_home(user)
    return render(request, "audit/home.html", ctx)
