"""manage.py create_calibration_audit NAME --dataset DS --judge-version ID [--size 200] [--seed N] [--meta-field F]
A claim-level calibration sample stratified by the judge version's verdict (see audit.sampling.calibration)."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from audit.models import Dataset, JudgeVersion
from audit.sampling.calibration import DEFAULT_SIZE, calibration_audit_create


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--judge-version", type=int, required=True)
        parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--meta-field")

    def handle(self, *args, **o):
        dataset = Dataset.objects.filter(name=o["dataset"]).first()
        version = JudgeVersion.objects.filter(pk=o["judge_version"]).first()
        if dataset is None or version is None:
            raise CommandError("--dataset or --judge-version: not found")
        if o["size"] < 1:
            raise CommandError("--size must be positive")
        try:
            audit = calibration_audit_create(
                name=o["name"], dataset=dataset, version=version, size=o["size"], seed=o["seed"],
                meta_field=o["meta_field"],
            )  # fmt: skip
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for row in audit.design:
            self.stdout.write(f"{row['stratum']}: {row['sample']} of {row['population']}")
        self.stdout.write(f"Audit {audit.name} (seed {audit.seed}): {audit.calibration_items.count()} claims.")
