"""Shared helpers for the explorer tests: sync programs from the ring fixture kernel (built
the way synccheck builds them), hand-written programs given clocks by a reference run,
and an unreduced all-failures oracle."""
from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import numpy as np

import ir
import modelcheck
from modelcheck import explorer, numsim
from modelcheck.common.phase_a import Causality, StrictProtocol
from modelcheck.common.results import resolve_inputs
from modelcheck.explorer import Command, Programs
from modelcheck.explorer.search import Model, ProtocolViolation

RING = Path(__file__).resolve().parents[2] / "fixtures" / "explorer" / "ring.py"
FAILURES = ("deadlock", "protocol_error", "nonconfluent")


# ---------------------------------------------------------------------- programs from a kernel run
class MutedStrictProtocol(StrictProtocol):
    """The strict observer without its halt: the run goes on past an arrive before consumption."""

    def on_sync(self, ev):
        try:
            super().on_sync(ev)
        except numsim.Halt:
            pass


class MutedCausality(Causality):
    """The causality tracker without its halt (clocks are still recorded for every event)."""

    def _fail(self, kind, message, ev, **details):
        return None


def kernel_programs(path, consts: dict, halting: bool = True):
    """(Programs, NumSimResult) of one run of the kernel, as synccheck builds them.

    `halting=True` uses synccheck's own observers, so a phase-A finding stops the run and the
    programs are those of the partial run; `halting=False` mutes the phase-A observers so the
    run (and the programs) go on as far as NumSim itself can."""
    func = ir.as_func(modelcheck.load(path, **consts))
    inputs, missing = resolve_inputs(func, None)
    assert not missing
    if halting:
        strict, causality = StrictProtocol("synccheck"), Causality("synccheck")
    else:
        strict, causality = MutedStrictProtocol("synccheck"), MutedCausality("synccheck")
    trace = numsim.Trace()
    trace.wants_accesses = False
    res = numsim.Engine(func, unsupported="incomplete").run(inputs, observers=(strict, causality, trace))
    return explorer.build(trace.sync, causality.event_clocks, causality.ctx.name_of), res


def ring_programs(config: dict, halting: bool = True):
    return kernel_programs(RING, config, halting)


# ---------------------------------------------------------------------- hand-written programs
def mb(name: str) -> tuple:
    return ("mbarrier", 0, name)


def named(bar_id: int) -> tuple:
    return ("named", 0, bar_id)


def init(res, count: int) -> dict:
    return {"kind": "init", "resource": res, "count": count}


def arrive(res, count: int = 1, tx: int = 0) -> dict:
    return {"kind": "arrive", "resource": res, "count": count, "tx": tx}


def expect_tx(res, tx: int) -> dict:
    return {"kind": "expect_tx", "resource": res, "tx": tx}


def issue_tx(res, tx: int) -> dict:
    return {"kind": "issue_tx", "resource": res, "tx": tx}


def wait(res, parity: int) -> dict:
    return {"kind": "wait", "resource": res, "parity": parity}


def bar_sync(bar_id: int, count: int, threads: int = 32) -> list[dict]:
    """`bar.sync id, count` of one warp: a contribution, then the resume once the generation completes."""
    return [{"kind": "contribute", "resource": named(bar_id), "count": count, "threads": threads, "flavor": "sync",
             "aligned": True},
            {"kind": "resume", "resource": named(bar_id)}]


def bar_arrive(bar_id: int, count: int, threads: int = 32) -> dict:
    return {"kind": "contribute", "resource": named(bar_id), "count": count, "threads": threads, "flavor": "arrive"}


