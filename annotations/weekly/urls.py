from django.urls import path

from annotations.weekly import views

urlpatterns = [
    path("<int:audit_id>/like/", views.audit_like, name="audit_like"),
]
