"""Create an audit from the command line: draw the sample, print the design, optionally assign it."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotations.assignments.services import audit_assign
from annotations.models import PendingAssignment
from annotations.weekly.services import like_create, like_plan
from audit.judge.services import judge_run_execute
from audit.models import Audit, Dataset
from audit.sampling.population import StrataError
from audit.sampling.services import audit_create


def _pairs(values, what):
    out = {}
    for v in values or []:
        if "=" not in v:
            raise CommandError(f"{what}: expected KEY=VALUE, got {v!r}")
        k, val = v.rsplit("=", 1)
        out[k.strip()] = val.strip()
    return out


class Command(BaseCommand):
    help = "Create an audit (stratified, reproducible sample) and optionally assign it to annotators."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?", help="default with --like: <dataset>-<ISO week>")
        parser.add_argument("--like", metavar="AUDIT", help="copy this audit's design for the next (or --week) week")
        parser.add_argument("--week", help="with --like: the ISO week to cover, e.g. 2026-W50 (default: the next)")
        parser.add_argument("--dataset")
        parser.add_argument("--size", type=int, default=150)
        parser.add_argument("--strata", default="", help="comma separated: judge, length, meta.FIELD")
        parser.add_argument("--allocation", choices=[c for c, _ in Audit.Allocation.choices], default="proportional")
        parser.add_argument("--seed", type=int, help="default: random (always stored)")
        parser.add_argument("--min-per-stratum", type=int, default=0)
        parser.add_argument(
            "--fail-rate",
            action="append",
            metavar="STRATUM=P",
            help="expected failure rate for Neyman allocation, e.g. 'judge=fail=0.5'; '*=P' default",
        )
        parser.add_argument("--from", dest="created_from", help="created on or after YYYY-MM-DD")
        parser.add_argument("--to", dest="created_to", help="created on or before YYYY-MM-DD")
        parser.add_argument("--meta", action="append", metavar="FIELD=VALUE", help="metadata equality filter")
        parser.add_argument("--exclude-audited", action="store_true", help="leave out answers already in an audit")
        parser.add_argument("--annotators", default="", help="comma separated usernames: assign after drawing")
        parser.add_argument("--demo", action="store_true", help="mark the audit and its assignments as demo data")

    def handle(self, *args, **o):
        if o["like"]:
            return self.handle_like(o)
        if not o["name"] or not o["dataset"]:
            raise CommandError("give NAME and --dataset (or --like AUDIT)")
        try:
            dataset = Dataset.objects.get(name=o["dataset"])
        except Dataset.DoesNotExist:
            raise CommandError(f"No dataset named {o['dataset']!r}.")
        f = {"meta": _pairs(o["meta"], "--meta"), "exclude_audited": o["exclude_audited"]}
        f.update({k: o[k] for k in ("created_from", "created_to") if o[k]})
        try:
            rates = {k: float(v) for k, v in _pairs(o["fail_rate"], "--fail-rate").items()}
        except ValueError as e:
            raise CommandError(f"--fail-rate: {e}")
        usernames = [u.strip() for u in o["annotators"].split(",") if u.strip()]
        users = list(get_user_model().objects.filter(username__in=usernames))
        unknown = sorted(set(usernames) - {u.username for u in users})
        if unknown:
            raise CommandError(f"Unknown annotator(s): {', '.join(unknown)}.")
        try:
            audit = audit_create(
                name=o["name"],
                dataset=dataset,
                population_filter=f,
                strata_keys=o["strata"],
                allocation_method=o["allocation"],
                size=o["size"],
                min_per_stratum=o["min_per_stratum"],
                expected_fail_rates=rates,
                seed=o["seed"],
                is_demo=o["demo"],
            )
        except (ValidationError, StrataError, ValueError) as e:
            raise CommandError(" ".join(getattr(e, "messages", [str(e)])))
        self.print_design(audit)
        if users:
            try:
                audit_assign(audit, sorted(users, key=lambda u: usernames.index(u.username)))
            except ValidationError as e:
                raise CommandError(f"Audit {audit.name} created (draft) but not assigned: {' '.join(e.messages)}")
            self.stdout.write(f"Assigned to {', '.join(usernames)}: two annotators per answer; status labelling.")

    def handle_like(self, o):
        """Next week's audit like AUDIT (a weekly cron job): create it, judge its sample here, assign it."""
        try:
            source = Audit.objects.select_related("dataset").get(name=o["like"])
        except Audit.DoesNotExist:
            raise CommandError(f"No audit named {o['like']!r}.")
        try:
            plan = like_plan(source, week=o["week"], name=o["name"], seed=o["seed"], preview=False)
            if Audit.objects.filter(name=plan["name"]).exists():
                raise CommandError(f"An audit named {plan['name']!r} exists already (this week was done?).")
            audit, run = like_create(plan, enqueue=False)
        except (ValidationError, StrataError, ValueError) as e:
            raise CommandError(" ".join(getattr(e, "messages", [str(e)])))
        self.print_design(audit)
        run = judge_run_execute(run.pk)  # its end assigns the audit (annotations/receivers.py)
        pending = PendingAssignment.objects.get(audit=audit)
        self.stdout.write(f"Judge run #{run.pk} ({run.backend}): {run.message}")
        if pending.status != PendingAssignment.Status.DONE:
            raise CommandError(f"Audit {audit.name} created (draft) but not assigned: {pending.message}")
        self.stdout.write(pending.message)

    def print_design(self, audit):
        w = max([len(r["stratum"]) for r in audit.design] + [7])
        self.stdout.write(
            f"Audit {audit.name}: {audit.items.count()} answers from a population of "
            f"{audit.population_size} (seed {audit.seed}, {audit.allocation} allocation)"
        )
        self.stdout.write(f"{'stratum':<{w}}  {'N_h':>8}  {'n_h':>5}  {'pi':>8}  {'weight':>9}")
        for r in audit.design:
            weight = f"{r['weight']:.2f}" if r["weight"] else "-"
            self.stdout.write(
                f"{r['stratum']:<{w}}  {r['population']:>8}  {r['sample']:>5}  "
                f"{r['inclusion_probability']:>8.4f}  {weight:>9}"
            )
        empty = [r["stratum"] for r in audit.design if r["population"] and not r["sample"]]
        if empty:
            self.stdout.write(
                f"Note: {len(empty)} non-empty strat{'um' if len(empty) == 1 else 'a'} got no sample and "
                "cannot be weighted back to the population; --min-per-stratum 1 avoids that."
            )
