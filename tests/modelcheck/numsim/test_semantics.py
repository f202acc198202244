"""NumSim semantics, one rule per test: arithmetic, control flow under masks, mbarriers, named
barriers, warp collectives, async copies, and how runs end (errors, incomplete, budgets).

Short kernels are written inline into one template (parser-unit-test style); longer ones are
fixture files under tests/fixtures/numsim/.  Expected values come from Python/numpy
references written from the TIR/PTX/CUDA rules, never from the simulator.
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import modelcheck
from modelcheck import numsim

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "numsim"
LANES = np.arange(32)

TEMPLATE = '''from tvm_tirx.script import tirx as T


@T.function
def k({params}):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", {threads}) as tx:
                lane: T.let[T.int32] = tx % 32
                warp: T.let[T.int32] = tx // 32
{body}
'''


def kernel(body: str, params: str = "out: T.Tensor((32,), T.int32)", threads: int = 32):
    """A one-CTA kernel around `body` (statements at the depth of `tx`; `lane`, `warp` bound)."""
    text = TEMPLATE.format(params=params, threads=threads,
                           body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 16))
    return modelcheck.parse(text, "<semantics>")


def body_line(body: str, snippet: str) -> int:
    """The source line `kernel(body)` gives the only body line containing `snippet`."""
    lines = textwrap.dedent(body).strip("\n").splitlines()
    hits = [k for k, text in enumerate(lines) if snippet in text]
    assert len(hits) == 1, (snippet, hits)
    return TEMPLATE.splitlines().index("{body}") + 1 + hits[0]


def run(body: str, inputs: dict | None = None, params: str = "out: T.Tensor((32,), T.int32)", threads: int = 32,
        **limits):
    func = kernel(body, params, threads)
    return numsim.run(func, numsim.default_inputs(func, inputs or {}), **limits)


def fixture(name: str, **consts):
    return modelcheck.load(FIXTURES / f"{name}.py", **consts).func


def only(result, kind: str):
    """The single diagnostic of a run that stopped with `kind`."""
    assert [d.kind for d in result.diagnostics] == [kind], [str(d) for d in result.diagnostics]
    return result.diagnostics[0]


# =========================================================================== arithmetic

INT_TYPES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
             "uint64": 64}


def wrap(value: int, dtype: str) -> int:
    bits = INT_TYPES[dtype]
    value %= 1 << bits
    if not dtype.startswith("u") and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


@pytest.mark.parametrize("dtype", sorted(INT_TYPES))
def test_integer_arithmetic_wraps_per_dtype(dtype):
    bits = INT_TYPES[dtype]
    lo, hi = (0, (1 << bits) - 1) if dtype.startswith("u") else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    a = np.array([hi, 1, lo, 3] * 8, dtype=dtype)
    params = f"a: T.Tensor((32,), T.{dtype}), out: T.Tensor((6,), T.{dtype}), vout: T.Tensor((32,), T.{dtype})"
    res = run("""
        out[0] = a[0] + a[1]
        out[1] = a[2] - a[1]
        out[2] = a[0] * a[0]
        out[3] = a[0] + 1
        out[4] = a[2] - 1
        out[5] = a[0] * 3
        vout[tx] = a[tx] * a[(tx + 1) % 32] + a[tx]
    """, {"a": a}, params)
    assert res.verdict == "clean"
    want = [hi + 1, lo - 1, hi * hi, hi + 1, lo - 1, hi * 3]        # uniform (scalar) path
    assert [int(v) for v in res.outputs["out"]] == [wrap(v, dtype) for v in want]
    ints = [int(v) for v in a]                                        # lane-vector path
    assert [int(v) for v in res.outputs["vout"]] == [wrap(ints[i] * ints[(i + 1) % 32] + ints[i], dtype)
                                                     for i in range(32)]


def floor_div(a: int, b: int) -> int:
    return math.floor(a / b) if abs(a) < 2**52 else a // b


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_floor_division_and_modulo_vs_truncdiv_and_truncmod():
    a = np.array([7, -7, 7, -7, -2**31, -2**31, 2**31 - 1, -1] * 4, np.int32)
    b = np.array([2, 2, -2, -2, -1, 7, -3, 5] * 4, np.int32)
    names = ["fd", "fm", "td", "tm", "fd3", "fm3", "fdm3", "fmm3", "td3", "tm3", "s"]
    params = "a: T.Tensor((32,), T.int32), b: T.Tensor((32,), T.int32), " + ", ".join(
        f"{n}: T.Tensor((32,), T.int32)" for n in names)
    res = run("""
        fd[tx] = a[tx] // b[tx]
        fm[tx] = a[tx] % b[tx]
        td[tx] = T.truncdiv(a[tx], b[tx])
        tm[tx] = T.truncmod(a[tx], b[tx])
        fd3[tx] = a[tx] // 3
        fm3[tx] = a[tx] % 3
        fdm3[tx] = a[tx] // -3
        fmm3[tx] = a[tx] % -3
        td3[tx] = T.truncdiv(a[tx], -3)
        tm3[tx] = T.truncmod(a[tx], 3)
        s[0] = a[1] // b[1]
        s[1] = a[1] % b[1]
        s[2] = T.truncdiv(a[1], b[1])
        s[3] = T.truncmod(a[1], b[1])
        s[4] = a[4] // b[4]
        s[5] = T.truncdiv(a[5], b[5])
        s[6] = T.truncmod(a[5], b[5])
        s[7] = a[5] // b[5]
        s[8] = a[3] % b[1]
    """, {"a": a, "b": b}, params)
    assert res.verdict == "clean"
    o = {k: [int(v) for v in res.outputs[k]] for k in names}
    A, B = [int(v) for v in a], [int(v) for v in b]
    w = lambda v: wrap(v, "int32")  # noqa: E731
    assert o["fd"] == [w(x // y) for x, y in zip(A, B)]
    assert o["fm"] == [w(x - (x // y) * y) for x, y in zip(A, B)]
    assert o["td"] == [w(trunc_div(x, y)) for x, y in zip(A, B)]
    assert o["tm"] == [w(x - trunc_div(x, y) * y) for x, y in zip(A, B)]
    assert o["fd3"] == [x // 3 for x in A] and o["fm3"] == [x % 3 for x in A]
    assert o["fdm3"] == [x // -3 for x in A] and o["fmm3"] == [x % -3 for x in A]
    assert o["td3"] == [trunc_div(x, -3) for x in A] and o["tm3"] == [x - trunc_div(x, 3) * 3 for x in A]
    # -7 // 2 = -4 and -7 % 2 = 1 (floor) against -3 and -1 (trunc); INT_MIN // -1 wraps to INT_MIN
    assert o["s"][:9] == [-4, 1, -3, -1, -2**31, trunc_div(-2**31, 7), -2**31 - trunc_div(-2**31, 7) * 7,
                          -2**31 // 7, 1]
    assert o["s"][5] == -306783378 and o["td"][5] == -306783378


def test_division_by_zero_faults_only_on_active_lanes():
    params = "a: T.Tensor((32,), T.int32), b: T.Tensor((32,), T.int32), out: T.Tensor((32,), T.int32)"
    a = (LANES * 7).astype(np.int32)
    b = (LANES % 4).astype(np.int32)
    guarded = run("""
        if b[tx] != 0:
            out[tx] = a[tx] // b[tx] + T.truncmod(a[tx], b[tx])
    """, {"a": a, "b": b}, params)
    assert guarded.verdict == "clean"
    want = [x // y + x % y if y else 0 for x, y in zip(a.tolist(), b.tolist())]
    assert res_list(guarded, "out") == want
    d = only(run("out[tx] = a[tx] // b[tx]", {"a": a, "b": b}, params), "division_by_zero")
    assert d.status == "error" and d.span.line == body_line("out[tx] = a[tx] // b[tx]", "//")


def res_list(result, name):
    return [int(v) for v in result.outputs[name].reshape(-1)]


def test_if_then_else_evaluates_only_the_taken_side_but_select_evaluates_both():
    params = "a: T.Tensor((20,), T.int32), out: T.Tensor((32,), T.int32), o2: T.Tensor((32,), T.int32)"
    a = (np.arange(20) * 7).astype(np.int32)
    res = run("""
        out[tx] = T.if_then_else(tx < 20, a[tx], -1)
        if tx >= 4:
            o2[tx] = T.if_then_else(tx >= 20, -2, a[tx] * 2)
    """, {"a": a}, params)
    assert res.verdict == "clean"
    assert res_list(res, "out") == [7 * i if i < 20 else -1 for i in range(32)]
    assert res_list(res, "o2") == [0] * 4 + [14 * i for i in range(4, 20)] + [-2] * 12
    d = only(run("out[tx] = T.Select(tx < 20, a[tx], -1)", {"a": a}, params), "oob")
    assert d.details["lane"] == 20 and d.details["index"] == 20


def test_and_or_short_circuit_per_lane():
    params = "a: T.Tensor((20,), T.int32), out: T.Tensor((32,), T.int32), o2: T.Tensor((32,), T.int32)"
    a = (np.arange(20) * 7).astype(np.int32)
    res = run("""
        if tx < 20 and a[tx] > 50:
            out[tx] = 1
        if tx >= 20 or a[tx] > 50:
            o2[tx] = 1
        if bx > 0 and a[40] > 0:
            out[tx] = 2
    """, {"a": a}, params)
    assert res.verdict == "clean"
    assert res_list(res, "out") == [int(i < 20 and 7 * i > 50) for i in range(32)]
    assert res_list(res, "o2") == [int(i >= 20 or 7 * i > 50) for i in range(32)]


@pytest.mark.parametrize("dtype,np_t", [("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16),
                                        ("float32", np.float32)])
def test_float_arithmetic_rounds_to_the_dtype(dtype, np_t):
    a = np.array([2048, 1, 0.1, 0.2, 256, 3, 1 / 3, 1e-3] * 4, dtype=np.float64).astype(np_t)
    params = f"a: T.Tensor((32,), T.{dtype}), out: T.Tensor((6,), T.{dtype}), vout: T.Tensor((32,), T.{dtype})"
    res = run("""
        out[0] = a[0] + a[1]
        out[1] = a[2] + a[3]
        out[2] = a[4] + a[1] - a[4]
        out[3] = a[6] * a[5]
        out[4] = a[7] / a[5]
        out[5] = a[2] * 3.0
        vout[tx] = a[tx] * a[(tx + 1) % 32] + a[tx]
    """, {"a": a}, params)
    assert res.verdict == "clean"
    out, vout = res.outputs["out"], res.outputs["vout"]
    want = np.array([a[0] + a[1], a[2] + a[3], (a[4] + a[1]) - a[4], a[6] * a[5], a[7] / a[5], a[2] * np_t(3.0)],
                    dtype=np_t)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(vout, (a * np.roll(a, -1) + a).astype(np_t))
    # rounding every operation to the dtype: 2048 + 1 is 2048 in float16 (11-bit significand),
    # 256 + 1 - 256 is 0 in bfloat16 (8 bits); float32 keeps both
    assert float(out[0]) == {"float16": 2048.0, "bfloat16": 2048.0, "float32": 2049.0}[dtype]
    assert float(out[2]) == {"float16": 1.0, "bfloat16": 0.0, "float32": 1.0}[dtype]


def test_casts_truncate_wrap_and_test_nonzero():
    params = ("f: T.Tensor((32,), T.float32), i: T.Tensor((32,), T.int32), fi: T.Tensor((32,), T.int32), "
              "ib: T.Tensor((32,), T.bool), i8: T.Tensor((32,), T.int8), u8: T.Tensor((32,), T.uint8), "
              "bi: T.Tensor((32,), T.int32), hf: T.Tensor((32,), T.float16), s: T.Tensor((8,), T.int32)")
    f = np.array([2.7, -2.7, 0.5, -0.5, 1e3, -0.0, 300.0, 3.99] * 4, np.float32)
    i = np.array([0, 1, -1, 300, -129, 256, 70000, 7] * 4, np.int32)
    res = run("""
        fi[tx] = T.Cast("int32", f[tx])
        ib[tx] = T.Cast("bool", i[tx])
        i8[tx] = T.Cast("int8", i[tx])
        u8[tx] = T.Cast("uint8", i[tx])
        bi[tx] = T.Cast("int32", T.Cast("bool", i[tx])) * 5
        hf[tx] = T.Cast("float16", i[tx])
        s[0] = T.Cast("int32", f[0])
        s[1] = T.Cast("int32", f[1])
        s[2] = T.Cast("int32", f[3])
        s[3] = T.Cast("int32", f[7])
        s[4] = T.Cast("int32", T.Cast("bool", i[0]))
        s[5] = T.Cast("int32", T.Cast("bool", i[2]))
        s[6] = T.Cast("int32", T.Cast("int8", i[3]))
        s[7] = T.Cast("int32", T.Cast("uint8", i[2]))
    """, {"f": f, "i": i}, params)
    assert res.verdict == "clean"
    I = [int(v) for v in i]  # noqa: E741
    assert res_list(res, "fi") == [math.trunc(float(v)) for v in f]            # toward zero
    assert res.outputs["ib"].tolist() == [v != 0 for v in I]
    assert res_list(res, "i8") == [wrap(v, "int8") for v in I]
    assert res_list(res, "u8") == [wrap(v, "uint8") for v in I]
    assert res_list(res, "bi") == [5 * (v != 0) for v in I]
    assert res.outputs["hf"].tolist()[:8] == [0.0, 1.0, -1.0, 300.0, -129.0, 256.0, math.inf, 7.0]
    assert res_list(res, "s") == [2, -2, 0, 3, 0, 1, 44, 255]


# =========================================================================== control flow under masks

def test_divergent_control_flow_per_lane():
    func = fixture("control_flow")
    res = numsim.run(func, numsim.default_inputs(func))
    assert res.verdict == "clean"

    def ifs(l):  # noqa: E741
        if l % 3 == 0:
            return l * 10
        if l % 3 == 1:
            return -l if l < 16 else 5
        return 1005

    def brk(l):  # noqa: E741
        return sum(j for j in range(32) if j <= l and j % 2 == 0)

    def wbrk(l):  # noqa: E741
        v = i = 0
        while True:
            i += 1
            if i % 3 == 0:
                continue
            if i > l:
                break
            v += i
        return v

    def unr(l):  # noqa: E741
        v = sum(k * l for k in range(4))
        for k in range(2, 5):
            v = v * 2 + k
        return v + sum(range(10, 0, -3))

    regs = np.tile(np.arange(4), (32, 1))
    for l in range(20):  # noqa: E741
        regs[l, l % 4] = 100 + l
    assert res_list(res, "ifs") == [ifs(l) for l in LANES]
    assert res_list(res, "brk") == [brk(l) for l in LANES]
    assert res_list(res, "wl") == [int(l).bit_length() for l in LANES]
    assert res_list(res, "wbrk") == [wbrk(l) for l in LANES]
    assert res_list(res, "nested") == [100 + 4000 + sum(min(8, a + l % 4) for a in range(4)) for l in LANES]
    assert res_list(res, "unr") == [unr(l) for l in LANES]
    np.testing.assert_array_equal(res.outputs["regs_out"], regs)
    # after the loops every lane is back: the ballot ran with the full warp
    assert res_list(res, "joined") == [0x55555555] * 32


def test_lanes_that_leave_a_while_loop_by_its_condition_never_come_back():
    # lane 1 leaves at once (s[1] = 5); lane 0 then clears s[1] and lane 2 breaks, which must not
    # bring lane 1 back into the loop even though its condition would now hold
    res = run("""
        s = T.alloc_tensor(ty_args=[T.Tensor((32,), T.int32, scope="shared")])
        cnt = T.local_scalar(T.int32)
        s[lane] = T.if_then_else(lane == 0 or lane == 2, 0, 5)
        cnt = 0
        while s[lane] < 3:
            cnt = cnt + 1
            if lane == 0:
                s[1] = 0
                s[0] = s[0] + 1
            if lane == 2:
                break
        out[lane] = cnt
    """, max_loop_iterations=1000)
    assert res.verdict == "clean"
    assert res_list(res, "out") == [3, 0, 1] + [0] * 29


def test_warp_instructions_grow_linearly_with_while_iterations():
    func = kernel("""
        i = T.local_scalar(T.int32)
        i = 0
        while i < n:
            i = i + 1
    """, "out: T.Tensor((32,), T.int32), n: T.int32")
    instr = {n: numsim.run(func, {"out": np.zeros(32, np.int32), "n": n}).stats["warp_instructions"]
             for n in (10, 11, 100, 101)}
    assert instr[11] - instr[10] == instr[101] - instr[100] > 0


def test_divergent_loops_keep_iteration_vectors_and_warp_instructions_bounded():
    func = fixture("control_flow")
    trace = numsim.Trace()
    res = numsim.run(func, numsim.default_inputs(func), observers=[trace])
    writes = [a for a in trace.accesses if a.alloc_name == "brk"]
    assert len(writes) == 1 and writes[0].lanes is None and writes[0].iters == ()
    assert res.stats["warp_instructions"] > 0


# =========================================================================== mbarrier

MBAR = """
bar = T.alloc_tensor(ty_args=[T.Tensor((2,), T.uint64, scope="shared")])
"""


def traced(body: str, threads: int = 32, params: str = "out: T.Tensor((64,), T.int32)", **limits):
    trace = numsim.Trace()
    func = kernel(MBAR + textwrap.dedent(body), params, threads)
    res = numsim.run(func, numsim.default_inputs(func), observers=[trace], **limits)
    return res, [e for e in trace.sync if e.kind.startswith("mbarrier")]


def test_parity_one_wait_after_init_passes_vacuously_and_consumes_nothing():
    res, ev = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 1)
        out[tx] = 1
        if tx == 0:
            T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
        out[tx] = 2
    """)
    assert res.verdict == "clean"
    assert res_list(res, "out")[:32] == [2] * 32
    assert [(e.kind, e.parity, e.generation) for e in ev] == [
        ("mbarrier.init", None, 0), ("mbarrier.wait", 1, None), ("mbarrier.arrive", None, 0),
        ("mbarrier.wait", 0, 0)]
    assert ev[2].completed


