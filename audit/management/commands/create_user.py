import unicodedata

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from audit import roles


class Command(BaseCommand):
    help = (
        "Create (or update) a user and put them in role groups: lead, annotator, adjudicator. "
        "The password must pass the configured validators (AUTH_PASSWORD_VALIDATORS)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--roles", dest="role_list", default="", help="comma-separated: lead,annotator,adjudicator")
        parser.add_argument("--email", default="")

    def handle(self, username, password, role_list, email, **options):
        wanted = [r.strip() for r in role_list.split(",") if r.strip()]
        unknown = [r for r in wanted if r not in roles.BY_SHORT_NAME]
        if unknown:
            raise CommandError(f"unknown role(s) {', '.join(unknown)}; use lead, annotator, adjudicator")
        # The login form normalises what is typed the same way (NFKC, stripped); names differing only in
        # case are one person (the login throttle counts them together), so an existing one is updated.
        username = unicodedata.normalize("NFKC", username).strip()
        if not username:
            raise CommandError("the username is empty")
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.filter(username__iexact=username).first()
            created = user is None
            if created:
                user = User(username=username, email=email)
            try:
                validate_password(password, user)
            except ValidationError as e:
                raise CommandError("password refused: " + " ".join(e.messages)) from None
            user.set_password(password)
            user.save()
            for short in wanted:
                group, _ = Group.objects.get_or_create(name=roles.BY_SHORT_NAME[short])
                user.groups.add(group)
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} {user.username} ({', '.join(wanted) or 'no roles'})")
