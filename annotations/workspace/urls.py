from django.urls import path

from audit.views.placeholder import placeholder

urlpatterns = [
    path("<int:assignment_id>/", placeholder, name="workspace"),
    path("queue/<int:audit_id>/", placeholder, name="queue"),
]