def clocked(spec: dict[int, list[dict]], seed: int = 0, partial: bool = False,
            max_steps: int = 10_000) -> Programs | None:
    """Programs from hand-written per-warp command lists, with the clocks and generations that
    phase A would record for one run of them (a random schedule drawn from `seed`).

    The clock rules mirror `modelcheck.common.phase_a.Causality`: every command ticks its warp;
    an arrive releases into its generation, a wait joins the releases and async completions of
    the generation it observed (none for the vacuous parity-1 pass after init); an async issue
    hands its clock to the completion; named-barrier contributions release, the resume of a
    `bar.sync` acquires.  When that run does not complete (a deadlock or a protocol error in the
    run itself, where phase A stops), returns None, or with `partial` the programs of the commands
    the run did execute (what a stopped phase A leaves)."""
    warps = sorted(spec)
    nw = max(warps) + 1
    names = {}
    progs: dict[int, list[Command]] = {}
    for w in warps:
        prog = []
        for k, item in enumerate(spec[w]):
            item = dict(item)
            res = item.pop("resource")
            names.setdefault(res, str(res[2]) if res[0] == "mbarrier" else f"named barrier {res[2]}")
            prog.append(Command(w, k, item.pop("kind"), res, site=1000 * w + k, iters=(k,), **item))
        progs[w] = prog
    model = Model(progs, None, names)
    rng = random.Random(seed)
    clocks = {w: np.zeros(nw, dtype=np.int64) for w in warps}
    release: dict = {}                 # (resource, generation) -> joined clock
    tokens: dict = {}                  # (kind, resource index, amount) -> FIFO of issuer clocks
    recorded: dict = {}                # (warp, index) -> (before, after, generation)
    state = model.initial()
    stopped = True
    for _ in range(max_steps):
        if model.is_complete(state):
            stopped = False
            break
        ts = model.enabled(state)
        if not ts:
            break
        t = rng.choice(ts)
        cursors, rs, contrib, _ = state
        if t[0] == "land":
            kind, ri, amount = t[1]
            issuer = tokens[t[1]].pop(0)
            res = model.resources[ri]
            gen = rs[ri][4]
            key = (res, gen, "completion")
            release[key] = issuer.copy() if key not in release else np.maximum(release[key], issuer)
        else:
            k = t[1]
            w = model.warps[k]
            c = model.progs[k][cursors[k]]
            r = rs[model.rindex[c.resource]]
            clock = clocks[w]
            before = clock.copy()
            clock[w] += 1
            gen = None
            if c.kind == "init":
                gen = 0
                for key in [key for key in release if key[0] == c.resource]:
                    del release[key]
            elif c.kind in ("arrive", "expect_tx", "complete_tx", "issue_tx", "issue_arrive"):
                gen = r[4]
                if c.kind == "arrive":
                    key = (c.resource, gen, "release")
                    release[key] = clock.copy() if key not in release else np.maximum(release[key], clock)
                if c.kind in ("issue_tx", "issue_arrive"):
                    tokens.setdefault(("tx" if c.kind == "issue_tx" else "arrive", model.rindex[c.resource],
                                       c.tx if c.kind == "issue_tx" else 1), []).append(clock.copy())
            elif c.kind == "wait":
                gen = r[4] - 1 if r[4] >= 1 else None
                if gen is not None:
                    for what in ("release", "completion"):
                        if (c.resource, gen, what) in release:
                            np.maximum(clock, release[(c.resource, gen, what)], out=clock)
            elif c.kind == "contribute":
                gen = r[0]
                key = (c.resource, gen, "named")
                release[key] = clock.copy() if key not in release else np.maximum(release[key], clock)
            elif c.kind == "resume":
                gen = contrib[k]
                if (c.resource, gen, "named") in release:
                    np.maximum(clock, release[(c.resource, gen, "named")], out=clock)
            recorded[(w, c.index)] = (before, clock.copy(), gen)
        try:
            state = model.step(state, t)
        except ProtocolViolation:
            if t[0] == "cmd":
                recorded.pop((w, c.index), None)      # the rejected command is not in the trace
            break
    if stopped and not partial:
        return None
    out = {w: [replace(c, before=recorded[(w, c.index)][0], after=recorded[(w, c.index)][1],
                       generation=recorded[(w, c.index)][2]) for c in progs[w] if (w, c.index) in recorded]
           for w in warps}
    return Programs({w: prog for w, prog in out.items() if prog}, names)


# ---------------------------------------------------------------------- the oracle
def whole_model(programs: Programs) -> Model:
    return Model({w: list(p) for w, p in programs.warps.items()}, None, programs.resource_names)


def all_failures(programs: Programs, max_states: int = 100_000):
    """Every failure kind reachable in the unprojected, unreduced product (no stop at the first
    failure): a set drawn from FAILURES, or None past `max_states`."""
    model = whole_model(programs)
    root = model.initial()
    seen = {root}
    stack = [root]
    kinds, finals = set(), set()
    while stack:
        s = stack.pop()
        if model.is_complete(s):
            finals.add(s)
            continue
        ts = model.enabled(s)
        if not ts:
            kinds.add("deadlock")
            continue
        for t in ts:
            try:
                n = model.step(s, t)
            except ProtocolViolation:
                kinds.add("protocol_error")
                continue
            if n not in seen:
                seen.add(n)
                stack.append(n)
                if len(seen) > max_states:
                    return None
    if len(finals) > 1:
        kinds.add("nonconfluent")
    return kinds


def compare(programs: Programs, max_states: int = 50_000):
    """(reduced verdict, brute-force verdict, oracle kinds or None); 'limit' when a side gave up."""
    reduced = explorer.verify(programs, max_states=max_states, max_transitions=20 * max_states)
    whole = explorer.verify_whole(programs, sleep_sets=False, max_states=max_states,
                                  max_transitions=20 * max_states)
    oracle = None
    if "limit" not in (reduced.status, whole.status) and reduced.status != whole.status:
        oracle = all_failures(programs, 4 * max_states)
    return reduced, whole, oracle


def agree(reduced_status: str, whole_status: str, oracle) -> bool:
    """Same verdict; or, when a program can fail in more than one way, two failure kinds that the
    unreduced all-failures oracle both reaches (which one a search meets first depends on its
    order, docs/architecture.md#checkers: it stops at the first failure)."""
    if reduced_status == whole_status:
        return True
    if "complete" in (reduced_status, whole_status) or oracle is None:
        return False
    return reduced_status in oracle and whole_status in oracle