def test_parity_zero_wait_before_any_phase_blocks():
    res, _ = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
    """)
    d = only(res, "deadlock")
    assert d.details["blocked"][0]["awaits"] == "await mbarrier.try_wait on bar[0]; phase 0"


def test_complete_tx_may_land_before_expect_tx():
    res, ev = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            T.ptx.mbarrier.complete_tx.shared__cta.b64(bar.ptr_to([0]), T.uint32(64))
            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(bar.ptr_to([0]), T.uint32(64))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
        out[tx] = 2
    """)
    assert res.verdict == "clean" and res_list(res, "out")[:32] == [2] * 32
    assert [(e.kind, e.tx, e.completed) for e in ev[1:]] == [
        ("mbarrier.complete_tx", 64, False), ("mbarrier.arrive", 64, True), ("mbarrier.wait", 0, False)]


def test_phase_waits_for_transactions_after_the_last_arrival():
    res, _ = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(bar.ptr_to([0]), T.uint32(64))
            T.ptx.mbarrier.complete_tx.shared__cta.b64(bar.ptr_to([0]), T.uint32(32))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
    """)
    assert "bar[0]; phase 0" in only(res, "deadlock").message


def test_arrive_with_count_and_with_pred():
    res, ev = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(5))
            T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]), T.uint32(3))
        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]), T.uint32(2), pred=lane == 7)
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
        out[tx] = 3
    """)
    assert res.verdict == "clean" and res_list(res, "out")[:32] == [3] * 32
    arrives = [e for e in ev if e.kind == "mbarrier.arrive"]
    assert [(e.count, e.completed) for e in arrives] == [(3, False), (2, True)]
    assert arrives[1].lane_list() == [7]          # the predicate left one lane


