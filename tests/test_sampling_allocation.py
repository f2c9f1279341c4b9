"""Allocation and pair planning: pure functions, no database."""

import random
from collections import Counter

import pytest

from annotations.assignments.pairing import plan_pairs, plan_rebalance
from audit.sampling.allocation import (
    NEYMAN,
    allocate,
    design_notes,
    design_table,
    resolve_fail_rates,
    unmatched_rates,
)


def test_it_allocates_proportionally_and_rounds_to_exactly_n():
    assert allocate([("a", 500), ("b", 300), ("c", 200)], 150) == [75, 45, 30]
    # 33.3 each: largest remainder gives the extra unit to the biggest fraction, the sum stays n.
    assert allocate([("a", 333), ("b", 333), ("c", 334)], 100) == [33, 33, 34]
    sizes = allocate([("a", 7), ("b", 11), ("c", 13), ("d", 17)], 10)
    assert sum(sizes) == 10


def test_it_allocates_equally_and_redistributes_what_small_strata_cannot_take():
    assert allocate([("a", 9000), ("b", 700), ("c", 300)], 150, "equal") == [50, 50, 50]
    # b has only 20 and d only 5: capped at N_h, the rest goes to a.
    assert allocate([("a", 9000), ("b", 20), ("d", 5)], 150, "equal") == [125, 20, 5]


def test_it_gives_empty_strata_nothing():
    assert allocate([("a", 100), ("empty", 0), ("b", 100)], 50, "equal") == [25, 0, 25]
    assert allocate([("a", 100), ("empty", 0)], 10, "proportional") == [10, 0]
    assert allocate([("empty", 0)], 10) == [0]


def test_it_allocates_neyman_from_expected_failure_rates():
    # w_h = N_h sqrt(p(1-p)): 9000*0.14 = 1260, 700*0.5 = 350, 300*0.4583 = 137.5 -> 108.2, 30.0, 11.8
    rates = {"a": 0.02, "b": 0.5, "c": 0.3}
    assert allocate([("a", 9000), ("b", 700), ("c", 300)], 150, "neyman", fail_rates=rates) == [108, 30, 12]
    # the same failure rate everywhere is proportional allocation
    assert allocate([("a", 600), ("b", 400)], 100, "neyman") == [60, 40]


def test_it_raises_small_strata_to_the_minimum_and_keeps_the_sum():
    assert allocate([("a", 9000), ("b", 10), ("c", 30)], 150, min_per_stratum=20) == [120, 10, 20]
    # minimums that cannot all be met: the target is spread as evenly as they allow
    assert sorted(allocate([("a", 9000), ("b", 10), ("c", 30)], 10, min_per_stratum=20)) == [3, 3, 4]


def test_it_gives_every_stratum_a_fair_chance_when_strata_outnumber_the_size():
    strata = [(f"s{i:02d}", 50) for i in range(10)]  # 10 strata, 6 answers: each can get at most one
    hits = [0] * 10
    for seed in range(300):
        sizes = allocate(strata, 6, min_per_stratum=1, seed=seed)
        assert sorted(sizes) == [0] * 4 + [1] * 6
        assert allocate(strata, 6, min_per_stratum=1, seed=seed) == sizes  # reproducible from the seed
        hits = [h + k for h, k in zip(hits, sizes, strict=True)]
    # Each stratum is sampled with probability 6/10: 180 of 300 expected, binomial sd 8.5. The old rule
    # (ties to the earlier label) gave the first six 300 and the last four 0.
    assert all(130 <= h <= 230 for h in hits), hits


def test_it_names_the_real_remedy_for_a_stratum_left_out_in_the_notes_not_the_rows():
    strata = [(f"s{i}", 50) for i in range(4)]
    sizes = allocate(strata, 3, min_per_stratum=1, seed=1)
    [left_out] = [r for r in design_table(strata, sizes) if not r["sample"]]
    assert set(left_out) == {"stratum", "population", "sample", "inclusion_probability", "weight"}
    notes = {n["field"]: n["message"] for n in design_notes(strata, sizes, 3, 1)}
    assert notes["strata"].endswith("raise the size to 4 or use fewer strata")
    big_and_tiny = [("big", 100_000), ("tiny", 2)]
    sizes = allocate(big_and_tiny, 10)
    assert [r["sample"] for r in design_table(big_and_tiny, sizes)] == [10, 0]
    [n] = design_notes(big_and_tiny, sizes, 10, 0)
    assert n["field"] == "min_per_stratum" and n["message"].endswith("a minimum of 1 per stratum includes it")


def test_it_takes_everyone_when_n_exceeds_the_population():
    assert allocate([("a", 3), ("b", 4)], 150) == [3, 4]


def test_it_keeps_its_invariants_on_random_designs():
    rng = random.Random(7)
    for _ in range(500):
        pops = [(f"s{i}", rng.choice([0, 1, 2, 5, 40, 300, 10_000])) for i in range(rng.randint(1, 8))]
        n, m = rng.randint(0, 400), rng.choice([0, 0, 1, 5, 30])
        method = rng.choice(["proportional", "equal", "neyman"])
        rates = {label: rng.choice([0.0, 0.05, 0.3, 0.9]) for label, _ in pops}
        sizes = allocate(pops, n, method, min_per_stratum=m, fail_rates=rates)
        total = sum(N for _, N in pops)
        assert sum(sizes) == min(n, total), (pops, n, m, method, sizes)
        assert all(0 <= k <= N for k, (_, N) in zip(sizes, pops, strict=True))
        if sum(min(m, N) for _, N in pops) <= min(n, total):
            assert all(k >= min(m, N) for k, (_, N) in zip(sizes, pops, strict=True))


