"""Checker time per warp-instruction on the issue-17 kernels, next to an existing kernel of the same shape
(issue 17's budget: within 2x of today's time per warp-instruction).

Usage: python benchmarks/hw_kernels_throughput.py [--repeat N] [--rounds R]
For each kernel: NumSim's warp-instruction count, then the median CPU time of Synccheck and of Racecheck
(each including its own NumSim run) divided by that count.  Writes benchmarks/results/hw_kernels_throughput.json.
Each new kernel is compared with the baseline of its shape: the mbarrier ring for the small ones, the
one-CTA persistent tcgen05 GEMM for the 2-CTA cluster GEMM.  A kernel with cluster launch control is checked
by Synccheck once per answer sequence of its requests (explorer/choices.py): its row also gives the time per
warp-instruction simulated over all those runs.
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

# (label, kernel file, constants, manifest entry giving the inputs or None, baseline label)
RING = "baseline mbar_depth_two_pipeline"
SMALL = "baseline mbar_depth_two_pipeline, ROUNDS=2 (small: fixed costs dominate)"
GEMM = "baseline gemm_persistent (1-CTA tcgen05 GEMM)"
CASES = [
    (RING, "kernels/mbar_depth_two_pipeline.py", lambda r: {"ROUNDS": r}, None, None),
    ("ws_setmaxnreg (issue 17 item 3)", "kernels/ws_setmaxnreg.py", lambda r: {"ROUNDS": r}, "ws", RING),
    (SMALL, "kernels/mbar_depth_two_pipeline.py", lambda r: {"ROUNDS": 2}, None, None),
    ("cluster_exit_early_fixed (DSMEM, cluster barrier)", "kernels/cluster_exit_early_fixed.py", lambda r: {},
     "cluster_exit_early_fixed", SMALL),
    ("cluster_init_not_visible_fixed (remote arrive)", "kernels/cluster_init_not_visible_fixed.py", lambda r: {},
     "cluster_init_not_visible_fixed", SMALL),
    ("tma_multicast_tx_fixed (multicast TMA)", "kernels/tma_multicast_tx_fixed.py", lambda r: {},
     "tma_multicast_tx_fixed", SMALL),
    ("clc_consumer_count (CLC, 4 answer sequences)", "kernels/clc_consumer_count.py", lambda r: {},
     "clc_consumer_count", SMALL),
    (GEMM, "kernels/gemm_persistent.py", lambda r: {}, "gemm_persistent", None),
    ("gemm_2cta_clc (4-CTA clusters, 2-CTA MMA, multicast, CLC)", "kernels/gemm_2cta_clc.py", lambda r: {},
     "gemm_2cta_clc", GEMM),
]


def _inputs(kind, kernel, consts):
    if kind is None:
        return None
    if kind == "ws":
        rounds = consts["ROUNDS"]
        x = np.random.default_rng(0).standard_normal((rounds, 256)).astype(np.float32)
        return {"x": x, "out": np.zeros((rounds, 256), np.float32)}
    from tests.manifest import load_manifest, manifest_inputs
    return manifest_inputs(kernel.func, load_manifest()["kernels"][kind], kernel.constants)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=64)
    args = ap.parse_args()
    import modelcheck
    from modelcheck import numsim
    rows = []
    for label, path, consts_of, kind, _ in CASES:
        consts = consts_of(args.rounds)
        kernel = modelcheck.load(ROOT / path, **consts)
        inputs = _inputs(kind, kernel, consts)
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
            if name == "synccheck" and report.stats.get("clc_paths"):
                total = report.stats["clc_warp_instructions"]
                row["synccheck_clc_paths"] = report.stats["clc_paths"]
                row["synccheck_warp_instructions_simulated"] = total
                row["synccheck_us_per_simulated_warp_instruction"] = 1e6 * statistics.median(cpu) / total
        rows.append(row)
        extra = (f"  ({row['synccheck_clc_paths']} CLC paths: {row['synccheck_us_per_simulated_warp_instruction']:.2f}"
                 f" us/simulated instr)" if "synccheck_clc_paths" in row else "")
        print(f"{label:<60} {instr:>8} warp-instr  synccheck {row['synccheck_us_per_warp_instruction']:8.2f} us/instr"
              f"  racecheck {row['racecheck_us_per_warp_instruction']:8.2f} us/instr{extra}")
    by_label = {r["label"]: r for r in rows}
    ratios = {}
    for (label, *_, base_label), r in zip(CASES, rows):
        if base_label is None:
            continue
        base = by_label[base_label]
        ratios[label] = {"baseline": base_label, **{c: r[f"{c}_us_per_warp_instruction"] /
                                                    base[f"{c}_us_per_warp_instruction"]
                                                    for c in ("synccheck", "racecheck")}}
        if "synccheck_us_per_simulated_warp_instruction" in r:
            ratios[label]["synccheck_per_simulated"] = (r["synccheck_us_per_simulated_warp_instruction"] /
                                                        base["synccheck_us_per_warp_instruction"])
    for label, q in ratios.items():
        extra = (f" ({q['synccheck_per_simulated']:.2f}x per simulated warp-instruction over its CLC paths)"
                 if "synccheck_per_simulated" in q else "")
        print(f"{label}: {q['synccheck']:.2f}x synccheck{extra}, {q['racecheck']:.2f}x racecheck of "
              f"{q['baseline']} per warp-instruction (budget 2x)")
    print("wrote", record("hw_kernels_throughput", {"rounds": args.rounds, "repeat": args.repeat, "rows": rows,
                                                   "ratio_to_baseline": ratios, "budget_ratio": 2.0,
                                                   "note": "CPU time; each checker includes its NumSim run(s)"}))


if __name__ == "__main__":
    main()
