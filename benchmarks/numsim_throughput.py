"""NumSim throughput on the 16-warp ring kernel, tracing on (target: >= 500k warp-instructions/s, issue #3).

Usage: python benchmarks/numsim_throughput.py [--rounds R] [--repeat N] [--no-trace]
Prints a table and writes benchmarks/results/numsim_throughput.json.  Runs on one core
(NumSim is single-threaded); the figure is warp-instructions per second of wall time,
simulation plus trace recording, excluding parse and compile.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-trace", action="store_true")
    args = ap.parse_args()
    import modelcheck
    from modelcheck import numsim
    kernel = modelcheck.load(ROOT / "benchmarks" / "kernels" / "ring16.py", ROUNDS=args.rounds)
    pairs = kernel.constants["PAIRS"]
    expected = np.array([[r * 100 + lane for lane in range(32)] for r in range(args.rounds)], dtype=np.int32)
    runs = []
    for _ in range(args.repeat):
        out = np.zeros(pairs * args.rounds * 32, dtype=np.int32)
        trace = numsim.Trace()
        observers = () if args.no_trace else (trace,)
        t0, c0 = time.perf_counter(), time.process_time()
        res = numsim.run(kernel.func, {"out": out}, observers=observers)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert res.verdict == "clean", [str(d) for d in res.diagnostics]
        got = res.outputs["out"].reshape(pairs, args.rounds, 32)
        assert all(np.array_equal(got[p], expected) for p in range(pairs)), "ring output differs from numpy"
        runs.append((wall, res.stats, len(trace.sync), len(trace.accesses), trace.lane_accesses(), cpu))
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[5] for r in runs)
    stats = runs[0][1]
    instr = stats["warp_instructions"]
    result = {
        "kernel": "benchmarks/kernels/ring16.py", "rounds": args.rounds, "warps": stats["warps"],
        "tracing": not args.no_trace, "warp_instructions": instr, "accesses": stats["accesses"],
        "lane_accesses": stats["lane_accesses"], "trace_sync_events": runs[0][2], "trace_access_records": runs[0][3],
        "wall_s_median": wall, "cpu_s_median": cpu,
        "warp_instructions_per_cpu_s": instr / cpu, "warp_instructions_per_wall_s": instr / wall,
        "accesses_per_cpu_s": stats["accesses"] / cpu, "lane_accesses_per_cpu_s": stats["lane_accesses"] / cpu,
        "target_warp_instructions_per_s": 500_000,
        "note": "warp-instructions = IR operations a warp executes (each statement, branch test, loop step, "
                "operator, memory access and op call counts one: the nearest analogue of PTX instructions); "
                "figures are per CPU-second of the single simulator thread (wall time also recorded)",
    }
    print(f"{'warps':>5} {'rounds':>6} {'warp-instr':>10} {'accesses':>9} {'cpu (s)':>8} {'wall (s)':>9} "
          f"{'warp-instr/s':>13} {'accesses/s':>11} {'lane-acc/s':>11}")
    print(f"{stats['warps']:>5} {args.rounds:>6} {instr:>10} {stats['accesses']:>9} {cpu:>8.3f} {wall:>9.3f} "
          f"{result['warp_instructions_per_cpu_s']:>13,.0f} {result['accesses_per_cpu_s']:>11,.0f} "
          f"{result['lane_accesses_per_cpu_s']:>11,.0f}")
    met = result["warp_instructions_per_cpu_s"] >= 500_000
    print(f"target >= 500k warp-instructions/s with tracing: {'met' if met else 'MISSED'}")
    if not args.no_trace:
        print("wrote", record("numsim_throughput", result))


if __name__ == "__main__":
    main()