def test_arrive_counts_every_executing_lane():
    res, _ = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(40))
        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
        if lane < 8:
            T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
    """)
    assert res.verdict == "clean"


def test_arrival_overflow():
    body = """
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
    """
    res, _ = traced(body)
    d = only(res, "mbarrier_arrival_overflow")
    assert "received 32 arrivals, expected 1" in d.message
    assert d.details["arrivals"] == 32 and d.details["expected"] == 1
    assert d.span.line == body_line(MBAR + textwrap.dedent(body), "arrive")


def test_use_before_init():
    for op in ("T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([1]))",
               "T.cuda.mbarrier_wait(bar.ptr_to([1]), 0)",
               "T.ptx.mbarrier.expect_tx.shared__cta.b64(bar.ptr_to([1]), T.uint32(16))"):
        res, _ = traced(f"""
            if tx == 0:
                T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            {op}
        """)
        assert only(res, "mbarrier_use_before_init").status == "error", op


def test_reinit_without_inval_is_an_error_and_with_inval_starts_over():
    body = """
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(2))
    """
    res, _ = traced(body)
    assert only(res, "mbarrier_reinit_without_inval").span.line == body_line(MBAR + textwrap.dedent(body),
                                                                             "T.uint32(2)")
    res, ev = traced("""
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]))
            T.ptx.mbarrier.inval.shared.b64(bar.ptr_to([0]))
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 1)
        out[tx] = 4
    """)
    assert res.verdict == "clean" and res_list(res, "out")[:32] == [4] * 32
    # after the re-init the completed parity is 1 again: the wait is the vacuous one
    assert [(e.kind, e.generation) for e in ev][-2:] == [("mbarrier.init", 0), ("mbarrier.wait", None)]


def test_try_wait_polling_consumer_finishes():
    func = fixture("try_wait_poll")
    trace = numsim.Trace()
    res = numsim.run(func, numsim.default_inputs(func), observers=[trace])
    assert res.verdict == "clean"
    assert res_list(res, "out") == [42 + i for i in range(32)]
    kinds = [e.kind for e in trace.sync if e.warp == 1 and e.kind.startswith("mbarrier")]
    assert kinds[-1] == "mbarrier.wait" and set(kinds[:-1]) == {"mbarrier.poll"} and len(kinds) >= 2
    assert res.stats["polls"] >= 1


@pytest.mark.parametrize("max_polls", [1_000_000, 20])
def test_hopeless_try_wait_is_a_deadlock_not_a_budget(max_polls):
    func = fixture("try_wait_poll", ARRIVE=0)
    res = numsim.run(func, numsim.default_inputs(func), max_polls=max_polls)
    d = only(res, "deadlock")
    assert [b["warp"] for b in d.details["blocked"]] == [1]
    assert "await mbarrier.try_wait.parity on bar[0]; phase 0" in d.details["blocked"][0]["awaits"]
    assert res.termination == "error" and res.stats["polls"] < 20


def test_spinning_on_memory_that_never_changes_runs_out_of_budget_not_into_a_deadlock():
    params = "flag: T.Tensor((1,), T.int32), out: T.Tensor((32,), T.int32)"
    res = run("""
        while flag[0] == 0:
            out[tx] = out[tx] + 1
    """, {}, params, max_polls=10)
    d = only(res, "analysis_incomplete")
    assert res.verdict == "incomplete" and res.termination == "incomplete"
    assert d.details["reason"] == "resource_limit" and d.details["limit"] == "polls"


# =========================================================================== named barriers

def test_named_barrier_count_mismatch():
    res = run("""
        if warp == 0:
            T.ptx.bar.sync(1, 64)
        else:
            T.ptx.bar.sync(1, 96)
    """, threads=64)
    d = only(res, "named_barrier_contract_mismatch")
    assert "thread count 96 differs from 64" in d.message
    assert d.details["barrier"] == 1 and d.details["expected"] == 64 and d.details["count"] == 96


def test_named_barrier_waits_for_its_count():
    res = run("""
        if warp < 2:
            T.ptx.bar.sync(3, 96)
    """, threads=96)
    d = only(res, "deadlock")
    assert "blocked warps 0-1" in d.message and "bar.sync 3" in d.message


def test_bar_arrive_and_bar_sync_producer_consumer():
    func = fixture("bar_pc")
    trace = numsim.Trace()
    res = numsim.run(func, numsim.default_inputs(func), observers=[trace])
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], [[r * 100 + i for i in range(32)] for r in range(3)])
    ev = [(e.kind, e.warp, e.barrier[2], e.generation) for e in trace.sync if e.kind in ("bar.sync", "bar.arrive")]
    assert [x for x in ev if x[0] == "bar.arrive" and x[2] == 1] == [("bar.arrive", 0, 1, g) for g in range(3)]
    assert [x for x in ev if x[0] == "bar.sync" and x[2] == 2] == [("bar.sync", 0, 2, g) for g in range(2)]


def test_cta_barrier_counts_a_partial_warp_as_a_whole_warp_and_divergence_is_caught():
    func = fixture("partial_warp")
    res = numsim.run(func, numsim.default_inputs(func))
    d = only(res, "warp_collective_divergence")
    assert d.details["warp"] == 0 and d.details["missing_lanes"] == list(range(16, 32))
    # both warps passed the CTA barrier; every thread read lane 1 of its warp
    assert res_list(res, "out") == [1] * 48


# =========================================================================== warp collectives

def test_elect_sync_elects_the_lowest_active_lane_of_the_member_mask():
    res = run("""
        e = T.local_scalar(T.uint32)
        e = T.uint32(7)
        if lane >= 5:
            e = T.cuda.elect_sync(T.uint32(0xFFFFFFE0))
        out[tx] = T.Cast("int32", e)
        out[tx + 32] = T.Cast("int32", T.cuda.elect_sync())
    """, params="out: T.Tensor((64,), T.int32)")
    assert res.verdict == "clean"
    assert res_list(res, "out") == [7] * 5 + [1] + [0] * 26 + [1] + [0] * 31


def cuda_shfl(v, src):
    return [int(v[s]) for s in src]


def test_shuffles_votes_and_ballots():
    func = fixture("shuffles")
    x = np.random.default_rng(0).integers(-150, 150, 32).astype(np.int32)
    x[3] = 0
    res = numsim.run(func, numsim.default_inputs(func, {"x": x}))
    assert res.verdict == "clean"
    o, u = res.outputs["o"], res.outputs["u"]
    seg = lambda lane, w: lane // w * w  # noqa: E731
    L = range(32)  # noqa: N806
    assert o[0].tolist() == cuda_shfl(x, [(i * 7) % 32 for i in L])
    assert o[1].tolist() == cuda_shfl(x, [seg(i, 8) + 3 for i in L])
    assert o[2].tolist() == cuda_shfl(x, [i - 3 if i % 8 >= 3 else i for i in L])
    assert o[3].tolist() == cuda_shfl(x, [i + 3 if i % 8 + 3 < 8 else i for i in L])
    assert o[4].tolist() == cuda_shfl(x, [i ^ 5 for i in L])
    # xor 9 in 8-lane segments: lane 8 reads lane 1 (an earlier segment); lane 0 would read lane 9
    # (a later one) and keeps its own value
    assert o[5].tolist() == cuda_shfl(x, [i ^ 9 if (i ^ 9) < seg(i, 8) + 8 else i for i in L])
    assert o[6].tolist() == cuda_shfl(x, [seg(i, 8) + 2 for i in L])
    assert o[7].tolist() == o[3].tolist()
    assert o[8].tolist() == [int(i % 8 + 3 < 8) for i in L]
    assert o[9].tolist() == o[5].tolist()           # PTX bfly and CUDA xor agree
    assert o[10].tolist() == o[2].tolist()
    assert o[11].tolist() == [int(x[0])] * 32
    pos = sum(1 << i for i in L if x[i] > 0)
    assert u[0].tolist() == [pos] * 32
    assert u[1].tolist() == [int((x > 100).any())] * 32
    assert u[2].tolist() == [int((x > -100).all())] * 32
    assert u[3].tolist() == [0] * 32 and u[7].tolist() == [1] * 32
    assert u[4].tolist() == [sum(1 << i for i in L if x[i] % 3 == 0)] * 32
    assert u[5].tolist() == [1] * 32
    assert u[6].tolist() == [0xFFFFFFFF] * 32


@pytest.mark.parametrize("call", [
    "out[tx] = T.cuda.__shfl_sync(T.uint32(0xFFFFFFFF), lane, 0, 32)",
    "out[tx] = T.Cast(\"int32\", T.cuda.ballot_sync(T.uint32(0xFFFFFFFF), lane > 3))",
    "out[tx] = T.Cast(\"int32\", T.cuda.elect_sync())",
    "T.cuda.warp_sync()",
])
def test_sync_collective_under_a_partial_mask_is_divergence(call):
    res = run(f"""
        if lane < 16:
            {call}
    """)
    d = only(res, "warp_collective_divergence")
    assert d.details["missing_lanes"] == list(range(16, 32)) and d.details["membermask"] == 0xFFFFFFFF
    assert d.span.line == body_line(f"if lane < 16:\n    {call}", call)
    # with a member mask naming only the active lanes it is fine
    ok = run(f"""
        if lane < 16:
            {call.replace("0xFFFFFFFF", "0x0000FFFF").replace("warp_sync()", "warp_sync(T.uint32(0xFFFF))")
                 .replace("elect_sync()", "elect_sync(T.uint32(0xFFFF))")}
    """)
    assert ok.verdict == "clean"


# =========================================================================== async copies

def test_cp_async_zero_fills_past_src_size_and_wait_group_waits():
    func = fixture("cp_async_zfill")
    g = np.arange(1000, 1031, dtype=np.int32)
    trace = numsim.Trace()
    res = numsim.run(func, {"g": g, "out": np.zeros(64, np.int32)}, observers=[trace])
    assert res.verdict == "clean"
    want = np.full(64, -1, np.int32)
    gbytes = g.view(np.uint8)
    for lane in range(8):
        keep = lane * 2 if lane < 7 else 12
        chunk = np.zeros(16, np.uint8)
        chunk[:keep] = gbytes[lane * 16:lane * 16 + keep]
        want[lane * 4:lane * 4 + 4] = chunk.view(np.int32)
    np.testing.assert_array_equal(res.outputs["out"], want)
    # the copies read only src_size bytes (lane 0 reads nothing) and write all 16
    reads = sorted((a.size, a.actor) for a in trace.accesses if a.actor >= 0 and a.kind == "read")
    assert [s for s, _ in reads] == [2, 4, 6, 8, 10, 12, 12]
    assert sum(1 for a in trace.accesses if a.actor >= 0 and a.kind == "write") == 8


@pytest.mark.parametrize("tail", [0, 1, 2])
def test_wait_group_counts_the_newest_groups_empty_ones_included(tail):
    """wait_group N leaves only the newest N committed groups pending: with TAIL empty groups committed after
    the copy's, wait_group TAIL still waits for the copy (a count of pending groups would pass at once and the
    lanes would read the stale -1); Racecheck agrees that each lane's read follows its copy."""
    func = fixture("cp_async_empty_tail_group", TAIL=tail)
    g = np.arange(500, 532, dtype=np.int32)
    res = numsim.run(func, {"g": g, "out": np.zeros(32, np.int32)})
    assert res.verdict == "clean"
    np.testing.assert_array_equal(res.outputs["out"], g)
    race = modelcheck.racecheck(func, {"g": g, "out": np.zeros(32, np.int32)})
    assert race.verdict == "clean", [str(f) for f in race.findings]


