"""Synccheck and Racecheck on the KDA-style fused kernel as the sequence grows (issue #8).

Usage: python benchmarks/kda_scaling.py [--seq 128 320 640 1280] [--heads 1] [--repeat 3] [--no-prove]

For each T (SEQ_LEN; chunks NC = T / 64) one launch of kernels/kda_fwd.py with H heads is
checked by both checkers; per checker the median wall and CPU (process) time over --repeat
runs, the NumSim access counts, the verifier's states and transitions (Synccheck) and the
simulation/analysis split (Racecheck).  Growth is judged on CPU time, because wall time on a
shared 2-core machine includes other processes: the slope is a least-squares fit of CPU time
against chunks and the exponent a log-log fit over the sizes with at least 5 chunks (1.0 is
linear; `linear` means <= 1.10).  Targets (docs/architecture.md#performance): <= 5 s wall per checker at T=320 on 2
cores, linear growth.  Unless --no-prove, `modelcheck.prove` with NC symbolic (NC >= 1) is run on
kernels/kda_fwd.py (with its tensor-map inputs) and on the `dvec` ring family alone
(kernels/kda_ring_dvec.py), recording verdict, method, reason and time per barrier family (target:
proved, <= 2 s CPU per family).  Writes benchmarks/results/kda_scaling.json.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402
from benchmarks.check_kda import load  # noqa: E402

KERNEL = ROOT / "kernels" / "kda_fwd.py"
TARGET_S_AT_320 = 5.0
PROVE_TARGET_S = 2.0      # CPU seconds per barrier family (docs/architecture.md#performance)


def measure(checker: str, seq_len: int, heads: int, repeat: int) -> dict:
    import modelcheck
    kernel, inputs, _ = load(seq_len, heads, KERNEL)
    fn = getattr(modelcheck, checker)
    walls, cpus, report = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = fn(kernel.func, inputs=inputs)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    s = report.stats
    row = {"T": seq_len, "H": heads, "chunks": kernel.constants["NC"], "verdict": report.verdict,
           "wall_s_median": statistics.median(walls), "wall_s_all": walls,
           "cpu_s_median": statistics.median(cpus),
           "warp_instructions": s["numsim"]["warp_instructions"], "accesses": s["numsim"]["accesses"],
           "lane_accesses": s["numsim"]["lane_accesses"], "sync_events": s["numsim"]["sync_events"]}
    if checker == "synccheck":
        row.update({k: s.get(k) for k in ("verifier_states", "verifier_transitions", "projections",
                                          "certified_projections", "searched_projections",
                                          "phase_a_wall_time_s", "phase_b_wall_time_s")})
    else:
        row.update({"checked_accesses": s.get("accesses"), "checked_lane_accesses": s.get("lane_accesses"),
                    "simulation_wall_s": s.get("simulation_wall_time_s"),
                    "analysis_wall_s": s.get("analysis_wall_time_s")})
    return row


def fit(rows: list[dict]) -> dict:
    """CPU time: least squares cpu = a + slope * chunks, and the log-log growth exponent (sizes >= 5 chunks)."""
    x = np.array([r["chunks"] for r in rows], dtype=float)
    y = np.array([r["cpu_s_median"] for r in rows])
    slope, intercept = np.polyfit(x, y, 1)
    big = x >= 5
    exponent = float(np.polyfit(np.log(x[big]), np.log(y[big]), 1)[0]) if big.sum() >= 2 else None
    return {"slope_cpu_s_per_chunk": float(slope), "intercept_cpu_s": float(intercept),
            "growth_exponent": exponent, "cpu_per_chunk_s": [float(v) for v in y / x],
            "linear": None if exponent is None else exponent <= 1.10}


def prove_row(path: Path, inputs_for_tma: bool, max_seconds: float) -> dict:
    """One `prove --symbolic NC` call: verdict and the reason it gives, or the internal error it raised."""
    import modelcheck
    from modelcheck import prove   # the ProofReport: result and its renderings
    if inputs_for_tma:
        kernel, inputs, _ = load(128, 1, path)
    else:
        kernel, inputs = modelcheck.load(path), None
    row = {"kernel": str(path.relative_to(ROOT)), "symbolic": {"NC": [1, None]}, "max_seconds": max_seconds}
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        report = prove(kernel.func, symbolic=["NC"], ranges={"NC": (1, None)}, inputs=inputs,
                       max_seconds=max_seconds)
        families: dict = {}
        for p in report.properties:
            families[p.family] = families.get(p.family, 0.0) + p.seconds
        row.update({"verdict": report.verdict, "method": report.stats.get("method"), "families": len(families),
                    "solver_s_per_family": {k: round(v, 4) for k, v in sorted(families.items())},
                    "summary": report.format().strip().splitlines()[-1].strip(), "incomplete": report.reasons})
    except Exception as err:    # an internal error of the prover is a result to record, not to hide
        row.update({"verdict": "internal_error", "error": f"{type(err).__name__}: {err}"})
    row.update({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0})
    if row.get("families"):
        row["cpu_s_per_family"] = row["cpu_s"] / row["families"]
        row["target_met"] = row["verdict"] == "proved" and row["cpu_s_per_family"] <= PROVE_TARGET_S
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, nargs="+", default=[128, 320, 640, 1280])
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-prove", action="store_true")
    ap.add_argument("--prove-seconds", type=float, default=60.0)
    args = ap.parse_args()
    result = {"kernel": "kernels/kda_fwd.py", "cpu_count": os.cpu_count(), "heads": args.heads,
              "repeat": args.repeat, "target_wall_s_at_T320": TARGET_S_AT_320, "checkers": {}}
    for checker in ("synccheck", "racecheck"):
        rows = [measure(checker, t, args.heads, args.repeat) for t in args.seq]
        summary = fit(rows)
        at_320 = next((r["wall_s_median"] for r in rows if r["T"] == 320), None)
        summary["target_met_at_T320"] = None if at_320 is None else at_320 <= TARGET_S_AT_320
        result["checkers"][checker] = {"rows": rows, **summary}
        print(f"\n{checker} (H={args.heads}, os.cpu_count()={os.cpu_count()})")
        extra = "states  trans" if checker == "synccheck" else "  sim(s) anal(s)"
        print(f"{'T':>5} {'chunks':>6} {'verdict':>7} {'wall(s)':>8} {'cpu(s)':>7} {'accesses':>9} {'lane acc':>9} {extra}")
        for r in rows:
            tail = (f"{r['verifier_states']:>6} {r['verifier_transitions']:>6}" if checker == "synccheck"
                    else f"{r['simulation_wall_s']:>8.3f} {r['analysis_wall_s']:>7.3f}")
            print(f"{r['T']:>5} {r['chunks']:>6} {r['verdict']:>7} {r['wall_s_median']:>8.3f} {r['cpu_s_median']:>7.3f} {r['accesses']:>9} "
                  f"{r['lane_accesses']:>9} {tail}")
        exponent = summary["growth_exponent"]
        print(f"CPU slope {summary['slope_cpu_s_per_chunk']:.4f} s/chunk, intercept {summary['intercept_cpu_s']:.3f} s, "
              f"growth exponent {'n/a' if exponent is None else f'{exponent:.2f}'} "
              f"({ {True: 'linear', False: 'superlinear', None: 'not judged'}[summary['linear']] }); "
              f"T=320 target <= {TARGET_S_AT_320} s: "
              f"{ {True: 'met', False: 'MISSED', None: 'not measured'}[summary['target_met_at_T320']] }")
    if not args.no_prove:
        result["prove"] = [prove_row(KERNEL, True, args.prove_seconds),
                           prove_row(ROOT / "kernels" / "kda_ring_dvec.py", False, args.prove_seconds)]
        print("\nprove --symbolic NC=1..")
        for row in result["prove"]:
            per = f", {row['cpu_s_per_family']:.2f} s CPU per family over {row['families']}" if row.get("families") \
                else ""
            why = row.get("error") or row.get("summary", "")
            print(f"  {row['kernel']}: {row['verdict']} in {row['wall_s']:.1f} s wall ({row['cpu_s']:.1f} s CPU{per}): "
                  f"{why}")
    print("wrote", record("kda_scaling", result))


if __name__ == "__main__":
    main()
