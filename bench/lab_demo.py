"""The judge lab, the policies, the guardrail and a calibration sample on the demo data (a throwaway SQLite).

Loads the demo (RAGTruth sample, offline claim-level verdicts, the 40-answer demo audit), fills every answer's
demo labels, settles each dispute with annotator A's label (RAGTruth's own annotation), closes the audit,
runs the offline answer-level baseline on the gold answers, and prints the lab's figures, both policies,
a guardrail check between two generator models of the demo, and a calibration draw.

    .venv/bin/python bench/lab_demo.py
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
DB = "/tmp/lab_demo.sqlite3"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "claimaudit.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("DEBUG", "true")

import django  # noqa: E402


def setup():
    for suffix in ("", "-wal", "-shm"):
        Path(DB + suffix).unlink(missing_ok=True)
    django.setup()
    from django.core.management import call_command

    from bench.tables import create_tables

    create_tables()
    with open(os.devnull, "w") as quiet:
        call_command("load_demo", stdout=quiet)


def close_demo_audit():
    from annotations.adjudication.demo import demo_labels_load
    from annotations.models import GoldLabel, Label
    from audit.models import Audit

    audit = Audit.objects.get(name="demo-2026-W48")
    demo_labels_load(audit, fraction=1.0)
    have = set(GoldLabel.objects.filter(audit=audit).values_list("claim_id", flat=True))
    disputes = Label.objects.filter(assignment__audit_answer__audit=audit, assignment__slot="A").exclude(
        claim_id__in=have
    )
    GoldLabel.objects.bulk_create(
        GoldLabel(audit=audit, claim_id=lb.claim_id, verdict=lb.verdict, source="adjudicated", reason="A (RAGTruth)")
        for lb in disputes
    )
    audit.status = "closed"
    audit.save()
    return audit, len(disputes)


def fmt(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    setup()
    from django.http import QueryDict

    from annotations.lab.guardrail import guardrail_check
    from annotations.lab.views import lab_context
    from annotations.report.build import build_report
    from audit.judge.offline import offline_version
    from audit.judge.rubric import offline_rubric_version
    from audit.judge.services import judge_run_create, judge_run_execute
    from audit.models import Answer
    from audit.sampling.calibration import calibration_audit_create

    audit, disputes = close_demo_audit()
    print(f"demo audit {audit.name}: {audit.items.count()} answers, {disputes} disputes settled by A, closed")
    claim_v, rubric_v = offline_version(), offline_rubric_version()
    ids = list(audit.items.values_list("answer_id", flat=True))
    run = judge_run_execute(judge_run_create(version=rubric_v, answers=ids).pk)
    print(f"offline answer-level baseline on the gold answers: {run.message}")
    q = QueryDict(mutable=True)
    q.update({"dataset": str(audit.dataset_id), "version": str(claim_v.pk), "compare": str(rubric_v.pk)})
    ctx = lab_context(q)
    c, n = ctx["a"]["claims"], ctx["a"]["noise"]
    print(f"lab, {claim_v.label} vs gold, {c['judged']} claims:")
    for key in ("sampled", "weighted"):
        s = c[key]
        print(f"  {key}: accuracy {fmt(s['accuracy'])} kappa {fmt(s['kappa'])} AC1 {fmt(s['ac1'])} "
              f"bad-claim recall {fmt(s['bad_recall'])}")  # fmt: skip
    print(f"  noise floor on {n['n']} claims: judge agrees with gold on {n['judge']['agree']}, "
          f"annotators with each other on {n['annotators']['agree']}")  # fmt: skip
    for side in ("a", "b"):
        s = ctx[side]["answers"]
        print(f"  answer level, {ctx[side]['version'].label}: agreement {fmt(s['sampled']['accuracy'])} sampled, "
              f"{fmt(s['weighted']['accuracy'])} weighted, fail recall {fmt(s['sampled']['bad_recall'])} "
              f"({s['judged']} answers)")  # fmt: skip
    p = ctx["paired_answers"]
    print(f"  paired (answers): only claim-level right {p['only_a']}, only rubric right {p['only_b']}, "
          f"McNemar p {fmt(p['mcnemar_p'])}, difference {fmt(p['difference'])} CI {p['ci']}")  # fmt: skip
    print(f"  disagreements listed: {len(ctx['disagreements'])}")
    for pol in build_report(audit, claim_v.pk)["policies"]:
        print(f"policy {pol['policy']}: {pol['fails']}/{pol['n']} answers fail, rate {fmt(pol['rate'])} "
              f"CI [{fmt(pol['ci'][0])}, {fmt(pol['ci'][1])}], weighted {fmt(pol['weighted_rate'])}")  # fmt: skip
    models = sorted({a.meta.get("model") for a in Answer.objects.filter(dataset=audit.dataset)} - {None})
    base, cand = models[0], models[1]
    r = guardrail_check(f"RAGTruth:meta.model={base}", f"RAGTruth:meta.model={cand}", claim_v)
    print(f"guardrail meta.model={cand} vs {base} on {claim_v.label}: baseline {r['baseline']['fails']}/"
          f"{r['baseline']['n']}, candidate {r['candidate']['fails']}/{r['candidate']['n']}, "
          f"{r['test']['test']} p {fmt(r['test']['p'])}: {'BLOCKS' if r['blocks'] else 'does not block'}")  # fmt: skip
    cal = calibration_audit_create(name="calibration-demo", dataset=audit.dataset, version=claim_v, seed=3)
    print(
        "calibration sample (200 claims):",
        ", ".join(f"{d['stratum']} {d['sample']}/{d['population']}" for d in cal.design),
    )


if __name__ == "__main__":
    main()
