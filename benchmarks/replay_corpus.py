"""Replay every error finding of the corpus's buggy kernels (kernels/manifest.json), big launches included.

Usage: python benchmarks/replay_corpus.py [KERNEL ...]
Prints one row per finding -- method, outcome, what the forced schedule showed, replay wall time
(two NumSim runs plus the comparison; the checkers' own time is not counted) -- and writes
benchmarks/results/replay_corpus.json.
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402


def main() -> None:
    import modelcheck
    from modelcheck.replay import PlanError, replay
    from tests.manifest import KERNELS, entries
    from tests.test_manifest import manifest_inputs
    only = set(sys.argv[1:])
    rows = []
    for name, entry in entries():
        if not entry.get("bug") or (only and name not in only):
            continue
        kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
        inputs = manifest_inputs(kernel.func, entry, {c.name: c.value for c in kernel.func.constants})
        for stage in ("synccheck", "racecheck"):
            if not entry["expect"].get(stage):
                continue
            for f in getattr(modelcheck, stage)(kernel.func, inputs).findings:
                if f.status != "error":
                    continue
                t0 = time.perf_counter()
                try:
                    r = replay(kernel.func, inputs, f)
                    row = {"kernel": name, "checker": stage, "kind": f.kind, "method": r.method,
                           "outcome": r.outcome, "effects": r.effects, "steps": len(r.steps),
                           "warp_instructions": r.stats.get("forced_warp_instructions")}
                except PlanError as err:
                    row = {"kernel": name, "checker": stage, "kind": f.kind, "method": "-", "outcome": "plan_error",
                           "effects": [str(err)], "steps": 0, "warp_instructions": None}
                row["wall_s"] = time.perf_counter() - t0
                rows.append(row)
                print(f"{name:36} {stage[:4]} {f.kind[:42]:42} {row['method']:16} {row['outcome']:22} "
                      f"{row['wall_s']:7.3f} s  {','.join(row['effects'])[:60]}")
    outcomes = Counter(r["outcome"] for r in rows)
    print(f"\n{len(rows)} findings replayed: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items())))
    print(f"slowest replay {max(r['wall_s'] for r in rows):.3f} s, total {sum(r['wall_s'] for r in rows):.1f} s")
    path = record("replay_corpus", {"findings": rows, "outcomes": dict(outcomes),
                                    "total_wall_s": sum(r["wall_s"] for r in rows),
                                    "note": "one replay per error finding of each buggy kernel's synccheck and "
                                            "racecheck reports; wall time of replay() alone (default run, forced "
                                            "run, comparison)"})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
