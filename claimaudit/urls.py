from django.urls import include, path

from annotations.guidelines.gate import guidelines_read
from audit import views as audit_views
from claimaudit import auth, views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth.login_view, name="login"),
    path("logout/", auth.logout_view, name="logout"),
    path("answers/", audit_views.answers, name="answers"),
    path("answers/<int:answer_id>/", audit_views.answer_detail, name="answer"),
    path("import/", include("audit.ingest.urls")),
    path("judge/", include("audit.judge.urls")),
    path("jobs/", include("audit.jobs.urls")),
    path("notifications/", include("audit.notify.urls")),
    path("audits/", include("audit.sampling.urls")),
    path("audits/", include("annotations.assignments.urls")),
    path("audits/", include("audit.guidelines.urls")),
    path("audits/", include("annotations.weekly.urls")),
    path("reports/", include("annotations.report.urls")),
    path("label/", include("annotations.workspace.urls")),
    path("label/guidelines/<int:audit_id>/", guidelines_read, name="guidelines_read"),
    path("adjudicate/", include("annotations.adjudication.urls")),
]
