from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from claimaudit.services import TokenError, api_token_create


class Command(BaseCommand):
    help = "Create a personal API token for a user and print it (once: only its hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="what the token is for, e.g. nightly-import")

    def handle(self, username, name, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user named {username!r}")
        try:
            _, raw = api_token_create(user, name)
        except TokenError as e:
            raise CommandError(str(e)) from None
        self.stdout.write(raw)
