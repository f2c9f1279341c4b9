from django.urls import path

from annotations.weekly import views

urlpatterns = [
    path("<id:audit_id>/like/", views.audit_like, name="audit_like"),
]
