from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from audit import roles


class Command(BaseCommand):
    help = "Create (or update) a user and put them in role groups: lead, annotator, adjudicator."

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
        user, created = get_user_model().objects.get_or_create(username=username, defaults={"email": email})
        user.set_password(password)
        user.save()
        for short in wanted:
            group, _ = Group.objects.get_or_create(name=roles.BY_SHORT_NAME[short])
            user.groups.add(group)
        verb = "Created" if created else "Updated"
        self.stdout.write(f"{verb} {username} ({', '.join(wanted) or 'no roles'})")
