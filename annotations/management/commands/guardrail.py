"""manage.py guardrail --baseline DATASET[:meta.FIELD=VALUE] --candidate ... --judge-version ID_OR_HASH
Exits with status 1 when the candidate's regression on the answer-level verdict blocks (for CI)."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotations.lab.guardrail import ALPHA, GuardrailError, guardrail_check
from audit.judge.definitions import definitions_seed, version_lookup


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("--baseline", required=True)
        parser.add_argument("--candidate", required=True)
        parser.add_argument(
            "--judge-version",
            required=True,
            help="a version id, NAME@HASH as the gold export writes it, a definition name (its current version) "
            "or a content-hash prefix",
        )
        parser.add_argument("--policy", choices=["strict", "lenient"], default="strict")
        parser.add_argument("--alpha", type=float, default=ALPHA)
        parser.add_argument("--json", action="store_true", help="print the full result as JSON")

    def handle(self, *args, **o):
        version = find_version(o["judge_version"])
        try:
            r = guardrail_check(o["baseline"], o["candidate"], version, policy=o["policy"], alpha=o["alpha"])
        except GuardrailError as exc:
            raise CommandError(f"--{exc.field}: {exc}") from None
        if o["json"]:
            self.stdout.write(json.dumps(r, indent=2))
        for name in ("baseline", "candidate"):
            s = r[name]
            ci = f" [{s['ci'][0]:.3f}, {s['ci'][1]:.3f}]" if s["ci"] else ""
            rate = f"{s['rate']:.3f}" if s["rate"] is not None else "-"
            self.stdout.write(f"{name}: {s['fails']}/{s['n']} fail, rate {rate}{ci}")
        if r["test"]:
            self.stdout.write(f"{r['test']['test']}: p = {r['test']['p']:.4f}")
        self.stdout.write(("BLOCKS: " if r["blocks"] else "does not block: ") + r["why"])
        if r["blocks"]:
            raise SystemExit(1)


def find_version(text):
    definitions_seed()
    version = version_lookup(text)
    if version is None:
        raise CommandError(f"--judge-version: no judge version {text!r}")
    return version