def test_bulk_store_with_commit_and_wait_group():
    func = fixture("bulk_s2g")
    g = np.arange(64, dtype=np.int32) * 3
    trace = numsim.Trace()
    res = numsim.run(func, {"g": g, "out": np.full(64, -5, np.int32), "seen": np.zeros(2, np.int32)},
                     observers=[trace])
    assert res.verdict == "clean"
    want = np.full(64, -5, np.int32)
    want[16:48] = g[16:48] * 2
    np.testing.assert_array_equal(res.outputs["out"], want)
    np.testing.assert_array_equal(res.outputs["seen"], [g[16] * 2, g[47] * 2])   # visible after wait_group
    kinds = [e.kind for e in trace.sync]
    assert kinds.index("async.complete") < kinds.index("bulk.wait_group")
    bulk = [a for a in trace.accesses if a.proxy == "async"]
    assert [(a.alloc_name, a.kind, a.size) for a in bulk] == [("s", "read", 128), ("out", "write", 128)]


# =========================================================================== how runs end

def test_unsupported_operation_raises_naming_op_and_line_only_when_executed():
    params = "out: T.Tensor((32,), T.float32), h: T.Tensor((32,), T.float16), n: T.int32"
    body = """
        f = T.local_scalar(T.float32)
        f = T.float32(1)
        if n > 100:
            T.ptx.cvt.rn.f32.f16(f, h[lane])
        out[lane] = f
    """
    func = kernel(body, params)
    cvt_line = body_line(body, "cvt")
    inputs = {"out": np.zeros(32, np.float32), "h": np.zeros(32, np.float16)}
    # never reached: no error, but a review naming the operation (the verdict covers only the paths taken)
    unreached = numsim.run(func, {**inputs, "n": 5})
    assert unreached.verdict == "review" and unreached.termination == "completed"
    d = only(unreached, "unsupported_operation_not_reached")
    assert d.details["operation"] == "cvt.rn.f32.f16" and d.span.line == cvt_line
    with pytest.raises(numsim.UnsupportedTIRxError) as err:
        numsim.run(func, {**inputs, "n": 101})
    assert err.value.name == "cvt.rn.f32.f16" and err.value.span.line == cvt_line
    assert "cvt.rn.f32.f16" in str(err.value) and f"<semantics>:{cvt_line}" in str(err.value)
    res = numsim.run(func, {**inputs, "n": 101}, unsupported="incomplete")
    d = only(res, "analysis_incomplete")
    assert res.verdict == "incomplete" and d.details["reason"] == "unsupported_operation"
    assert d.details["operation"] == "cvt.rn.f32.f16" and d.span.line == cvt_line
    # a known op outside the modeled set (grid sync): the registry's reason travels with the error
    func2 = kernel("""
        if n > 200:
            T.cuda.grid_sync()
    """, params)
    with pytest.raises(numsim.UnsupportedTIRxError) as err:
        numsim.run(func2, {**inputs, "n": 201})
    assert err.value.name == "cuda.grid_sync" and "grid" in err.value.why
    assert err.value.span.line == body_line("if n > 200:\n    T.cuda.grid_sync()", "grid_sync")


