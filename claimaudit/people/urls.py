from django.urls import path

from claimaudit.people import views

urlpatterns = [
    path("", views.people, name="people"),
    path("<int:user_id>/", views.person, name="person"),
    path("<int:user_id>/roles/", views.person_roles, name="person_roles"),
    path("<int:user_id>/active/", views.person_active, name="person_active"),
    path("<int:user_id>/link/", views.person_link, name="person_link"),
    path("<int:user_id>/reassign/", views.person_reassign, name="person_reassign"),
]
