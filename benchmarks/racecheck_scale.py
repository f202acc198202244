"""Racecheck at production scale: lane accesses checked per CPU second and peak memory (issue 19).

Usage: python benchmarks/racecheck_scale.py [--kda 320 640 1280 2560 5120 10240] [--gemm 1024 4096]
                                            [--grid 1024] [--repeat 3] [--out NAME]

Configurations: the KDA kernel (kernels/kda_fwd.py, H=1, inputs as benchmarks/check_kda.py builds
them) at each sequence length T, the warp-specialized tcgen05 GEMM (kernels/gemm_ws.py, inputs
from kernels/inputs/gemm.py) at M=N=512 and each K, and the large grid: the gated activation
(kernels/real/gated_act_grid_pre.py, inputs from kernels/inputs/gated.py) at --grid CTAs of 16 warps
(1024: 16,384 warps, Racecheck's clocks per cluster, `clock_domain`).  Every configuration runs in a fresh process
(`--one`), so its peak resident size (`getrusage` ru_maxrss, interpreter, imports and inputs
included) is its own: the first Racecheck of the process is the peak's run.  In that process, with
the budgets raised out of the way:

- `racecheck_cpu_s`: `modelcheck.racecheck(...)` end to end (simulation, phase A, analysis), median
  of --repeat;
- `simulation_cpu_s`: NumSim with the same phase-A observers Racecheck attaches but no access
  recording or analysis, median of --repeat;
- `analysis_cpu_s` = racecheck - simulation: what recording the accesses and judging them costs;
- `lane_accesses_per_s` = the lane accesses Racecheck checked / analysis_cpu_s (the figure of issue
  19: simulation excluded), and `end_to_end_lane_accesses_per_s` = lane accesses / racecheck_cpu_s.

CPU time is process time (this process only), the machine's load average is recorded next to it
(other workers share the 2 cores).  The growth exponent is the log-log slope of analysis CPU time
against lane accesses over the KDA sizes (1.0 = linear).  Writes benchmarks/results/NAME.json
(default racecheck_scale).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402

BIG = {"max_steps": 10 ** 10, "max_seconds": 1e6, "max_memory_mb": 1 << 20}
TARGET_RATE = 3_000_000
TARGET_EXPONENT = 1.05
TARGET_PEAK_MB = 1024
TARGET_GEMM_CPU_S = 8.0


def _inputs(kind: str, size: int):
    """(kernel function, inputs, label) of one configuration."""
    import modelcheck
    if kind == "kda":
        from benchmarks.check_kda import load
        kernel, inputs, _ = load(size, 1, ROOT / "kernels" / "kda_fwd.py")
        return kernel.func, inputs, f"kda T={size} H=1"
    if kind == "grid":
        spec = importlib.util.spec_from_file_location("_gated_inputs", ROOT / "kernels" / "inputs" / "gated.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        kernel = modelcheck.load(ROOT / "kernels" / "real" / "gated_act_grid_pre.py", TOKENS=size)
        return kernel.func, mod.rows(kernel.constants), f"gated grid {size}x16 warps"
    spec = importlib.util.spec_from_file_location("_gemm_inputs", ROOT / "kernels" / "inputs" / "gemm.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    kernel = modelcheck.load(ROOT / "kernels" / "gemm_ws.py", M=512, N=512, K=size)
    return kernel.func, mod.gemm_ws(kernel.constants), f"gemm 512x512x{size}"


def _simulate(func, inputs) -> None:
    """NumSim with Racecheck's phase-A observers, nothing recorded: the simulation part of a Racecheck."""
    from modelcheck import numsim
    from modelcheck.common.async_effects import UnobservedEffects
    from modelcheck.common.phase_a import Causality, StrictProtocol
    causality = Causality("racecheck")
    causality.record_clocks = False
    engine = numsim.Engine(func, unsupported="incomplete", **BIG)
    engine.run(inputs, observers=(StrictProtocol("racecheck"), causality, UnobservedEffects("racecheck")))


def one(kind: str, size: int, repeat: int) -> dict:
    import modelcheck
    func, inputs, label = _inputs(kind, size)
    race, sim, report, peak = [], [], None, None
    for i in range(repeat):
        c0 = time.process_time()
        report = modelcheck.racecheck(func, inputs=inputs, **BIG)
        race.append(time.process_time() - c0)
        if i == 0:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for _ in range(repeat):
        c0 = time.process_time()
        _simulate(func, inputs)
        sim.append(time.process_time() - c0)
    s = report.stats
    lane = int(s.get("lane_accesses", 0))
    r, m = statistics.median(race), statistics.median(sim)
    return {"config": label, "kind": kind, "size": size, "verdict": report.verdict,
            "findings": [f.id for f in report.findings], "lane_accesses": lane,
            "access_records": s.get("accesses"), "sync_events": s["numsim"]["sync_events"],
            "async_ops": s["numsim"]["async_ops"], "warp_instructions": s["numsim"]["warp_instructions"],
            "racecheck_cpu_s": r, "racecheck_cpu_s_runs": race, "simulation_cpu_s": m, "simulation_cpu_s_runs": sim,
            "analysis_cpu_s": r - m, "lane_accesses_per_s": lane / max(r - m, 1e-9),
            "end_to_end_lane_accesses_per_s": lane / r, "peak_rss_mb": peak,
            "clock_domain": s.get("clock_domain"), "warps": s["numsim"]["warps"],
            "loadavg_after": os.getloadavg()[0]}