def test_it_rejects_a_failure_rate_outside_0_1():
    with pytest.raises(ValueError, match="between 0 and 1"):
        allocate([("a", 10)], 5, "neyman", fail_rates={"a": 1.5})


def test_it_records_inclusion_probability_and_weight():
    rows = design_table([("a", 9000), ("b", 300), ("c", 0)], [100, 100, 0])
    assert rows[0]["inclusion_probability"] == pytest.approx(100 / 9000)
    assert rows[0]["weight"] == pytest.approx(90.0)
    assert rows[1]["weight"] == pytest.approx(3.0)
    assert rows[2]["weight"] is None and rows[2]["inclusion_probability"] == 0.0


def test_it_resolves_failure_rates_from_partial_stratum_labels():
    labels = ["judge=fail | meta.model=a", "judge=pass | meta.model=a", "judge=fail | meta.model=b"]
    rates = resolve_fail_rates(labels, {"judge=fail": 0.6, "judge=fail | meta.model=b": 0.8, "*": 0.05})
    assert rates == {labels[0]: 0.6, labels[1]: 0.05, labels[2]: 0.8}


def _stats(plan, people):
    load = Counter(p for pair in plan for p in pair)
    pairs = Counter(frozenset(p) for p in plan)
    pair_counts = [pairs[frozenset((a, b))] for i, a in enumerate(people) for b in people[i + 1 :]]
    return [load[p] for p in people], pair_counts


def test_it_plans_two_distinct_annotators_with_level_loads_and_pairs():
    people = ["u1", "u2", "u3", "u4", "u5"]
    plan = plan_pairs(150, people)
    assert all(a != b for a, b in plan)
    loads, pairs = _stats(plan, people)
    assert loads == [60] * 5
    assert pairs == [15] * 10


def test_it_keeps_loads_and_pairs_within_one_for_any_team():
    for k in range(2, 11):
        people = list(range(k))
        for n in (1, 7, 40, 149):
            loads, pairs = _stats(plan_pairs(n, people), people)
            assert max(loads) - min(loads) <= 1, (k, n, loads)
            assert max(pairs) - min(pairs) <= 1, (k, n, pairs)


def test_it_needs_two_annotators():
    with pytest.raises(ValueError):
        plan_pairs(3, ["only"])


def test_it_rebalances_towards_a_new_annotator_with_unstarted_work_only():
    people = [1, 2, 3, 4]
    plan = plan_pairs(30, people)
    rows = []
    for item, (a, b) in enumerate(plan):
        rows.append((2 * item, item, a, b, item % 5 != 0))  # every fifth item's work has started
        rows.append((2 * item + 1, item, b, a, item % 5 != 0))
    moves = plan_rebalance(rows, 5, dict(Counter(p for pair in plan for p in pair)))
    assert len(moves) == 12  # 60 assignments over 5 people
    moved = {aid for aid, _ in moves}
    items = [r[1] for r in rows if r[0] in moved]
    assert len(items) == len(set(items))  # never both assignments of one item
    assert all(r[4] for r in rows if r[0] in moved)


def test_it_says_that_an_expected_failure_rate_of_0_leaves_a_neyman_stratum_unsampled():
    """Neyman weighs a stratum by N_h * sqrt(p(1-p)): at p = 0 it gets no answer. The note names that rate and
    its strata, not the minimum per stratum (which was the only remedy it named)."""
    strata = [("model=a", 200), ("model=b", 200), ("model=c", 200)]
    rates = resolve_fail_rates([s for s, _ in strata], {"*": 0.1, "model=a": 0, "model=b": 0})
    sizes = allocate(strata, 150, NEYMAN, fail_rates=rates)
    assert sizes == [0, 0, 150]
    [n] = design_notes(strata, sizes, 150, 0, rates)
    assert n["field"] == "fail_rates" and n["label"] == "Expected failure rates"
    assert n["message"].startswith("2 strata expected to fail at a rate of 0 (or 1) get no answer under Neyman")
    assert "(model=a, model=b)" in n["message"] and "e.g. 0.02" in n["message"]
    everywhere = dict.fromkeys(rates, 0.0)
    sizes = allocate(strata, 150, NEYMAN, fail_rates=everywhere)
    assert sizes == [50, 50, 50]
    [n] = design_notes(strata, sizes, 150, 0, everywhere)
    assert n["field"] == "fail_rates" and n["message"].endswith("the sample is shared equally instead")
    assert [n["field"] for n in design_notes(strata, [0, 0, 150], 150, 0)] == ["min_per_stratum"]  # not Neyman


def test_it_finds_the_failure_rates_that_apply_to_no_stratum():
    labels = ["judge=fail | meta.model=a", "judge=pass | meta.model=a"]
    given = {"*": 0.1, "judge=fail": 0.6, "judge=fial": 0.6, " meta.model=b ": 0.2, "judge=pass | meta.model=a": 0}
    assert unmatched_rates(labels, given) == ["judge=fial", "meta.model=b"]
    assert resolve_fail_rates(labels, given) == {labels[0]: 0.6, labels[1]: 0.0}
