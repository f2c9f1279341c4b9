"""Stratum sizes by GROUP BY and the within-stratum draw, both in the database.

Within a stratum the sample is the n_h answers with the smallest order key (ties by id). To avoid
sorting the whole pool, each stratum only returns rows whose key is below a threshold t_h chosen so that
about n_h + margin rows qualify; a stratum that comes up short is asked again with a higher threshold.
The result is exactly the n_h smallest keys whatever the thresholds, so it is reproducible.
The per-stratum threshold is one `CASE key WHEN label THEN t_h ...`: the strata expressions are evaluated
once per row, not once per stratum.
"""

import math
from collections import defaultdict
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import BigIntegerField, Count, Func, TextField, Value
from django.db.models.functions import Concat

from audit.sampling import population as pop


@contextmanager
def _without_jit():
    """PostgreSQL cannot see that the draw's order-key filter keeps ~0.1% of the pool (it assumes a third),
    so it JIT-compiles the query and spends more time compiling than running it. SET LOCAL lasts until
    the transaction ends: this one, or the caller's (audit_create), which ends right after the draw."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SET LOCAL jit = off")
        yield


def strata_counts(qs, keys, judge_version_id=None):
    """[(label, values_tuple, N_h)] for every non-empty stratum, ordered by label."""
    if not keys:
        return [("all", (), qs.count())]
    qs, exprs = pop.strata(qs, keys, judge_version_id)
    # The judge key (three known values) is counted as three conditional counts, not grouped on: SQLite
    # sorts every row to group, and one key less saves about a fifth of the query at a million answers.
    j = keys.index("judge") if "judge" in keys and judge_version_id is not None else None
    group = {a: e for i, (a, e) in enumerate(exprs.items()) if i != j}
    counts = {"_n": Count("pk")} if j is None else pop.judge_outcome_counts()
    if group:
        rows = qs.order_by().values(**group).annotate(**counts).values_list(*group, *counts)
    else:
        rows = [tuple(qs.aggregate(**counts).values())]
    out = []
    for r in rows:
        values, ns = list(r[: len(group)]), r[len(group) :]
        for outcome, n in zip(pop.JUDGE_OUTCOMES, ns, strict=True) if j is not None else [(None, ns[0])]:
            v = tuple(values if j is None else values[:j] + [outcome] + values[j:])
            if n:
                out.append((pop.stratum_label(keys, v), v, n))
    return sorted(out, key=lambda r: r[0])


SEP = "\x1f"  # joins the values of a row's strata into one key; never part of a label


class StratumLimit(Func):
    """CASE <key> WHEN %s THEN %s ... ELSE 0 END: a simple CASE evaluates its key once."""

    output_field = BigIntegerField()

    def __init__(self, key, limits):
        super().__init__(key)
        self.limits = limits  # [(key value, threshold)]

    def as_sql(self, compiler, connection, **extra):
        key_sql, params = compiler.compile(self.source_expressions[0])
        whens = " ".join("WHEN %s THEN %s" for _ in self.limits)
        return f"CASE {key_sql} {whens} ELSE 0 END", [*params, *(x for pair in self.limits for x in pair)]


def _row_key(exprs):
    parts = list(exprs)
    if len(parts) == 1:
        return parts[0]
    joined = [parts[0]]
    for part in parts[1:]:
        joined += [Value(SEP), part]
    return Concat(*joined, output_field=TextField())


def _threshold(n_h, N_h, factor=1.0):
    want = (n_h + 4 * math.sqrt(n_h) + 8) * factor
    return pop.P if want >= N_h else max(1, math.ceil(pop.P * want / N_h))


def draw(qs, keys, strata, sizes, seed, judge_version_id=None):
    """strata: [(label, values, N_h)], sizes: [n_h]. Returns {label: [(key, answer_id), ...]} sorted."""
    qs, exprs = pop.strata(qs, keys, judge_version_id, few_rows=True)
    aliases = list(exprs)
    base = qs.order_by().annotate(**exprs, _k=pop.order_key(seed))
    wanted = {label: (values, n, N) for (label, values, N), n in zip(strata, sizes, strict=True) if n > 0}
    factor = {label: 1.0 for label in wanted}
    picked = {}
    while wanted:
        thresholds = {label: _threshold(n, N, factor[label]) for label, (_, n, N) in wanted.items()}
        if keys:
            limit = StratumLimit(
                _row_key(exprs.values()), [(SEP.join(wanted[label][0]), t) for label, t in thresholds.items()]
            )
            rows = base.filter(_k__lt=max(thresholds.values())).filter(_k__lt=limit)
        else:
            rows = base.filter(_k__lt=thresholds["all"])
        found = defaultdict(list)
        with _without_jit():
            rows = list(rows.values_list(*aliases, "_k", "pk"))
        for *values, k, pk in rows:
            found[pop.stratum_label(keys, values)].append((k, pk))
        for label in list(wanted):
            _, n, N = wanted[label]
            got = sorted(found.get(label, []))
            if len(got) >= n or thresholds[label] >= pop.P:
                picked[label] = got[:n]
                del wanted[label]
            else:
                factor[label] *= 4
    return picked