def _child(kind: str, size: int, repeat: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", kind, str(size), "--repeat", str(repeat)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"{kind} {size} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kda", type=int, nargs="*", default=[320, 640, 1280, 2560, 5120, 10240])
    ap.add_argument("--gemm", type=int, nargs="*", default=[1024, 4096])
    ap.add_argument("--grid", type=int, nargs="*", default=[1024],
                    help="CTAs (of 16 warps) of kernels/real/gated_act_grid_pre.py: the large-grid case")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="racecheck_scale")
    ap.add_argument("--one", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.repeat)))
        return
    load_before = os.getloadavg()
    rows = []
    print(f"{'config':<22} {'verdict':>7} {'lane acc':>10} {'race cpu':>9} {'sim cpu':>8} {'anal cpu':>9} "
          f"{'M lane/s':>9} {'e2e M/s':>8} {'peak MB':>8} {'load':>5}")
    for kind, sizes in (("kda", args.kda), ("gemm", args.gemm), ("grid", args.grid)):
        for size in sizes:
            row = _child(kind, size, args.repeat)
            rows.append(row)
            print(f"{row['config']:<22} {row['verdict']:>7} {row['lane_accesses']:>10} {row['racecheck_cpu_s']:>9.3f} "
                  f"{row['simulation_cpu_s']:>8.3f} {row['analysis_cpu_s']:>9.3f} "
                  f"{row['lane_accesses_per_s'] / 1e6:>9.2f} {row['end_to_end_lane_accesses_per_s'] / 1e6:>8.2f} "
                  f"{row['peak_rss_mb']:>8.0f} {row['loadavg_after']:>5.1f}", flush=True)
    kda = [r for r in rows if r["kind"] == "kda"]
    exponent = None
    if len(kda) >= 2:
        x = np.log([r["lane_accesses"] for r in kda])
        y = np.log([max(r["analysis_cpu_s"], 1e-9) for r in kda])
        exponent = float(np.polyfit(x, y, 1)[0])
    checks = {
        "kda_rate_min_lane_accesses_per_s": min((r["lane_accesses_per_s"] for r in kda), default=None),
        "kda_growth_exponent": exponent,
        "kda_10240_peak_rss_mb": next((r["peak_rss_mb"] for r in kda if r["size"] == 10240), None),
        "gemm_4096_peak_rss_mb": next((r["peak_rss_mb"] for r in rows if r["kind"] == "gemm" and r["size"] == 4096),
                                      None),
        "gemm_4096_racecheck_cpu_s": next((r["racecheck_cpu_s"] for r in rows
                                           if r["kind"] == "gemm" and r["size"] == 4096), None),
        "grid_1024_peak_rss_mb": next((r["peak_rss_mb"] for r in rows if r["kind"] == "grid" and r["size"] == 1024),
                                      None),
    }
    def within(value, target):
        return None if value is None else value <= target       # None: that configuration was not run

    rate = checks["kda_rate_min_lane_accesses_per_s"]
    met = {
        "rate": None if rate is None else rate >= TARGET_RATE,
        "growth": within(exponent, TARGET_EXPONENT),
        "kda_peak": within(checks["kda_10240_peak_rss_mb"], TARGET_PEAK_MB),
        "gemm_peak": within(checks["gemm_4096_peak_rss_mb"], TARGET_PEAK_MB),
        "gemm_cpu": within(checks["gemm_4096_racecheck_cpu_s"], TARGET_GEMM_CPU_S),
        "grid_peak": within(checks["grid_1024_peak_rss_mb"], TARGET_PEAK_MB),
    }
    print(f"KDA: min {checks['kda_rate_min_lane_accesses_per_s'] / 1e6 if kda else float('nan'):.2f} M lane "
          f"accesses/s (target >= 3), growth exponent {exponent if exponent is not None else float('nan'):.3f} "
          f"(target <= {TARGET_EXPONENT}); met: {met}")
    result = {"rows": rows, "checks": checks, "met": met, "repeat": args.repeat, "budgets": BIG,
              "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
              "targets": {"lane_accesses_per_s": TARGET_RATE, "growth_exponent": TARGET_EXPONENT,
                          "peak_rss_mb": TARGET_PEAK_MB, "gemm_4096_cpu_s": TARGET_GEMM_CPU_S,
                          "grid_1024_peak_rss_mb": TARGET_PEAK_MB},
              "note": ("analysis = Racecheck CPU minus a NumSim run with the same phase-A observers (no recording); "
                       "each configuration in its own process; peak RSS includes the interpreter, imports and "
                       "inputs; CPU time is process time on a 2-core machine shared with other workers (load "
                       "averages recorded)")}
    print("wrote", record(args.out, result))


if __name__ == "__main__":
    main()
