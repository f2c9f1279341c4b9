from django.urls import path

from annotations.lab import views

urlpatterns = [
    path("", views.lab, name="judge_lab"),
]
