from django.urls import include, path

from audit.views import auth, browse

urlpatterns = [
    path("", browse.home, name="home"),
    path("login/", auth.login_view, name="login"),
    path("logout/", auth.logout_view, name="logout"),
    path("answers/", browse.answers, name="answers"),
    path("answers/<int:answer_id>/", browse.answer_detail, name="answer"),
    path("import/", include("audit.ingest.urls")),
    path("judge/", include("audit.judge.urls")),
    path("audits/", include("audit.sampling.urls")),
    path("reports/", include("audit.report.urls")),
    path("label/", include("annotations.workspace.urls")),
    path("adjudicate/", include("annotations.adjudication.urls")),
]
