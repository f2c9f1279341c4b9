import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotations.adjudication import export
from audit.models import Audit


class Command(BaseCommand):
    help = (
        "Export an audit's gold labels (claim or answer level) as CSV, JSONL or Parquet. "
        "An open audit's export is provisional: marked in a column and in the suggested file name."
    )

    def add_arguments(self, parser):
        parser.add_argument("audit", help="audit name or id")
        parser.add_argument("--level", choices=export.LEVELS, default="claim")
        parser.add_argument("--format", choices=export.FORMATS, default="csv", dest="fmt")
        parser.add_argument(
            "--output",
            help="file to write ('-' for standard output); default: the suggested file name in the current directory",
        )
        parser.add_argument("--names", action="store_true", help="annotator usernames instead of pseudonymous ids")

    def handle(self, *args, audit, level, fmt, output, names, **options):
        found = Audit.objects.filter(name=audit).first()
        if found is None and audit.isdigit():
            found = Audit.objects.filter(pk=int(audit)).first()
        if found is None:
            raise CommandError(f"No audit named or numbered {audit!r}.")
        data = export.export_bytes(found, level=level, fmt=fmt, names=names)
        if output == "-":
            sys.stdout.buffer.write(data)
            return
        path = Path(output or export.file_name(found, level, fmt))
        try:
            path.write_bytes(data)
        except OSError as e:
            raise CommandError(f"Cannot write {path}: {e.strerror}.")
        note = " (provisional: the audit is not closed)" if not found.is_closed else ""
        self.stderr.write(f"Wrote {len(data):,} bytes to {path}{note}.")
