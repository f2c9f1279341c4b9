from django.urls import path

from claimaudit.people import views

urlpatterns = [
    path("", views.people, name="people"),
    path("<id:user_id>/", views.person, name="person"),
    path("<id:user_id>/roles/", views.person_roles, name="person_roles"),
    path("<id:user_id>/active/", views.person_active, name="person_active"),
    path("<id:user_id>/link/", views.person_link, name="person_link"),
    path("<id:user_id>/reassign/", views.person_reassign, name="person_reassign"),
]
