import time

from django.core.management.base import BaseCommand, CommandError

from audit.jobs.judge import judge_run_reopen
from audit.judge import definitions, services
from audit.judge.estimate import estimate
from audit.judge.services import JudgeRunError, scope_of
from audit.judge.store import scope
from audit.models import JudgeRun

BAR = 30


class Command(BaseCommand):
    help = (
        "Judge answers: decompose each into claims, verify each claim against its passages. Resumable: "
        "work already stored is never asked for again. Uses ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL."
    )

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--dataset", help="judge every answer of this dataset")
        target.add_argument("--audit", help="judge the sampled answers of this audit")
        target.add_argument("--retry-failed", type=int, metavar="RUN_ID", help="call again for a run's failed items")
        target.add_argument("--resume", type=int, metavar="RUN_ID", help="finish a stopped or killed run")
        parser.add_argument("--backend", choices=["anthropic", "offline"], default="anthropic")
        parser.add_argument(
            "--judge-version",
            help="a judge version (id, NAME@HASH as the gold export writes it, definition name or hash prefix); "
            "its kind sets the backend",
        )
        parser.add_argument("--batch", action="store_true", help="use the Message Batches API (about half price)")
        parser.add_argument("--budget-usd", type=float, help="stop before spending more than this many dollars")
        parser.add_argument("--budget-tokens", type=int, help="stop before using more than this many tokens")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        parser.add_argument(
            "--estimate", action="store_true", help="print the bill before the run (no call, no run) and exit"
        )

    def handle(
        self, *, dataset, audit, retry_failed, resume, backend, batch, budget_usd, budget_tokens, no_progress, **options
    ):
        version = None
        if options["judge_version"]:
            definitions.definitions_seed()
            version = definitions.version_lookup(options["judge_version"])
            if version is None:
                raise CommandError(f"--judge-version: no judge version {options['judge_version']!r}")
        if options["estimate"]:
            return self._estimate(dataset, audit, retry_failed or resume, backend, batch, version)
        progress = None if no_progress else self._bar()
        existing = retry_failed or resume
        try:
            if existing:
                run = JudgeRun.objects.select_related("audit").get(pk=existing)
                if reason := services.closed_refusal(run.audit):  # nothing to reopen, nothing to execute
                    raise JudgeRunError(f"judge run {run.pk} not resumed: {reason}")
                run = judge_run_reopen(run)  # a cancelled run may resume
                if budget_usd is not None or budget_tokens is not None:
                    services.judge_run_update_budget(run, budget_usd=budget_usd, budget_tokens=budget_tokens)
            else:
                run = services.judge_run_create(
                    backend=backend,
                    dataset=dataset,
                    audit=audit,
                    use_batch=batch,
                    budget_usd=budget_usd,
                    budget_tokens=budget_tokens,
                    version=version,
                )
        except JudgeRun.DoesNotExist:
            raise CommandError(f"no judge run with id {existing}")
        except JudgeRunError as exc:
            raise CommandError(str(exc))
        started = time.monotonic()
        if retry_failed:
            run = services.judge_failures_retry(run, progress)
        else:
            run = services.judge_run_execute(run.pk, progress)
        if progress:
            self.stderr.write("")
        self._summary(run, time.monotonic() - started)
        if run.status == JudgeRun.Status.FAILED:
            raise CommandError(f"judge run {run.pk} failed: {run.message}")

    def _estimate(self, dataset, audit, existing, backend, batch, version):
        try:
            if existing:
                run = JudgeRun.objects.select_related("judge_version").get(pk=existing)
                answers, backend, batch, version = scope(run), run.backend, run.use_batch, run.judge_version
            else:
                answers = scope_of(dataset=dataset, audit=audit)
        except JudgeRun.DoesNotExist:
            raise CommandError(f"no judge run with id {existing}")
        except JudgeRunError as exc:
            raise CommandError(str(exc))
        est = estimate(answers, backend=backend, version=version, use_batch=batch)
        self.stdout.write("\n".join(est.lines))

    def _summary(self, run, seconds):
        tokens = (
            f"tokens: {run.input_tokens:,} in, {run.output_tokens:,} out, "
            f"{run.cache_write_tokens:,} cache write, {run.cache_read_tokens:,} cache read"
        )
        clean = run.status == JudgeRun.Status.DONE and not run.items_failed
        style = self.style.SUCCESS if clean else self.style.WARNING
        self.stdout.write(
            style(
                f"Judge run {run.pk} ({run.judge_version.label}): {run.get_status_display()}. {run.message}\n"
                f"answers {run.answers_done:,}/{run.answers_total:,}, claims judged {run.claims_done:,}, "
                f"failed {run.items_failed:,}; {tokens}; cost ${run.cost_usd:.4f}; {seconds:.1f} s."
            )
        )

    def _bar(self):
        last = [0.0]

        def show(run):
            now = time.monotonic()
            if now - last[0] < 0.1 and run.answers_done < run.answers_total:
                return
            last[0] = now
            share = run.answers_done / run.answers_total if run.answers_total else 1.0
            filled = int(share * BAR)
            self.stderr.write(
                f"\r[{'#' * filled}{' ' * (BAR - filled)}] {run.answers_done:,}/{run.answers_total:,} "
                f"answers, {run.claims_done:,} claims, {run.items_failed:,} failed, "
                f"${run.cost_usd:.4f}",
                ending="",
            )
            self.stderr.flush()

        return show
