"""Hopper warpgroup MMA (PTX ISA 9.7.15): `wgmma.fence`, `wgmma.mma_async`, `wgmma.commit_group`, `wgmma.wait_group`.

Operand order as apache-tvm-tirx's instruction table registers it (ptx/table.py, "wgmma_*" entries):
`mma_async` takes the accumulator registers D (N/2 `.f32`, N/4 `.f16x2`), then A (a 64-bit shared-memory
matrix descriptor, or four `.b32` registers of f16x2 fragments: the `rs` form), the descriptor of B, the
`scale-d` predicate and the immediates imm-scale-a, imm-scale-b, [imm-trans-a (ss only)], imm-trans-b.
`wait_group` takes the group count N as its one immediate operand.

Modeled: `.m64nNk16.f32.{f16,bf16}.{f16,bf16}` (both inputs of one type), N = 8..256 in steps of 8, ss and
rs.  Every other type line (f16 accumulators, tf32, fp8, integer, single-bit) and `.sp` is classified with
its operand count and reported unsupported with the reason.
"""
from __future__ import annotations

from .base import OpInfo, _check_count, _info, _ops, _unsupported

_WIDE = ("f16", "bf16")


def _shape(token: str) -> tuple[int, int, int] | None:
    """(M, N, K) of `m64nNkK`, or None."""
    if not token.startswith("m") or "n" not in token or "k" not in token:
        return None
    try:
        m, rest = token[1:].split("n", 1)
        n, k = rest.split("k", 1)
        return int(m), int(n), int(k)
    except ValueError:
        return None


def _mma_async(op: str, t: list[str], n: int) -> OpInfo | None:
    shape = next((s for s in map(_shape, t[2:]) if s is not None), None)
    types = [x for x in t[2:] if x in ("f32", "f16", "bf16", "tf32", "e4m3", "e5m2", "s32", "s8", "u8", "b1")]
    if shape is None or len(types) != 3:
        return None
    m, nn, k = shape
    dtype, atype, btype = types
    quals = {"shape": f"m{m}n{nn}k{k}", "dtype": dtype, "atype": atype, "btype": btype}
    sparse = "sp" in t[1:]
    regs = nn // 2 if dtype in ("f32", "s32") else nn // 4
    # ss: d..., a_desc, b_desc, scale_d, scale_a, scale_b, trans_a, trans_b; rs: d..., a0..a3, b_desc, scale_d,
    # scale_a, scale_b, trans_b (the two forms differ by three operands, so the count says which)
    rs = n == regs + 9
    quals["form"] = "rs" if rs else "ss"
    d_specs = tuple((f"d{i}", "dst", None) for i in range(regs))
    a_specs = tuple((f"a{i}", "value", "uint32") for i in range(4)) if rs else (("a_desc", "value", "uint64"),)
    trans = ("trans_b",) if rs else ("trans_a", "trans_b")
    tail: tuple[tuple[str, str, str | None], ...] = (
        ("b_desc", "value", "uint64"), ("scale_d", "pred", None), ("scale_a", "imm", "int32"),
        ("scale_b", "imm", "int32"), *((t_, "imm", "int32") for t_ in trans))
    supported = (dtype == "f32" and atype in _WIDE and btype == atype and m == 64 and k == 16 and not sparse
                 and 8 <= nn <= 256 and nn % 8 == 0)
    if not supported:
        # classified with what was written, so the run names the form when it reaches it
        specs = _ops(*[(f"x{i}", "value", None) for i in range(n)])
        info = _info(op, "wgmma.mma_async", "wgmma", specs, quals, {"sync", "collective", "async", "reads"})
        return _unsupported(info, _why(dtype, atype, btype, m, nn, k, sparse))
    specs = _ops(*d_specs, *a_specs, *tail)
    _check_count(f"wgmma.mma_async.{quals['shape']}", n, (regs + 7, regs + 9),
                 f"{regs} accumulator register(s), A (a descriptor or 4 registers), b_desc, scale_d, scale_a, "
                 f"scale_b, [trans_a,] trans_b")
    return _info(op, "wgmma.mma_async", "wgmma", specs, quals, {"sync", "collective", "async", "reads"})


def _why(dtype: str, atype: str, btype: str, m: int, n: int, k: int, sparse: bool) -> str:
    if sparse:
        return "wgmma.mma_async.sp (sparse A with a metadata operand) is not modeled"
    if dtype == "f16":
        return "wgmma with an .f16 accumulator (f16x2 register pairs) is not modeled; use .f32"
    if atype not in _WIDE or btype not in _WIDE:
        return f"wgmma with .{atype}/.{btype} inputs is not modeled (only .f16 and .bf16, K = 16)"
    if atype != btype:
        return f"wgmma needs A and B of one type (.{atype} vs .{btype})"
    return f"wgmma shape m{m}n{n}k{k} is not a valid .f16/.bf16 shape (M = 64, K = 16, N = 8..256 step 8)"


def wgmma(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    if len(t) < 2:
        return None
    action = t[1]
    if action in ("fence", "commit_group"):
        _check_count(f"wgmma.{action}", n, (0,), "no operands")
        return _info(op, f"wgmma.{action}", "wgmma", (), {}, {"sync", "collective"})
    if action == "wait_group":
        specs = _ops(("group", "imm", "int32"))
        _check_count("wgmma.wait_group", n, (1,), "N (groups that may stay pending)")
        return _info(op, "wgmma.wait_group", "wgmma", specs, {}, {"sync", "collective"})
    if action == "mma_async":
        return _mma_async(op, t, n)
    return None
