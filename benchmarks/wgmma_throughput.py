"""Checker time per warp-instruction of the Hopper wgmma GEMM next to the tcgen05 GEMM of the same shape
(issue 17's budget for new kernels: within 2x of today's time per warp-instruction).

Usage: python benchmarks/wgmma_throughput.py [--repeat N] [--k K]
Both kernels are a 2-stage TMA ring over K / 64 tiles of bf16 A and B, 128B swizzle: kernels/wgmma_gemm.py
(a consumer warpgroup issuing 4 wgmma.mma_async per tile, one group in flight) and kernels/gemm_ws.py (one
MMA warp issuing tcgen05.mma into TMEM, a TMEM epilogue).  For each: NumSim's warp-instruction count, then
the median CPU time of NumSim, Synccheck and Racecheck (each checker including its own NumSim run) divided
by that count.  Writes benchmarks/results/wgmma_throughput.json.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402

# (label, kernel file, inputs builder in kernels/inputs/, constants of a K)
CASES = [
    ("baseline gemm_ws (tcgen05)", "kernels/gemm_ws.py", "gemm:gemm_ws", lambda k: {"K": k, "K_TILES": k // 64}),
    ("wgmma_gemm (issue 17 item 4)", "kernels/wgmma_gemm.py", "wgmma:gemm", lambda k: {"K": k, "K_TILES": k // 64}),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--k", type=int, default=512)
    args = ap.parse_args()
    import modelcheck
    from modelcheck import numsim
    from tests.manifest import inputs_builder
    rows = []
    for label, path, builder, consts_of in CASES:
        consts = consts_of(args.k)
        kernel = modelcheck.load(ROOT / path, **consts)
        inputs = inputs_builder({"inputs_builder": builder})(kernel.constants)
        res = numsim.run(kernel.func, inputs)
        assert res.verdict == "clean", (path, res.diagnostics)
        instr = res.stats["warp_instructions"]
        row = {"kernel": path, "label": label, "constants": consts, "warp_instructions": instr,
               "async_ops": res.stats["async_ops"]}

        def run_numsim(kernel, inputs):
            return numsim.run(kernel.func, inputs)
        for name, check in (("numsim", run_numsim), ("synccheck", modelcheck.synccheck),
                            ("racecheck", modelcheck.racecheck)):
            cpu = []
            for _ in range(args.repeat):
                c0 = time.process_time()
                out = check(kernel, inputs)
                cpu.append(time.process_time() - c0)
                assert out.verdict == "clean", (path, name, out.verdict)
            row[f"{name}_cpu_s_median"] = statistics.median(cpu)
            row[f"{name}_us_per_warp_instruction"] = 1e6 * statistics.median(cpu) / instr
        rows.append(row)
        print(f"{label:<30} {instr:>7} warp-instr  numsim {row['numsim_us_per_warp_instruction']:7.2f}"
              f"  synccheck {row['synccheck_us_per_warp_instruction']:7.2f}"
              f"  racecheck {row['racecheck_us_per_warp_instruction']:7.2f} us/instr")
    base, new = rows
    ratios = {c: new[f"{c}_us_per_warp_instruction"] / base[f"{c}_us_per_warp_instruction"]
              for c in ("numsim", "synccheck", "racecheck")}
    print(", ".join(f"{c} {r:.2f}x" for c, r in ratios.items()) + " of the tcgen05 GEMM per warp-instruction "
          "(budget 2x)")
    print("wrote", record("wgmma_throughput", {"k": args.k, "repeat": args.repeat, "rows": rows,
                                              "ratio_to_baseline": ratios, "budget_ratio": 2.0,
                                              "note": "CPU time; each checker includes its NumSim run"}))


if __name__ == "__main__":
    main()
