from django.urls import path

from audit.views.placeholder import placeholder

urlpatterns = [
    path("", placeholder, name="audits"),
]
