"""Synccheck phase B on the ring family: verifier states/transitions with and without reductions (issue #5).

Usage: python benchmarks/explorer_states.py [--max-states N] [--max-seconds S] [--repeat N] [--quick]

Kernel: benchmarks/kernels/ring_family.py (PRODUCERS x CONSUMERS warps, STAGES, ROUNDS; one CTA,
clean for every configuration).  For each ring, phase A runs once (NumSim with the protocol
and causality observers) and the same fixed sync programs are verified under
  (a) projections + certificates + sleep sets   (what synccheck runs)
  (b) projections + sleep sets                  (no certificates)
  (c) projections only                          (no certificates, no sleep sets)
  (d) the whole program, unprojected, no sleep sets
each with a limit of --max-states states and --max-seconds of wall time; a configuration that
stops at the limit is reported as "> limit" with the counts reached (its true size is larger).
Then the whole `modelcheck.synccheck` call (parse excluded) on 16-warp, 32-round rings is
timed, median of --repeat runs, wall and CPU.  Targets: <= 10 states on 1x15x4x32 with
reductions; a clean synccheck of a 16-warp, 32-round ring in <= 2 s.
Writes benchmarks/results/explorer_states.json.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402

KERNEL = ROOT / "benchmarks" / "kernels" / "ring_family.py"
RINGS = [(1, 1, 2, 8), (1, 3, 2, 8), (2, 4, 2, 16), (1, 3, 4, 32), (1, 7, 4, 16), (8, 8, 4, 32), (1, 15, 4, 32)]
QUICK = [(1, 1, 2, 8), (1, 3, 2, 8), (2, 4, 2, 16), (1, 15, 4, 32)]
TIMED = [(1, 15, 4, 32), (8, 8, 4, 32)]
TARGET_STATES, TARGET_SECONDS = 10, 2.0
REFERENCE = ("reference explorer bench (checker-semantics.md section 8), 1 producer + 15 consumers, 4 stages, "
             "32 iterations: whole-program search > 100k states (incomplete); per-resource + strong diamonds "
             "1,062 states; + fingerprints 279; + certificates 9 states")


def load(ring):
    import modelcheck
    p, c, s, r = ring
    return modelcheck.load(KERNEL, PRODUCERS=p, CONSUMERS=c, STAGES=s, ROUNDS=r)


def explore(ring, max_states: int, max_seconds: float) -> dict:
    from modelcheck.explorer import reductions
    from modelcheck.synccheck import phase_a
    kernel = load(ring)
    a = phase_a(kernel.func)
    assert a.programs is not None and not a.findings, [f.kind for f in a.findings]
    rows = reductions.measure(a.programs, max_states=max_states, max_seconds=max_seconds)
    return {"ring": "x".join(map(str, ring)), "producers": ring[0], "consumers": ring[1], "stages": ring[2],
            "rounds": ring[3], "warps": len(a.programs.warps), "commands": a.programs.size(),
            "projections": len(a.programs.resources()), "configurations": rows}


def time_synccheck(ring, repeat: int) -> dict:
    import modelcheck
    kernel = load(ring)
    runs = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = modelcheck.synccheck(kernel.func)
        runs.append((time.perf_counter() - t0, time.process_time() - c0, report.stats["phase_a_wall_time_s"],
                      report.stats["phase_b_wall_time_s"]))
        assert report.verdict == "clean", report.format()
    stats = report.stats
    return {"ring": "x".join(map(str, ring)), "warps": ring[0] + ring[1], "rounds": ring[3],
            "verdict": report.verdict, "wall_s_median": statistics.median(r[0] for r in runs),
            "cpu_s_median": statistics.median(r[1] for r in runs),
            "runs": [dict(zip(("wall_s", "cpu_s", "phase_a_wall_s", "phase_b_wall_s"), r)) for r in runs],
            "verifier_states": stats.get("verifier_states"), "verifier_transitions": stats.get("verifier_transitions"),
            "phase_a_wall_time_s": statistics.median(r[2] for r in runs),
            "phase_b_wall_time_s": statistics.median(r[3] for r in runs),
            "warp_instructions": stats.get("numsim", {}).get("warp_instructions"),
            "target_s": TARGET_SECONDS, "met": statistics.median(r[0] for r in runs) <= TARGET_SECONDS}


def cell(row: dict) -> str:
    mark = ">" if row["status"] == "limit" else ""
    return f"{mark}{row['states']:,}/{mark}{row['transitions']:,} {row['wall_time_s']:.3f}s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-states", type=int, default=200_000)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer rings, 20k-state limit (a smoke run; not recorded)")
    args = ap.parse_args()
    rings = QUICK if args.quick else RINGS
    max_states = 20_000 if args.quick else args.max_states
    from modelcheck.explorer import reductions
    results = []
    print("verifier states / transitions and wall time per configuration; '>' = stopped at the limit "
          f"({max_states:,} states or {args.max_seconds:g} s), so the true count is larger")
    for key, label in reductions.CONFIGURATIONS.items():
        print(f"  ({key}) {label}")
    print(f"{'ring PxCxSxR':>13} {'warps':>5} {'cmds':>5} {'proj':>4}  " +
          "  ".join(f"{'(' + k + ')':<30}" for k in reductions.CONFIGURATIONS))
    for ring in rings:
        res = explore(ring, max_states, args.max_seconds)
        results.append(res)
        print(f"{res['ring']:>13} {res['warps']:>5} {res['commands']:>5} {res['projections']:>4}  " +
              "  ".join(f"{cell(row):<30}" for row in res["configurations"]), flush=True)
    target_ring = next((r for r in results if r["ring"] == "1x15x4x32"), None)
    states_met = None
    if target_ring is not None:
        a = target_ring["configurations"][0]
        states_met = a["status"] == "complete" and a["states"] <= TARGET_STATES
        print(f"target <= {TARGET_STATES} states on 1x15x4x32 with reductions: {a['states']} states "
              f"({a['transitions']} transitions, {target_ring['projections']} projections, "
              f"{sum(p['method'] == 'certificate' for p in a['per_projection'])} certified): "
              f"{'met' if states_met else 'MISSED'}")
    print(REFERENCE)
    print()
    print(f"{'ring PxCxSxR':>13} {'warps':>5} {'rounds':>6} {'verdict':>7} {'states':>6} {'wall (s)':>9} "
          f"{'cpu (s)':>8} {'phase A':>8} {'phase B':>8}   whole modelcheck.synccheck call, median of {args.repeat}")
    timed = []
    for ring in TIMED:
        t = time_synccheck(ring, args.repeat)
        timed.append(t)
        print(f"{t['ring']:>13} {t['warps']:>5} {t['rounds']:>6} {t['verdict']:>7} {t['verifier_states']:>6} "
              f"{t['wall_s_median']:>9.3f} {t['cpu_s_median']:>8.3f} {t['phase_a_wall_time_s']:>8.3f} "
              f"{t['phase_b_wall_time_s']:>8.3f}")
    time_met = all(t["met"] for t in timed)
    print(f"target: clean synccheck of a 16-warp, 32-round ring <= {TARGET_SECONDS:g} s: "
          f"{'met' if time_met else 'MISSED'}")
    if args.quick:
        return
    payload = {"kernel": "benchmarks/kernels/ring_family.py", "limits": {"max_states": max_states,
                                                                         "max_seconds": args.max_seconds},
               "configurations": reductions.CONFIGURATIONS, "rings": results, "synccheck_timing": timed,
               "targets": {"states_1x15x4x32_max": TARGET_STATES, "states_met": states_met,
                           "synccheck_16_warps_32_rounds_max_s": TARGET_SECONDS, "time_met": time_met},
               "reference": REFERENCE, "load_average_at_end": list(os.getloadavg()),
               "note": "states/transitions of a configuration with status 'limit' are the counts reached when it "
                       "stopped (the true figure is larger; projections after the one that stopped were not "
                       "explored); sleep sets prune transitions, not states (they revisit no fewer states)"}
    print("wrote", record("explorer_states", payload))


if __name__ == "__main__":
    main()
