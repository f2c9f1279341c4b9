from django.urls import path

from audit.views.placeholder import placeholder

urlpatterns = [
    path("<int:audit_id>/", placeholder, name="report"),
]
