"""setmaxnreg: per-warpgroup register accounting against the CTA's register pool (issue 17, item 3).

`setmaxnreg.{inc,dec}.sync.aligned.u32 N` (PTX ISA 9.7.21.5) changes the per-thread register limit of the
executing warpgroup.  What NumSim checks, each an error finding:

- `setmaxnreg_invalid_count`: N outside [24, 256] or not a multiple of 8;
- `setmaxnreg_invalid_direction`: an `inc` below, or a `dec` above, the warpgroup's current limit;
- at exit, per warpgroup, the warps' sequences of setmaxnreg (the instruction is warpgroup-collective):
  `setmaxnreg_incomplete_warpgroup` when some of its warps executed one the others never did (on hardware
  the warpgroup waits for them: a hang), `setmaxnreg_divergence` when they asked for different counts;
- `register_oversubscription`: the limits the warpgroups end with need more registers than the pool, so
  some `inc` can never be satisfied (on hardware it waits forever).  This is the final-demand check: an
  `inc` that blocks only until a later `dec` of another warpgroup is not a finding.

Model assumptions: the pool is the SM's 64K 32-bit registers (one CTA per SM, as warp-specialized kernels
using setmaxnreg are launched), and every warpgroup starts at the launch's per-thread allocation, the largest
multiple of 8 that fits the pool for the block's warpgroups (at most 256).  That allocation is the compiled
register count, which the kernel text does not give, so the pool share is its upper bound: a warpgroup's first
`dec` above it is an error, a first `inc` below it is not judged (the compiled count may be lower).
"""
from __future__ import annotations

from ..common.verdict import Verdict
from .errors import Diagnostic, EngineError

POOL = 65536


def initial_limit(nthreads: int) -> int:
    groups = max(1, -(-nthreads // 128))
    return min(256, (POOL // (groups * 128)) // 8 * 8)


def execute(w, count: int, direction: str, site: int, span) -> None:
    """One warp's setmaxnreg: check the count and direction, record it for the exit checks."""
    if count < 24 or count > 256 or count % 8:
        raise EngineError("setmaxnreg_invalid_count",
                          f"setmaxnreg.{direction} {count}: the register count must be a multiple of 8 in [24, 256]",
                          span, count=count)
    rt = w.rt
    book = rt.setmaxnreg
    if book is None:
        book = rt.setmaxnreg = {}
    seq = book.setdefault(w.index, [])
    current = seq[-1][0] if seq else initial_limit(rt.nthreads)
    # the launch's allocation is ptxas's register count, which the kernel text does not give: the pool share is
    # only its upper bound, so a first dec above it is an error but a first inc below it cannot be judged
    below_bound = direction == "inc" and count < current and not seq
    if (direction == "inc" and count < current and not below_bound) or (direction == "dec" and count > current):
        raise EngineError("setmaxnreg_invalid_direction",
                          f"setmaxnreg.{direction} {count} by warp {w.index}: its warpgroup's limit is {current}, "
                          f"and .{direction} must {'raise' if direction == 'inc' else 'lower'} it (or keep it)",
                          span, count=count, current=current)
    seq.append((count, direction, site))


def at_exit(ctas, sites) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for rt in ctas:
        book = rt.setmaxnreg
        if not book:
            continue
        nwarps = len(rt.warps)
        limits = []
        for g in range(0, nwarps, 4):
            members = list(range(g, min(g + 4, nwarps)))
            seqs = {k: book.get(k, []) for k in members}
            longest = max(seqs.values(), key=len)
            if not longest:
                limits.append(initial_limit(rt.nthreads))
                continue
            short = [k for k, s in seqs.items() if len(s) < len(longest)]
            wg = g // 4
            if short:
                i = min(len(seqs[k]) for k in short)
                count, direction, site = longest[i]
                done = [k for k, s in seqs.items() if len(s) > i]
                out.append(Diagnostic(
                    "setmaxnreg_incomplete_warpgroup", Verdict.ERROR,
                    f"setmaxnreg.{direction} {count} is warpgroup-collective, but only warp(s) "
                    f"{', '.join(map(str, done))} of warpgroup {wg} (CTA {rt.index}) executed it; warp(s) "
                    f"{', '.join(map(str, short))} never did: on hardware the warpgroup hangs there",
                    sites[site].span, {"cta": rt.index, "warpgroup": wg, "executed": done, "missing": short,
                                       "count": count}))
                continue
            for i in range(len(longest)):
                counts = {k: s[i][0] for k, s in seqs.items()}
                if len(set(counts.values())) > 1:
                    site = longest[i][2]
                    out.append(Diagnostic(
                        "setmaxnreg_divergence", Verdict.ERROR,
                        f"the warps of warpgroup {wg} (CTA {rt.index}) ask for different register counts in one "
                        f"setmaxnreg: " + ", ".join(f"warp {k}: {c}" for k, c in counts.items()),
                        sites[site].span, {"cta": rt.index, "warpgroup": wg, "counts": counts}))
                    break
            limits.append(longest[-1][0])
        demand = sum(limit * 128 for limit in limits)
        if demand > POOL:
            last = max((s[-1][2] for s in book.values() if s and s[-1][1] == "inc"), default=None)
            if last is None:
                last = max(s[-1][2] for s in book.values() if s)
            out.append(Diagnostic(
                "register_oversubscription", Verdict.ERROR,
                f"the warpgroups of CTA {rt.index} end with per-thread limits {'/'.join(map(str, limits))}, "
                f"{demand} registers of a {POOL}-register pool: some setmaxnreg.inc can never be satisfied "
                f"(on hardware it waits forever)", sites[last].span,
                {"cta": rt.index, "limits": limits, "demand": demand, "pool": POOL}))
    return out
