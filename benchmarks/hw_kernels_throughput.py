"""Checker time per warp-instruction on the issue-17 kernels, next to an existing kernel of the same shape
(issue 17's budget: within 2x of today's time per warp-instruction).

Usage: python benchmarks/hw_kernels_throughput.py [--repeat N] [--rounds R]
For each kernel: NumSim's warp-instruction count, then the median CPU time of Synccheck and of Racecheck
(each including its own NumSim run) divided by that count.  Writes benchmarks/results/hw_kernels_throughput.json.
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

# (label, kernel file, constants, inputs maker): the new kernel and an existing mbarrier ring as the baseline
CASES = [
    ("baseline mbar_depth_two_pipeline", "kernels/mbar_depth_two_pipeline.py", lambda r: {"ROUNDS": r}, None),
    ("ws_setmaxnreg (issue 17 item 3)", "kernels/ws_setmaxnreg.py", lambda r: {"ROUNDS": r}, "ws"),
]


def _inputs(kind, consts):
    if kind != "ws":
        return None
    rounds = consts["ROUNDS"]
    x = np.random.default_rng(0).standard_normal((rounds, 256)).astype(np.float32)
    return {"x": x, "out": np.zeros((rounds, 256), np.float32)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=64)
    args = ap.parse_args()
    import modelcheck
    from modelcheck import numsim
    rows = []
    for label, path, consts_of, kind in CASES:
        consts = consts_of(args.rounds)
        kernel = modelcheck.load(ROOT / path, **consts)
        inputs = _inputs(kind, consts)
        run_inputs = inputs if inputs is not None else numsim.default_inputs(kernel.func)
        instr = numsim.run(kernel.func, run_inputs).stats["warp_instructions"]
        row = {"kernel": path, "label": label, "constants": consts, "warp_instructions": instr}
        for name, check in (("synccheck", modelcheck.synccheck), ("racecheck", modelcheck.racecheck)):
            cpu = []
            for _ in range(args.repeat):
                c0 = time.process_time()
                report = check(kernel, inputs)
                cpu.append(time.process_time() - c0)
                assert report.verdict == "clean", (path, name, report.verdict)
            row[f"{name}_cpu_s_median"] = statistics.median(cpu)
            row[f"{name}_us_per_warp_instruction"] = 1e6 * statistics.median(cpu) / instr
        rows.append(row)
        print(f"{label:<36} {instr:>8} warp-instr  synccheck {row['synccheck_us_per_warp_instruction']:8.2f} us/instr"
              f"  racecheck {row['racecheck_us_per_warp_instruction']:8.2f} us/instr")
    base = rows[0]
    ratios = {r["label"]: {c: r[f"{c}_us_per_warp_instruction"] / base[f"{c}_us_per_warp_instruction"]
                           for c in ("synccheck", "racecheck")} for r in rows[1:]}
    for label, r in ratios.items():
        print(f"{label}: {r['synccheck']:.2f}x synccheck, {r['racecheck']:.2f}x racecheck of the baseline per "
              f"warp-instruction (budget 2x)")
    print("wrote", record("hw_kernels_throughput", {"rounds": args.rounds, "repeat": args.repeat, "rows": rows,
                                                   "ratio_to_baseline": ratios, "budget_ratio": 2.0,
                                                   "note": "CPU time; each checker includes its NumSim run"}))


if __name__ == "__main__":
    main()
