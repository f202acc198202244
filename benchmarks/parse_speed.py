"""Parse speed on a generated 2,000-line kernel (target: under 1 s, issue #2).

Usage: python benchmarks/parse_speed.py [--lines N] [--repeat R]
Prints a table and writes benchmarks/results/parse_speed.json.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import record  # noqa: E402

ROLE = '''                if warp == {w}:
                    phase_{w} = T.local_scalar(T.uint32)
                    ready_{w} = T.local_scalar(T.uint32)
                    phase_{w} = T.uint32({p})
                    for c_{w} in range(CHUNKS):
                        stage_{w}: T.let[T.int32] = c_{w} % STAGES
                        parity_{w}: T.let[T.uint32] = T.Cast("uint32", c_{w} // STAGES % 2)
                        T.cuda.mbarrier_wait(empty.ptr_to([stage_{w}]), (c_{w} // STAGES + 1) % 2)
                        if lane == 0:
                            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(full.ptr_to([stage_{w}]), T.uint32(512))
                            T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](buf.ptr_to([stage_{w}, 0]), src.ptr_to([c_{w} * 128]), T.uint32(512), full.ptr_to([stage_{w}]))
                        T.ptx.mbarrier.try_wait.parity.shared__cta.b64(ready_{w}, full.ptr_to([stage_{w}]), parity_{w})
                        while ready_{w} == T.uint32(0):
                            T.ptx.mbarrier.try_wait.parity.shared__cta.b64(ready_{w}, full.ptr_to([stage_{w}]), parity_{w})
                        acc_{w}: T.let[T.float32] = buf[stage_{w}, lane * 4] * T.float32(0.5) + buf[stage_{w}, lane * 4 + 1]
                        idx_{w}: T.let[T.int32] = (c_{w} * 128 + lane * 4) % (CHUNKS * 128)
                        if idx_{w} < CHUNKS * 128 and (lane & 1) == 0 or lane > 30:
                            dst[idx_{w}] = acc_{w} - T.float32(1.0) * T.Cast("float32", c_{w} ^ lane)
                        elif lane == 3:
                            dst[idx_{w} + 1] = T.if_then_else(acc_{w} > T.float32(0.0), acc_{w}, T.float32(0.0))
                        else:
                            T.ptx.fence.proxy.async_.shared__cta()
                        T.cuda.warp_sync()
                        if T.cuda.elect_sync():
                            T.ptx.mbarrier.arrive.shared.b64(empty.ptr_to([stage_{w}]))
                        phase_{w} = phase_{w} ^ T.uint32(1)
                    T.ptx.bar.sync(1, 64)
'''

HEADER = '''from tvm_tirx.script import tirx as T

CHUNKS = 16
STAGES = 4
WARPS = {warps}


@T.function
def big(src: T.Tensor((CHUNKS * 128,), T.float32), dst: T.Tensor((CHUNKS * 128,), T.float32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", WARPS * 32) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                empty = T.alloc_tensor(ty_args=[T.Tensor((STAGES,), T.uint64, scope="shared")])
                buf = T.alloc_tensor(ty_args=[T.Tensor((STAGES, 128), T.float32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                if tx == 0:
                    for s in T.unroll(STAGES):
                        T.ptx.mbarrier.init.shared.b64(full.ptr_to([s]), 1)
                        T.ptx.mbarrier.init.shared.b64(empty.ptr_to([s]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
'''


def make_kernel(lines: int) -> str:
    role_lines = ROLE.count("\n")
    roles = max(1, (lines - HEADER.count("\n")) // role_lines)
    return HEADER.format(warps=roles) + "".join(ROLE.format(w=w, p=w % 2) for w in range(roles))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    text = make_kernel(args.lines)
    n_lines = text.count("\n")
    # cold: a fresh interpreter (imports + grammar construction + parse)
    cold_code = ("import sys, time; t = time.perf_counter(); import ir; "
                 "ir.parse(sys.stdin.read(), 'big.py'); print(time.perf_counter() - t)")
    root = Path(__file__).resolve().parent.parent
    colds = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", cold_code], input=text, capture_output=True, text=True,
                             cwd=root, check=True)
        colds.append(float(out.stdout.strip()))
    import ir
    from ir import syntax
    from ir.build import build
    ir.parse(text, "big.py")  # warm the grammar
    totals, syntax_times, build_times = [], [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        module = syntax.parse_syntax(text, "big.py")
        t1 = time.perf_counter()
        func = build(module, "big.py", text)
        t2 = time.perf_counter()
        totals.append(t2 - t0)
        syntax_times.append(t1 - t0)
        build_times.append(t2 - t1)
    nodes = sum(1 for _ in ir.walk(func.body))
    result = {
        "lines": n_lines, "ir_nodes": nodes, "target_s": 1.0,
        "cold_s_median": statistics.median(colds), "warm_s_median": statistics.median(totals),
        "warm_s_min": min(totals), "syntax_s_median": statistics.median(syntax_times),
        "build_s_median": statistics.median(build_times),
        "lines_per_s_warm": n_lines / statistics.median(totals),
    }
    print(f"{'lines':>8} {'IR nodes':>9} {'cold (s)':>9} {'warm (s)':>9} {'lark+AST':>9} {'build IR':>9}")
    print(f"{n_lines:>8} {nodes:>9} {result['cold_s_median']:>9.3f} {result['warm_s_median']:>9.3f} "
          f"{result['syntax_s_median']:>9.3f} {result['build_s_median']:>9.3f}")
    print(f"target < 1 s: {'met' if result['cold_s_median'] < 1.0 else 'MISSED'} (cold, median of 3)")
    print("wrote", record("parse_speed", result))


if __name__ == "__main__":
    main()
