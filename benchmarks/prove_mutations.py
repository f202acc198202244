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
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402
from tests.manifest import KERNELS, load_manifest, manifest_overrides  # noqa: E402

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
SYNC_CALL = re.compile(r"T\.(cuda\.mbarrier_wait|ptx\.mbarrier\.arrive|ptx\.tcgen05\.commit|ptx\.bar\.(sync|arrive)|"
                       r"ptx\.mbarrier\.init|ptx\[\"cp\.async\.bulk\.tensor[^\"]*mbarrier)")
# Synccheck kinds that mean the sync protocol broke (not data findings such as out-of-bounds reads)
SYNC_KINDS = {"deadlock", "mbarrier_arrive_before_consumption", "mbarrier_prior_generation_not_consumed",
              "mbarrier_prior_generation_consumption_not_happens_before", "mbarrier_arrival_overflow",
              "mbarrier_transaction_over_delivery", "mbarrier_invalid_phase", "named_barrier_arrival_overflow",
              "named_barrier_contract_mismatch", "aligned_sync_contract_mismatch", "fixed_sync_protocol_error",
              "fixed_sync_nonconfluent"}


def mutants(text: str):
    """(name, mutated text) for every sync line."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if not SYNC_CALL.search(line) or line.lstrip().startswith("#"):
            continue
        indent = line[:len(line) - len(line.lstrip())]
        body = line.strip()
        where = f"line {i + 1}"
        if "mbarrier.init" not in body:
            yield f"{where} dropped", _replace(lines, i, indent + "T.evaluate(0)\n")
            if "arrive" in body or "commit" in body or "bar." in body:
                yield f"{where} doubled", _replace(lines, i, line + line)
        if "mbarrier_wait" in body:
            call = _split_last_arg(body)
            if call:
                head, arg = call
                yield f"{where} parity flipped", _replace(lines, i, f"{indent}{head}1 - ({arg}))\n")
        m = re.search(r"T\.uint32\((\d+)\)", body)
        if "mbarrier.init" in body and m:
            n = int(m.group(1))
            for new in (n + 1, n - 1):
                if new >= 1:
                    yield f"{where} count {n}->{new}", _replace(lines, i, line.replace(m.group(0), f"T.uint32({new})"))


def _replace(lines, i, new):
    return "".join(lines[:i] + [new] + lines[i + 1:])


def _split_last_arg(body: str):
    """('T.cuda.mbarrier_wait(bar, ', 'parity') for a one-line call, or None."""
    if not body.endswith(")"):
        return None
    depth = 0
    for k in range(len(body) - 2, -1, -1):
        ch = body[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                return None
            depth -= 1
        elif ch == "," and depth == 0:
            return body[:k + 2], body[k + 1:-1].strip()
    return None


def judge(name: str, mutant: str, entry: dict, sym: str, consts: dict, sizes: int, tmp: Path) -> dict:
    import modelcheck
    from modelcheck.prover import prove
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
