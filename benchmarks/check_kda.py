"""Check the KDA-style fused kernel at a given sequence length and head count.

Usage: python benchmarks/check_kda.py sync|race|run|prove T H [--kernel kernels/kda_fwd.py] [--seed S]

Builds the inputs (random bf16 q/k/v and fp32 gates; kernels/inputs/kda.py; the kernel encodes its
128B-swizzled tensor maps over them in its host prelude) for SEQ_LEN=T (T a multiple of the 64-token
chunk) and H heads, then runs Synccheck (`sync`), Racecheck (`race`), a plain NumSim run compared
against the numpy recurrence (`run`), or `modelcheck.prove` with the chunk count NC symbolic
(`prove`: every NC >= 1), and prints the verdict, the findings and the wall time.  Exit status: 0
clean (or proved), 1 anything else.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def kda_inputs_module():
    spec = importlib.util.spec_from_file_location("_inputs_kda", ROOT / "kernels" / "inputs" / "kda.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load(seq_len: int, heads: int, kernel: Path, seed: int = 0):
    """(kernel, inputs, inputs module) for one launch; a T that is not a positive multiple of the chunk is refused."""
    import modelcheck
    from modelcheck import numsim
    kernel = modelcheck.load(kernel, SEQ_LEN=seq_len, H=heads)
    chunk = kernel.constants["CHUNK"]
    if seq_len <= 0 or seq_len % chunk or heads <= 0:
        raise SystemExit(f"check_kda: T must be a positive multiple of CHUNK={chunk} and H positive; "
                         f"got T={seq_len}, H={heads}")
    mod = kda_inputs_module()
    return kernel, numsim.default_inputs(kernel.func, mod.kda_fwd(dict(kernel.constants), seed)), mod


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("sync", "race", "run", "prove"))
    ap.add_argument("T", type=int, help="sequence length (multiple of 64)")
    ap.add_argument("H", type=int, help="heads (one CTA each)")
    ap.add_argument("--kernel", type=Path, default=ROOT / "kernels" / "kda_fwd.py")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import numpy as np
    import modelcheck
    from modelcheck import numsim
    kernel, inputs, mod = load(args.T, args.H, args.kernel, args.seed)
    nc = kernel.constants["NC"]
    t0 = time.perf_counter()
    if args.mode == "run":
        result = numsim.run(kernel.func, inputs)
        wall = time.perf_counter() - t0
        x = mod.operands(dict(kernel.constants), args.seed)
        ref = mod.reference(x["q"], x["k"], x["v"], x["g"]).reshape(-1, mod.HEAD_DIM)
        err = float(np.abs(np.asarray(result.outputs["o"], dtype=np.float64) - ref).max() / np.abs(ref).max())
        print(f"numsim {result.verdict} ({result.termination}); T={args.T} H={args.H} chunks={nc}; "
              f"max |o - ref| / max |ref| = {err:.2e}; {result.stats['warp_instructions']} warp instructions")
        for d in result.diagnostics:
            print(" ", d)
        print(f"wall time {wall:.3f} s")
        return 0 if result.verdict == "clean" else 1
    if args.mode == "prove":
        from modelcheck import prove   # the ProofReport: result and its renderings
        report = prove(kernel.func, symbolic=["NC"], inputs=inputs)
        wall = time.perf_counter() - t0
        report.print()
        print(f"prove: {report.verdict}; every NC >= 1, H={args.H}; wall time {wall:.3f} s")
        return 0 if report.verdict == "proved" else 1
    checker = modelcheck.synccheck if args.mode == "sync" else modelcheck.racecheck
    report = checker(kernel.func, inputs=inputs)
    wall = time.perf_counter() - t0
    report.print()
    print(f"{report.checker}: {report.verdict}; T={args.T} H={args.H} chunks={nc}; wall time {wall:.3f} s")
    return 0 if report.verdict == "clean" else 1


if __name__ == "__main__":
    sys.exit(main())
