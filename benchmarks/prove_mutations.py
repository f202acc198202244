"""Soundness and completeness of `prove` on mutated kernels, against Synccheck at concrete sizes.

Every sync line of a clean kernel is mutated in turn: dropped, duplicated, its wait parity
flipped, its barrier's arrival count raised or lowered.  Each mutant is proved for every size
and also checked by Synccheck (every schedule of the fixed program) at the first SIZES sizes.
A mutant proved while Synccheck finds a sync error at one of those sizes is unsound; one
refuted at a size where Synccheck finds nothing is a false refutation; one Synccheck finds
clean everywhere but the prover leaves incomplete is a miss (tolerated, counted).

Usage: python benchmarks/prove_mutations.py [--kernel NAME ...] [--sizes N]
Writes benchmarks/results/prove_mutations.json; exit status 1 on any unsound or false result.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402
from tests.manifest import KERNELS, load_manifest, manifest_overrides  # noqa: E402
from tests.mutation import SYNC_KINDS, mutants  # noqa: E402

# kernel -> (symbolic size, constants the mutants are loaded with: big enough for SIZES chunks of data)
KERNELS_UNDER_TEST = {
    "ring_pipeline": ("ROUNDS", {}),
    "gemm_ws": ("K_TILES", {}),
    "gdn_prefill": ("NUM_CHUNKS", {}),
    "kda_ring_m_o": ("NC", {}),
    "kda_ring_dvec": ("NC", {}),
    "fa4_fwd": ("NKV", {}),
    "gemm_persistent": ("K_TILES", {}),
    "kda_fwd": ("NC", {"SEQ_LEN": 384}),
}
def judge(name: str, mutant: str, entry: dict, sym: str, consts: dict, sizes: int, tmp: Path) -> dict:
    import modelcheck
    from modelcheck import prove   # the ProofReport: result and its renderings
    path = tmp / f"{entry['file']}"
    path.write_text(mutant)
    try:
        kernel = modelcheck.load(path, **consts)
    except Exception as err:              # noqa: BLE001 - a mutant the front end refuses is skipped
        return {"mutant": name, "skipped": f"{type(err).__name__}: {str(err)[:80]}"}
    inputs = (lambda c: manifest_overrides(entry, c)) if entry.get("inputs_builder") else None
    t0 = time.process_time()
    report = prove(kernel.func, symbolic=[sym], inputs=inputs, max_seconds=60)
    cpu = time.process_time() - t0
    broken = {}
    for n in range(1, sizes + 1):
        small = modelcheck.load(path, **{**consts, sym: n})
        ins = inputs({c.name: c.value for c in small.func.constants}) if inputs else None
        from modelcheck import numsim
        rep = modelcheck.synccheck(small.func, numsim.default_inputs(small.func, dict(ins or {})))
        kinds = sorted({f.kind for f in rep.findings if f.status == "error"} & SYNC_KINDS)
        if kinds:
            broken[n] = kinds
    verdict = report.verdict
    smallest = (report.counterexample or {}).get("sizes", {}).get(sym)
    if verdict == "proved":
        outcome = "unsound" if broken else "proved"
    elif verdict == "refuted":
        outcome = "refuted" if smallest in broken or (smallest and smallest > sizes) else "false_refutation"
        if broken and smallest and min(broken) < smallest:
            outcome = "not_smallest"
    else:
        outcome = "miss" if not broken else "incomplete_on_bug"
    return {"mutant": name, "verdict": verdict, "method": report.stats.get("method"), "outcome": outcome,
            "smallest": smallest, "synccheck_errors": {str(k): v for k, v in broken.items()},
            "prove_cpu_s": round(cpu, 3),
            "reason": "; ".join(report.reasons)[:160] or report.stats.get("certificate", "")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", action="append", help="kernel names (default: all under test)")
    ap.add_argument("--sizes", type=int, default=6)
    args = ap.parse_args()
    entries = load_manifest()["kernels"]
    names = args.kernel or list(KERNELS_UNDER_TEST)
    rows, bad = [], 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in names:
            sym, consts = KERNELS_UNDER_TEST[name]
            entry = entries[name]
            consts = {**entry["constants"], **consts}
            text = (KERNELS / entry["file"]).read_text()
            tally: dict = {}
            for mname, mutant in mutants(text):
                row = judge(mname, mutant, entry, sym, consts, args.sizes, tmp)
                row["kernel"] = name
                rows.append(row)
                out = row.get("outcome", "skipped")
                tally[out] = tally.get(out, 0) + 1
                if out in ("unsound", "false_refutation", "not_smallest"):
                    bad += 1
                    print(f"  {out.upper()}: {name} {mname}: {row}")
            print(f"{name:<18} {tally}")
    print("wrote", record("prove_mutations", {"rows": rows, "sizes_checked": args.sizes, "bad": bad}))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