def test_missing_inputs_raise_input_error_listing_the_parameters():
    func = kernel("out[lane] = T.Cast(\"float32\", n)", "out: T.Tensor((32,), T.float32), h: T.Tensor((4,), T.float16), "
                                                         "n: T.int32")
    with pytest.raises(numsim.InputError) as err:
        numsim.run(func, {"out": np.zeros(32, np.float32)})
    assert err.value.missing == ("h", "n")
    assert "h (buffer of float16)" in str(err.value) and "n (int32 scalar)" in str(err.value)


@pytest.mark.parametrize("loop", ["while i < n:\n    i = i + 1", "for j in range(n):\n    i = i + 1"])
def test_loop_budget_gives_an_incomplete_result(loop):
    params = "out: T.Tensor((32,), T.int32), n: T.int32"
    func = kernel("i = T.local_scalar(T.int32)\ni = 0\n" + loop + "\nout[lane] = i", params)
    ok = numsim.run(func, {"out": np.zeros(32, np.int32), "n": 100}, max_loop_iterations=100)
    assert ok.verdict == "clean" and res_list(ok, "out") == [100] * 32
    res = numsim.run(func, {"out": np.zeros(32, np.int32), "n": 101}, max_loop_iterations=100)
    d = only(res, "analysis_incomplete")
    assert res.verdict == "incomplete" and res.termination == "incomplete"
    assert d.details["reason"] == "resource_limit" and d.details["limit"] == "loop_iterations"
    assert d.details["budget"] == 100


