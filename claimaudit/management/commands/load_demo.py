import os
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand

from annotations.adjudication.demo import demo_labels_load
from audit.guidelines.services import guidelines_save
from audit.models import Audit, Dataset

DEMO_FILE = Path(__file__).resolve().parents[2] / "demo_data" / "ragtruth_qa_visible.jsonl"
DEMO_AUDIT = "demo-2026-W48"
DEMO_GUIDELINES = """# Labelling guidelines

Judge each claim **only against the passages** shown, never against what you know.

- **Supported**: a passage states it; attach the sentence as evidence (`e`).
- **Contradicted**: a passage states the opposite; attach that sentence.
- **Unsupported**: no passage says it either way.
- **Non-assertive**: not a factual claim (a greeting, a hedge, a question).

When unsure between supported and unsupported, choose *unsupported* and add a note (`n`).
"""
USERS = [("lead", "lead,adjudicator"), ("ann1", "annotator"), ("ann2", "annotator"), ("adj", "adjudicator")]


class Command(BaseCommand):
    help = "Load the demo: users, the RAGTruth sample, offline-judge verdicts, one audit with demo labels."

    def handle(self, **options):
        password = os.environ.get("DEMO_PASSWORD", "claim-audit-demo")
        for username, roles in USERS:
            email = f"{username}@example.org"  # notification emails print on the console in development
            call_command(
                "create_user", username, "--password", password, "--roles", roles, "--email", email, stdout=self.stdout
            )
        if not Dataset.objects.filter(name="RAGTruth").exists():
            call_command("import_answers", str(DEMO_FILE), "--dataset", "RAGTruth", "--no-progress", stdout=self.stdout)
        call_command("judge", "--dataset", "RAGTruth", "--backend", "offline", stdout=self.stdout)
        if not Audit.objects.filter(name=DEMO_AUDIT).exists():
            call_command(
                "create_audit",
                DEMO_AUDIT,
                "--dataset",
                "RAGTruth",
                "--size",
                "40",
                "--strata",
                "judge,meta.model",
                "--seed",
                "48",
                "--min-per-stratum",
                "1",
                "--annotators",
                "ann1,ann2",
                "--demo",
                stdout=self.stdout,
            )
            demo_labels_load(Audit.objects.get(name=DEMO_AUDIT))
            guidelines_save(Audit.objects.get(name=DEMO_AUDIT), DEMO_GUIDELINES)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo ready. Users: lead (audit lead and adjudicator), ann1, ann2 (annotators), adj (adjudicator); "
                f"password for all: {password}"
            )
        )
