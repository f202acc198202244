"""Causal certificates: settle a one-resource projection without search.

Within one generation contributions only add, so if happens-before alone forces
every schedule to give each command the generation it had in the run, all schedules
reach the same states and none violates the protocol.  The conditions, checked on
the run's commands and their vector clocks (`a` happens-before `b` iff
`a.after[a.warp] <= b.before[a.warp]`):

mbarrier — one init, first, and happening before every other command; every
generation that completed got exactly its expected arrivals and matching tx bytes;
a generation whose arrivals can complete it has every expect_tx happen before some
of its arrivals (it cannot complete before its tx count was raised) and no more tx
bytes completed than expected;
every mutation of generation g >= 1 happens after some wait that observed g-1 (so
g-1 was consumed first), and so does every wait of g (else it could pass on the
same parity of g-2); every wait of g happens before some mutation of g+1 when
g+1 completes (it cannot be lapped); the vacuous parity-1 waits after init happen
before some mutation of generation 0 when it completes.

named barrier — every generation has one thread count, its contributions add up to
it without duplicates, aligned and unaligned syncs are not mixed, and every
contribution to g happens before every contribution to g+1.

Anything else falls back to search.
"""
from __future__ import annotations

from .program import Command


def hb(a: Command, b: Command) -> bool:
    if a.after is None or b.before is None:
        return False
    return bool(a.after[a.warp] <= b.before[a.warp])


_MUTATIONS = ("arrive", "expect_tx", "issue_tx", "issue_arrive", "complete_tx")


def mbarrier(commands: list[Command]) -> bool:
    inits = [c for c in commands if c.kind == "init"]
    if len(inits) != 1 or any(c.kind == "inval" for c in commands):
        return False
    init = inits[0]
    others = [c for c in commands if c is not init]
    if any(c.warp == init.warp and c.index < init.index for c in commands):
        return False
    if not all(hb(init, c) for c in others):
        return False
    expected = init.count
    by_gen: dict[int, dict] = {}
    for c in others:
        if c.generation is None:
            continue
        tally = by_gen.setdefault(c.generation, {"arrivals": 0, "expect": 0, "complete": 0, "waits": [], "muts": [],
                                                 "arrivers": [], "raises": []})
        if c.kind == "arrive":
            tally["arrivals"] += c.count
            tally["expect"] += c.tx
            tally["muts"].append(c)
            tally["arrivers"].append(c)
        elif c.kind == "issue_arrive":
            tally["arrivals"] += c.count
            tally["muts"].append(c)
            tally["arrivers"].append(c)
        elif c.kind == "expect_tx":
            tally["expect"] += c.tx
            tally["muts"].append(c)
            tally["raises"].append(c)
        elif c.kind in ("issue_tx", "complete_tx"):
            tally["complete"] += c.tx
            tally["muts"].append(c)
        elif c.kind == "wait":
            tally["waits"].append(c)
    if any(c.kind == "issue_arrive" and not c.noinc for c in others):
        return False
    # generations that must be exact (waited on, or followed by another) ...
    completed = {g for g, v in by_gen.items() if v["waits"] or (g + 1) in by_gen}
    for g in completed:
        v = by_gen[g]
        if v["arrivals"] != expected or v["expect"] != v["complete"]:
            return False
    # ... and every generation that completes in every schedule, waited on or not: a wait of g-1 that
    # is not ordered before some mutation of g can be lapped by g's completion and then never pass
    completes = completed | {g for g, v in by_gen.items() if v["arrivals"] == expected
                             and v["expect"] == v["complete"]}
    for g, v in by_gen.items():
        if v["arrivals"] > expected:
            return False
        if v["arrivals"] == expected:
            # the arrivals can complete g: no schedule may complete it early, before an expect_tx
            # raised its tx count (so every expect_tx comes before some arrival), nor over-deliver
            if v["complete"] > v["expect"]:
                return False
            if not all(any(hb(r, a) for a in v["arrivers"]) for r in v["raises"]):
                return False
        if g >= 1:
            prior = by_gen.get(g - 1, {}).get("waits", [])
            if not all(any(hb(wt, m) for wt in prior) for m in v["muts"]):
                return False
            # a wait of g (parity g & 1) passes on g - 2 as well: it must come after g - 1 completed
            if not all(any(hb(wt, w) for wt in prior) for w in v["waits"]):
                return False
        nxt = by_gen.get(g + 1)
        if nxt is not None and (g + 1) in completes:
            if not all(any(hb(wt, m) for m in nxt["muts"]) for wt in v["waits"]):
                return False
        if any(wt.parity != (g & 1) for wt in v["waits"]):
            return False
    vacuous = [c for c in others if c.kind == "wait" and c.generation is None]
    if vacuous and 0 in completes:
        if not all(any(hb(wt, m) for m in by_gen[0]["muts"]) for wt in vacuous):
            return False
    return True


def named(commands: list[Command]) -> bool:
    contribs = [c for c in commands if c.kind == "contribute"]
    by_gen: dict[int, list[Command]] = {}
    for c in contribs:
        if c.generation is None:
            return False
        by_gen.setdefault(c.generation, []).append(c)
    for g, cs in by_gen.items():
        counts = {c.count for c in cs}
        if len(counts) != 1:
            return False
        for k, c in enumerate(cs):      # a lane of a warp contributes once per generation and flavor
            if any(d.warp == c.warp and d.flavor == c.flavor and d.lanes & c.lanes for d in cs[:k]):
                return False
        if len({c.aligned for c in cs if c.flavor == "sync"}) > 1:
            return False
        total = sum(c.threads for c in cs)
        count = counts.pop()
        if total > count or (total < count and (g + 1) in by_gen):
            return False
        nxt = by_gen.get(g + 1, [])
        if not all(hb(d, c) for d in cs for c in nxt):
            return False
    return True
