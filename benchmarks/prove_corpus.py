"""Prover CPU time per barrier family over the kernel corpus (target: <= 1 s each, issue 19).

Runs `prove` on every kernels/manifest.json entry that states a "prove" expectation, with the
symbolic ranges the manifest lists, and records per kernel: the verdict, whether it matches the
manifest, wall and CPU time of the whole call (parse and input building excluded), z3's rlimit
count and checks, and the CPU seconds per barrier family: what the certificate spent on the
family's own queries, plus an equal share of everything else the call did (skeleton, layout,
concrete executions, the confirmation by Synccheck and replay), so the families' seconds add up
to the call's CPU time.  Named-barrier families are listed too.  Medians of --repeat runs; the
machine's load average is recorded (2 shared cores: timings are noisy, CPU time less so).

Usage: python benchmarks/prove_corpus.py [--repeat N] [--only SUBSTRING]
Writes benchmarks/results/prove_corpus.json.
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
from tests.manifest import KERNELS, manifest_overrides, stage_cases  # noqa: E402

TARGET_S = 1.0
# configurations the manifest does not state (it has one prove entry per kernel): the persistent GEMM over its
# tile count, and over K_TILES with one tile per CTA (one run each)
EXTRA = [("gemm_persistent", {"TILES_PER_CTA": [1, None]}, {}),
         ("gemm_persistent", {"K_TILES": [1, None]}, {"TILES_PER_CTA": 1})]
EXTRA_BUDGET_S = 300.0


def run(name: str, entry: dict, expect: dict, repeat: int, budget: float = 60.0) -> dict:
    import modelcheck
    from modelcheck import prove   # the ProofReport: result and its renderings
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    func = kernel.func
    inputs = (lambda consts: manifest_overrides(entry, consts)) if entry.get("inputs_builder") else None
    ranges = {n: (lo, hi) for n, (lo, hi) in expect["symbolic"].items()}
    walls, cpus, per_family, report = [], [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        report = prove(func, symbolic=list(ranges), ranges=ranges, inputs=inputs, max_seconds=budget)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        per_family.append(family_cpu(report, cpus[-1]))
    families = {fam: statistics.median(run[fam] for run in per_family) for fam in per_family[-1]}
    as_expected = expect["verdict"] is None or report.verdict == expect["verdict"] and (
        "sizes" not in expect or (report.counterexample or {}).get("sizes") == expect["sizes"])
    row = {"kernel": name, "verdict": report.verdict, "expected": expect["verdict"], "as_expected": as_expected,
           "symbolic": expect["symbolic"], "wall_s": round(statistics.median(walls), 4),
           "cpu_s": round(statistics.median(cpus), 4), "families": len(families),
           "cpu_s_per_family": {k: round(v, 4) for k, v in sorted(families.items())},
           "max_family_cpu_s": round(max(families.values(), default=0.0), 4),
           "z3_rlimit": report.stats.get("z3_rlimit"), "z3_checks": report.stats.get("z3_checks"),
           "incomplete": list(report.reasons)}
    if report.verdict == "refuted":
        row["smallest_failing"] = report.counterexample["sizes"]
    return row


def family_cpu(report, cpu: float) -> dict:
    """family -> CPU seconds: its properties' seconds (its own queries, and the certificate's shared work split
    evenly) plus an equal share of the rest of the call."""
    own: dict = {}
    for p in report.properties:
        own[p.family] = own.get(p.family, 0.0) + p.seconds
    rest = max(0.0, cpu - sum(own.values())) / max(1, len(own))
    return {fam: sec + rest for fam, sec in own.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="run only kernels whose name contains this")
    args = ap.parse_args()
    rows = []
    load0 = os.getloadavg()
    print(f"{'kernel':<36} {'verdict':<10} {'expected':<10} {'families':>8} {'wall (s)':>8} {'cpu (s)':>8} "
          f"{'max family (s)':>14}")
    for name, entry, expect in stage_cases("prove"):
        if args.only not in name:
            continue
        row = run(name, entry, expect, args.repeat)
        rows.append(row)
        print(f"{name:<36} {row['verdict']:<10} {row['expected']:<10} {row['families']:>8} {row['wall_s']:>8.3f} "
              f"{row['cpu_s']:>8.3f} {row['max_family_cpu_s']:>14.3f}")
    if not args.only:
        from tests.manifest import load_manifest
        kernels = load_manifest()["kernels"]
        for name, symbolic, consts in EXTRA:
            entry = dict(kernels[name])
            entry["constants"] = {**entry["constants"], **consts}
            row = run(name, entry, {"verdict": None, "symbolic": symbolic}, args.repeat, EXTRA_BUDGET_S)
            row["extra"] = True
            row["constants"] = entry["constants"]
            rows.append(row)
            label = f"{name} ({', '.join(symbolic)})"
            print(f"{label:<36} {row['verdict']:<10} {'-':<10} {row['families']:>8} "
                  f"{row['wall_s']:>8.3f} {row['cpu_s']:>8.3f} {row['max_family_cpu_s']:>14.3f}  "
                  f"{'; '.join(row['incomplete'])[:60]}")
    met = all(r["max_family_cpu_s"] <= TARGET_S for r in rows)
    ok = all(r["as_expected"] for r in rows)
    load = [round(x, 2) for x in (*load0, *os.getloadavg())]
    print(f"{len(rows)} kernel(s); all as the manifest expects: {'yes' if ok else 'NO'}; "
          f"<= {TARGET_S} s CPU for every family of every kernel: {'met' if met else 'MISSED'}; "
          f"load average before/after: {load}")
    print("wrote", record("prove_corpus", {"rows": rows, "target_seconds_per_family": TARGET_S,
                                           "all_as_expected": ok, "per_family_target_met": met,
                                           "load_average_before_after": load,
                                           "note": "cpu_s covers the whole prove call (skeleton, layout, the "
                                                   "happens-before certificate, the confirmation of a refutation by "
                                                   "Synccheck and replay); parse excluded; cpu_s_per_family: the "
                                                   "family's own queries plus an equal share of the rest; medians "
                                                   "of --repeat runs; extra rows: a "
                                                   f"{EXTRA_BUDGET_S:.0f} s budget"}))


if __name__ == "__main__":
    main()
