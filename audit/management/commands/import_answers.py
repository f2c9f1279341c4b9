import os
import time

from django.core.management.base import BaseCommand, CommandError

from audit.ingest.formats import FORMATS, MappingError, parse_mapping
from audit.ingest.parse import RecordError
from audit.ingest.services import answers_import

BAR = 30


class Command(BaseCommand):
    help = (
        "Import answers from a JSONL or CSV file into a dataset. All or nothing: on any error nothing "
        "is written and the errors are listed with their line and field."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="a .jsonl/.ndjson, .json, .csv or .parquet file")
        parser.add_argument("--dataset", required=True, help="dataset name (created if new)")
        parser.add_argument(
            "--update",
            action="store_true",
            help="replace answers whose id exists with different content (refused if in an audit)",
        )
        parser.add_argument("--judge-name", default="external", help="name of the judge behind imported verdicts")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        parser.add_argument("--format", default="auto", choices=FORMATS, help="the file's shape (default: detected)")
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="TARGET=SOURCE",
            help="field mapping, e.g. --map question=prompt --map passages=docs --map passage.text=content",
        )

    def handle(self, file, dataset, update, judge_name, no_progress, **options):
        try:
            mapping = parse_mapping(options["map"])
        except MappingError as e:
            raise CommandError(f"--map: {e}")
        try:
            size, fileobj = os.path.getsize(file), open(file, "rb")  # noqa: SIM115 (closed below)
        except OSError as e:
            raise CommandError(f"cannot read {file}: {e.strerror}")
        started = time.monotonic()
        with fileobj:
            batch = answers_import(
                fileobj,
                dataset_name=dataset,
                file_name=os.path.basename(file),
                update=update,
                judge_name=judge_name,
                fmt=options["format"],
                mapping=mapping,
                progress=None if no_progress else self._bar(size),
            )
        if not no_progress:
            self.stderr.write("")
        if batch.status == batch.Status.FAILED:
            for e in batch.errors:
                self.stderr.write(str(RecordError(**e)))
            raise CommandError(f"import failed with {len(batch.errors)} error(s); nothing was written")
        seconds = time.monotonic() - started
        for note in batch.notes:
            self.stdout.write(note)
        if batch.status == batch.Status.NOOP:
            self.stdout.write(
                f"Nothing new: all {batch.unchanged:,} answers of {batch.file_name} are already in "
                f"dataset {dataset!r} unchanged (no-op)."
            )
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {batch.file_name} into dataset {dataset!r}: {batch.created:,} created, {batch.updated:,} "
                f"updated, {batch.unchanged:,} unchanged ({batch.records_done:,} records read, {seconds:.1f} s)."
            )
        )

    def _bar(self, size):
        def show(done_bytes, records):
            share = min(done_bytes / size, 1.0) if size else 1.0
            filled = int(share * BAR)
            self.stderr.write(f"\r[{'#' * filled}{' ' * (BAR - filled)}] {share:4.0%} {records:,} answers", ending="")
            self.stderr.flush()

        return show
