"""Who labels what: pure functions over annotator ids, no ORM.

plan_pairs walks a round-robin tournament (circle method: each round pairs everyone once, one bye when
the count is odd) so every pair is used once per cycle; inside a round it takes the pair whose members
have the lowest load first. Loads never differ by more than one, nor do pair counts.
"""


def _rounds(people):
    ps = [*people, None] if len(people) % 2 else list(people)
    n = len(ps)
    out = []
    for _ in range(n - 1):
        out.append([(ps[i], ps[n - 1 - i]) for i in range(n // 2) if ps[i] is not None and ps[n - 1 - i] is not None])
        ps = [ps[0], ps[-1], *ps[1:-1]]
    return out


def plan_pairs(n_items, annotators):
    """[(slot_a_annotator, slot_b_annotator)] for n_items items; annotators: ordered distinct ids (>= 2)."""
    people = list(dict.fromkeys(annotators))
    if len(people) < 2:
        raise ValueError("at least two distinct annotators are needed")
    load = dict.fromkeys(people, 0)
    as_a = dict.fromkeys(people, 0)
    rank = {p: i for i, p in enumerate(people)}
    schedule = _rounds(people)
    pending, next_round, plan = [], 0, []
    while len(plan) < n_items:
        if not pending:
            pending = list(schedule[next_round % len(schedule)])
            next_round += 1
        pair = min(pending, key=lambda c: (max(load[c[0]], load[c[1]]), load[c[0]] + load[c[1]]))
        pending.remove(pair)
        a, b = sorted(pair, key=lambda p: (as_a[p], rank[p]))  # balance who is slot A
        plan.append((a, b))
        as_a[a] += 1
        load[a] += 1
        load[b] += 1
    return plan


def plan_rebalance(assignments, newcomer, loads, stranded=()):
    """Moves for adding an annotator mid-audit.

    assignments: [(assignment_id, item_id, annotator, other_annotator, movable)] of the audit (movable: not
    started); loads: {annotator: count} of everyone already in it; stranded: annotators who can no longer
    label (deactivated, or without the role). Returns [(assignment_id, old_annotator)] to give to the
    newcomer: first every movable assignment of the stranded (nobody else would label it), then from the
    most-loaded of the others until the newcomer is level with them; never both assignments of one item,
    and spreading the newcomer's partners evenly.
    """
    stranded = set(stranded) - {newcomer}
    busy = {item for _, item, owner, other, _ in assignments if newcomer in (owner, other)}
    moves, partners = [], {}
    for aid, item, owner, other, movable in assignments:
        if owner in stranded and movable and item not in busy:
            busy.add(item)
            partners[other] = partners.get(other, 0) + 1
            moves.append((aid, owner))
    loads = {p: n for p, n in loads.items() if p not in stranded}
    loads[newcomer] = loads.get(newcomer, 0) + len(moves)
    rank = {p: i for i, p in enumerate(loads)}
    goal = sum(loads.values()) // len(loads)
    options = {}
    for aid, item, owner, other, movable in assignments:
        if movable and item not in busy and owner not in stranded:
            options.setdefault(owner, []).append((aid, item, other))
    while loads[newcomer] < goal:
        donors = [
            p
            for p in loads
            if p != newcomer
            and loads[p] > loads[newcomer] + 1
            and any(item not in busy for _, item, _ in options.get(p, []))
        ]
        if not donors:
            break
        donor = min(donors, key=lambda p: (-loads[p], rank[p]))
        aid, item, other = min(
            (o for o in options[donor] if o[1] not in busy), key=lambda o: (partners.get(o[2], 0), o[0])
        )
        busy.add(item)
        partners[other] = partners.get(other, 0) + 1
        loads[donor] -= 1
        loads[newcomer] += 1
        moves.append((aid, donor))
    return moves
