from django.urls import include, path

from annotations.guidelines.gate import guidelines_read
from audit import views as audit_views
from claimaudit import admin, auth, tokens, views
from claimaudit.api import urls as api_urls
from claimaudit.people import views as people_views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth.login_view, name="login"),
    path("logout/", auth.logout_view, name="logout"),
    path("password/", auth.password_change_view, name="password_change"),
    path("password/done/", auth.password_change_done_view, name="password_change_done"),
    path("welcome/<uidb64>/<token>/", people_views.password_set, name="password_set"),
    path("people/", include("claimaudit.people.urls")),
    path("admin/", admin.site.urls),
    path("answers/", audit_views.answers, name="answers"),
    path("answers/<id:answer_id>/", audit_views.answer_detail, name="answer"),
    path("import/", include("audit.ingest.urls")),
    path("judge/", include("audit.judge.urls")),
    path("jobs/", include("audit.jobs.urls")),
    path("notifications/", include("audit.notify.urls")),
    path("lab/", include("annotations.lab.urls")),
    path("audits/", include("audit.sampling.urls")),
    path("audits/", include("annotations.assignments.urls")),
    path("audits/", include("audit.guidelines.urls")),
    path("audits/", include("annotations.weekly.urls")),
    path("reports/", include("annotations.report.urls")),
    path("label/", include("annotations.workspace.urls")),
    path("label/guidelines/<id:audit_id>/", guidelines_read, name="guidelines_read"),
    path("adjudicate/", include("annotations.adjudication.urls")),
    path("tokens/", tokens.tokens, name="api_tokens"),
    path("tokens/<id:token_id>/revoke/", tokens.token_revoke, name="api_token_revoke"),
    path("api/v1/", api_urls),
]
