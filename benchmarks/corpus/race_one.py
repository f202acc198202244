"""Racecheck alone on one captured corpus function, its full report as JSON (to time it, profile it, and compare
the findings of two trees).

Usage: python -m benchmarks.corpus.race_one CACHE MODULE FUNCTION OUT.json [--gen pre] [--max-seconds 60]
       [--max-memory-mb 2048] [--profile OUT.prof]

Inputs as `benchmarks.corpus.check` binds them for a captured function (the library's data); a function that
needs inputs from another launch (chained) or was not captured is refused, not guessed.  The budget clock is CPU
seconds, as in the corpus run.  OUT.json holds `cpu_s` (process time of the check), verdict, counts, every
finding (kind, message, details) and the checker's stats; two trees' findings are the same iff their `verdict`,
`counts` and `findings` are equal.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache", type=Path)
    ap.add_argument("module")
    ap.add_argument("function")
    ap.add_argument("out", type=Path)
    ap.add_argument("--gen", default="pre", choices=("pre", "lowered"))
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--max-memory-mb", type=float, default=2048.0)
    ap.add_argument("--profile", type=Path, help="write a cProfile of the check (CPU-time timer)")
    args = ap.parse_args(argv)
    import ir
    import modelcheck
    from benchmarks.corpus.check import BUDGET_CLOCK, captured_inputs
    modelcheck.set_budget_clock(BUDGET_CLOCK)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    index = json.loads((args.cache / "index.json").read_text())
    mod = next(m for m in index["modules"] if m["module"] == args.module)
    frec = next(f for f in mod["functions"] if f["function"] == args.function)
    captured = frec.get("captured") or {}
    if "npz" not in captured:
        sys.exit(f"{args.module}/{args.function}: not captured ({captured.get('why', 'no capture')})")
    if any(src.partition(".")[0] != args.function for src in (captured.get("shared_with_unlaunched") or {}).values()):
        sys.exit(f"{args.module}/{args.function}: takes buffers another launch writes (run benchmarks.corpus.check)")
    path = args.cache / frec[args.gen]
    func = ir.parse(path.read_text(), path=str(path))
    pre = args.cache / frec["pre"] if args.gen == "lowered" and frec.get("pre") else None
    inputs, problems = captured_inputs(args.cache, captured, func, pre)
    if problems:
        sys.exit("; ".join(problems))
    prof = None
    if args.profile:
        import cProfile
        prof = cProfile.Profile(time.process_time)
    c0 = time.process_time()
    if prof:
        prof.enable()
    report = modelcheck.racecheck(func, inputs, max_seconds=args.max_seconds, max_memory_mb=args.max_memory_mb,
                                  target=mod.get("arch"))
    if prof:
        prof.disable()
        prof.dump_stats(args.profile)
    out = {"cpu_s": time.process_time() - c0, "verdict": str(report.verdict), "counts": report.counts(),
           "findings": [{"kind": f.kind, "message": f.message, "details": f.details} for f in report.findings],
           "stats": report.stats}
    args.out.write_text(json.dumps(out, default=str, indent=1, sort_keys=True))
    st = report.stats
    print(f"{args.module}/{args.function} {args.gen}: {out['cpu_s']:.1f} s CPU, {report.verdict} {report.counts()}, "
          f"{st.get('accesses')} records, {st.get('peak_live_entries')} peak carried entries, "
          f"{st.get('termination')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
