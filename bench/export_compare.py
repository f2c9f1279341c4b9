"""The gold export's CPU in process (jsonl, claim level) of a 40-answer x 5-claim audit labelled by two
annotators with agreed gold, among 10,000 other answers: written against the models and factories every
version of the project has, so the same file times an older tree side by side with this one.

    cd TREE && DJANGO_SETTINGS_MODULE=<that tree's settings> /path/to/python /path/to/bench/export_compare.py

Prints the median and the best of 7 batches of 10 exports. Throwaway SQLite file under /tmp.
"""

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
DB = Path(f"/tmp/export_compare_{ROOT.name}.sqlite3")
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
sys.path.insert(0, str(ROOT))

import django  # noqa: E402

django.setup()

from django.utils import timezone  # noqa: E402

from bench.tables import create_tables  # noqa: E402


def build():
    from annotations.models import Assignment, GoldLabel, Label
    from audit.models import Answer, AuditAnswer, Claim, ClaimOrigin
    from tests.factories import make_answer, make_audit, make_dataset, make_user

    a, b = make_user("a", "annotator"), make_user("b", "annotator")
    ds = make_dataset("d")
    audit = make_audit([make_answer(ds, external_id=f"x{i}", n_claims=5) for i in range(40)], status="labelling")
    now = timezone.now()
    for item in AuditAnswer.objects.filter(audit=audit):
        claims = list(Claim.objects.filter(answer=item.answer))
        for who, slot in ((a, "A"), (b, "B")):
            asg = Assignment.objects.create(
                audit_answer=item, annotator=who, slot=slot, status="submitted", submitted_at=now
            )
            Label.objects.bulk_create(
                Label(assignment=asg, claim=c, verdict="supported", evidence_text="Paris is the capital", note="ok")
                for c in claims
            )
        GoldLabel.objects.bulk_create(
            GoldLabel(audit=audit, claim=c, verdict="supported", source="agreed", evidence_text="Paris is the capital")
            for c in claims
        )
    bulk = make_dataset("bulk")
    Answer.objects.bulk_create(
        Answer(
            dataset=bulk,
            external_id=f"b{i}",
            question="q?",
            text="x" * 100,
            created_at=now,
            meta={},
            content_hash="h" * 64,
            length=100,
        )
        for i in range(10_000)
    )
    Claim.objects.bulk_create(
        Claim(answer=x, position=p, text=f"claim {p}", origin=ClaimOrigin.IMPORTED)
        for x in Answer.objects.filter(dataset=bulk)
        for p in range(5)
    )
    return audit


def main():
    from annotations.adjudication.export import export_bytes

    DB.unlink(missing_ok=True)
    create_tables()
    audit = build()
    size = len(export_bytes(audit, level="claim", fmt="jsonl"))
    runs = []
    for _ in range(7):
        t = time.process_time()
        for _ in range(10):
            export_bytes(audit, level="claim", fmt="jsonl")
        runs.append((time.process_time() - t) * 100)
    print(
        f"{ROOT}: gold export jsonl, 200 claims, {size:,} bytes: "
        f"CPU median {statistics.median(runs):.2f} ms, best {min(runs):.2f} ms"
    )
    DB.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