@pytest.mark.parametrize("mode, verdict, sync_kinds, race_kinds", [
    (0, "clean", [], []),
    (1, "review", ["uninitialized_read"], ["uninitialized_read"]),
    (2, "error", ["misaligned_address"], ["misaligned_address"]),
    (3, "review", ["uninitialized_read"], ["data_race", "uninitialized_read"]),
    (4, "clean", [], []),
])
def test_discard_writes_an_indeterminate_line(mode, verdict, sync_kinds, race_kinds):
    """discard.global.L2 is a weak write of indeterminate bytes to its 128-byte line: a read before the next write
    is an uninitialized read, an unaligned line an error, a discard unordered with another warp's read a race;
    applypriority changes nothing."""
    func = fixture("discard_l2", MODE=mode)
    g = np.arange(1024, dtype=np.int32)
    res = numsim.run(func, {"g": g, "out": np.zeros(64, np.int32)})
    assert res.verdict == verdict
    if mode == 0:
        np.testing.assert_array_equal(res.outputs["out"][:32], np.arange(32))
    sync = modelcheck.synccheck(func, {"g": g, "out": np.zeros(64, np.int32)})
    assert sorted({f.kind for f in sync.findings}) == sync_kinds
    race = modelcheck.racecheck(func, {"g": g, "out": np.zeros(64, np.int32)})
    assert sorted({f.kind for f in race.findings}) == race_kinds
    if mode == 3:
        (f,) = [f for f in race.findings if f.kind == "data_race"]
        assert "write/read" in f.message and "g:[0, 4)" in f.message
