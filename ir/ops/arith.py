"""Register-only PTX (arithmetic, conversion, comparison, data movement, matrix fragments) and the PTX
hints and cluster-side instructions TVM 0.27 prints that have no sync meaning of their own.

These are accepted with their PTX operand layouts (PTX ISA 9.7.1-9.7.9, 9.7.14, 9.7.16; the operand
orders agree with apache-tvm 0.27's instruction table), so a kernel using them parses. The register
arithmetic forms `arith_forms.parse` models are supported (family math, name `math.<head>`; NumSim's
ops/ptx_math.py runs them); NumSim reports any other one it reaches as unmodeled (`incomplete`, naming
the op and its line).
`prefetch` (a cache hint) is modeled as having no effect.  The warp-collective fragment forms NumSim
models (`numsim/ops/fragments.py`): ldmatrix/stmatrix `.m8n8.x1|x2|x4{.trans}.b16`, movmatrix
`.m8n8.trans.b16`, mma.sync `.m16n8k8|m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` and redux.sync
(integer add/min/max, bitwise and/or/xor, f32 min/max with `.abs`/`.NaN`); other shapes and types stay
unsupported with the reason.
"""
from __future__ import annotations

from . import arith_forms
from .base import (OpInfo, OperandSpec, _check_count, _has_cache_hint, _info, _layout, _ops, _quals, _type_dtype,
                   _unsupported)

# head -> (allowed operand counts, the layout text); the first operand is the destination register
_DST_FIRST: dict[str, tuple[tuple[int, ...], str]] = {
    "mov": ((2, 3), "d, a[, b] (3 operands: pack two halves into d, or unpack d into two)"),
    "add": ((3,), "d, a, b"), "sub": ((3,), "d, a, b"), "mul": ((3,), "d, a, b"), "div": ((3,), "d, a, b"),
    "rem": ((3,), "d, a, b"), "min": ((3, 4), "d, a, b[, c]"), "max": ((3, 4), "d, a, b[, c]"),
    "and": ((3,), "d, a, b"), "or": ((3,), "d, a, b"), "xor": ((3,), "d, a, b"), "not": ((2,), "d, a"),
    "shl": ((3,), "d, a, b"), "shr": ((3,), "d, a, b"), "fma": ((4,), "d, a, b, c"), "mad": ((4,), "d, a, b, c"),
    "neg": ((2,), "d, a"), "abs": ((2,), "d, a"), "ex2": ((2,), "d, a"), "lg2": ((2,), "d, a"),
    "rcp": ((2,), "d, a"), "rsqrt": ((2,), "d, a"), "sqrt": ((2,), "d, a"), "tanh": ((2,), "d, a"),
    "sin": ((2,), "d, a"), "cos": ((2,), "d, a"), "copysign": ((3,), "d, a, b"),
    "cvt": ((2, 3), "d, a[, b] (3 operands: two sources packed into d)"),
    "setp": ((3, 4), "p, a, b[, c]"), "selp": ((4,), "d, a, b, c"), "slct": ((4,), "d, a, b, c"),
    "lop3": ((5,), "d, a, b, c, immLut"), "prmt": ((4,), "d, a, b, c"), "bfe": ((4,), "d, a, b, c"),
    "bfi": ((5,), "d, f, b, c, d"), "brev": ((2,), "d, a"), "popc": ((2,), "d, a"), "clz": ((2,), "d, a"),
    "bfind": ((2,), "d, a"), "fns": ((4,), "d, mask, base, offset"),
    "shf": ((4,), "d, a, b, c"), "mul24": ((3,), "d, a, b"), "mad24": ((4,), "d, a, b, c"),
    "testp": ((2,), "p, a"), "cvta": ((2,), "d, a"), "isspacep": ((2,), "p, a"),
    "createpolicy": ((2, 3, 4), "policy, ..."),
}

_WHY = {
    "cvta": "cvta (a state-space address conversion) is not simulated",
    "createpolicy": "createpolicy (an L2 cache policy) is not simulated",
}


def _dst_first(op: str, t: list[str], n: int, dtypes) -> OpInfo:
    head = t[0]
    q = _quals(t[1:])
    counts, text = _DST_FIRST[head]
    _check_count(head, n, counts, text)
    src = _type_dtype(q)
    specs = _ops(("d", "dst", None), *[(f"a{i}", "value", src) for i in range(n - 1)])
    if head == "cvta" and q.get("space", "").startswith("shared") and n == 2:
        # cvta[.to].shared[::cta|::cluster] (PTX ISA 9.7.9.18): generic <-> shared addresses; NumSim's generic
        # address of shared memory is its shared::cta address, and that is also the executing CTA's own
        # shared::cluster address
        return _info(op, "cvta.shared", "misc", specs, q, set())
    if head in ("mov", "cvt") and n == 3 and "x2" not in "".join(t[1:]) and "b64" not in t and "b128" not in t:
        specs = _ops(*[(f"r{i}", "value", None) for i in range(n)])   # orientation unknown: no dst role
    form = arith_forms.parse(op, tuple(dtypes)) if head in arith_forms.HEADS else None
    if isinstance(form, arith_forms.MathForm):
        # modeled register arithmetic: NumSim's ops/ptx_math.py runs it (one handler per head)
        return _info(op, f"math.{head}", "math", arith_forms.operand_specs(form), q, set())
    info = _info(op, head, "math", specs, q, set())
    if isinstance(form, str) and not form.startswith("the PTX arithmetic instruction"):
        return _unsupported(info, form)
    return _unsupported(info, _WHY.get(head, f"the PTX arithmetic instruction {head} is not simulated "
                                             f"(NumSim models TIRx expressions, not PTX register arithmetic)"))


_MMA_TYPES = ("f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2", "s8", "u8", "s4", "u4", "b1", "s32")
# modeled mma.sync shapes -> (a, b) register counts (PTX ISA 9.7.14.5.8/9: f16/bf16 A and B fragments)
_MMA_REGS = {"m16n8k8": (2, 1), "m16n8k16": (4, 2)}


def _matrix(op: str, t: list[str], n: int, dtypes) -> OpInfo:
    """ldmatrix d..., [addr] / stmatrix [addr], r... (x1, x2, x4 registers); mma.sync d..., a..., b..., c...
    (register fragments whose counts follow the shape and types)."""
    head = t[0]
    q = _quals(t[1:])
    if head in ("ldmatrix", "stmatrix"):
        regs = next((int(x[1:]) for x in t[1:] if x in ("x1", "x2", "x4")), 1)
        q["num"] = str(regs)
        _check_count(head, n, (regs + 1,), f"{regs} register(s) and addr" if head == "ldmatrix"
                     else f"addr and {regs} register(s)")
        if head == "ldmatrix":
            specs = _ops(*[(f"d{i}", "dst", None) for i in range(regs)], ("addr", "addr"))
        else:
            specs = _ops(("addr", "addr"), *[(f"r{i}", "value", "uint32") for i in range(regs)])
        info = _info(op, head, "memory", specs, q, {"collective", "reads" if head == "ldmatrix" else "writes"})
        if "m8n8" not in q or q.get("type") != "b16" or q.get("space", "shared") not in ("shared", "shared::cta"):
            what = "load" if head == "ldmatrix" else "store"
            return _unsupported(info, f"{head} (a warp-collective shared-memory fragment {what}) is modeled for "
                                      f".m8n8 .b16 matrices only, not {op}")
        return info
    shape = next((x for x in t[1:] if x.startswith("m") and "n" in x and "k" in x), "")
    types = [x for x in t[1:] if x in _MMA_TYPES]
    layouts = [x for x in t[1:] if x in ("row", "col")]
    counts = _MMA_REGS.get(shape)
    modeled = (counts is not None and t[1:3] == ["sync", "aligned"] and layouts == ["row", "col"] and len(types) == 4
               and types[0] == types[3] == "f32" and types[1] == types[2] and types[1] in ("f16", "bf16")
               and len(t) == 10)
    if counts is None or not modeled:
        _check_count(head, n, tuple(range(4, 64)), "d fragment, a fragment, b fragment, c fragment")
        specs = _ops(*[(f"r{i}", "value", None) for i in range(n)])
        return _unsupported(_info(op, "mma.sync", "math", specs, q, {"collective"}),
                            f"mma.sync is modeled for .m16n8k8/.m16n8k16 .row.col with f16 or bf16 inputs and f32 "
                            f"accumulators only, not {op}")
    na, nb = counts
    _check_count(head, n, (8 + na + nb,), f"d0..d3, a0..a{na - 1}, b0..b{nb - 1}, c0..c3")
    q.update(shape=shape, atype=types[1], type="f32")
    specs = _ops(*[(f"d{i}", "dst", None) for i in range(4)], *[(f"a{i}", "value", "uint32") for i in range(na)],
                 *[(f"b{i}", "value", "uint32") for i in range(nb)], *[(f"c{i}", "value", "float32") for i in range(4)])
    return _info(op, "mma.sync", "math", specs, q, {"collective"})


def _movmatrix(op: str, t: list[str], n: int, dtypes) -> OpInfo:
    """movmatrix.sync.aligned.m8n8.trans.b16 d, a (PTX ISA 9.7.14.5.17): the only syntax line."""
    q = _quals(t[1:])
    _check_count("movmatrix", n, (2,), "d, a")
    info = _info(op, "movmatrix", "math", _ops(("d", "dst", None), ("a", "value", "uint32")), q, {"collective"})
    if t[1:] != ["sync", "aligned", "m8n8", "trans", "b16"]:
        return _unsupported(info, f"movmatrix is modeled as .sync.aligned.m8n8.trans.b16 only, not {op}")
    return info


_REDUX_FORMS = {("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"), ("max", "u32"), ("max", "s32"),
                ("and", "b32"), ("or", "b32"), ("xor", "b32"), ("min", "f32"), ("max", "f32")}


def _redux(op: str, t: list[str], n: int, dtypes) -> OpInfo:
    """redux.sync.op{.abs}{.NaN}.type d, a, membermask (PTX ISA 9.7.12.13)."""
    q = _quals(t[1:])
    _check_count("redux.sync", n, (3,), "d, a, membermask")
    kind = next((x for x in t[1:] if x in ("add", "min", "max", "and", "or", "xor")), "")
    q["op"] = kind
    specs = _ops(("d", "dst", None), ("a", "value", _type_dtype(q)), ("membermask", "value", "uint32"))
    info = _info(op, "redux.sync", "math", specs, q, {"collective"})
    flags = {x for x in t[1:] if x in ("abs", "NaN")}
    rest = [x for x in t[1:] if x not in flags and x not in (kind, q.get("type"))]
    if (kind, q.get("type")) not in _REDUX_FORMS or (flags and q.get("type") != "f32") or rest:
        return _unsupported(info, f"{op} is not a redux.sync form PTX defines (integer add/min/max, bitwise "
                                  "and/or/xor on .b32, f32 min/max with .abs/.NaN)")
    return info


def _prefetch(op: str, t: list[str], n: int, dtypes) -> OpInfo:
    """prefetch{.space}.level [addr] / prefetch{.tensormap_space}.tensormap [addr] / prefetchu.L1 [addr]: a hint
    with no effect on values or ordering."""
    q = _quals(t[1:])
    _check_count(t[0], n, (1,), "addr")
    return _info(op, "prefetch", "misc", _ops(OperandSpec("addr", "value")), q, set())


_ST_ASYNC_TYPES = ("b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64")


def _st_async_form(q) -> str:
    """Why `q` is not a form of st.async{.weak}{.cluster}.shared::cluster.mbarrier::complete_tx::bytes{.v2|.v4}.type
    (PTX ISA 9.7.9.12: .type b32/b64/u32/u64/s32/s64/f32/f64, .v2 of any, .v4 of a 32-bit type; .b128 and the
    sm_100 `.release.global` form are not modeled); "" for a modeled form."""
    vec, typ = q.get("vec", ""), q.get("type", "")
    flags = {k for k in q if k not in ("sem", "scope", "space", "type", "vec")}
    if (q.get("sem", "weak") != "weak" or q.get("scope", "cluster") != "cluster"
            or q.get("space", "shared::cluster") != "shared::cluster" or "dst" in q
            or flags != {"mbarrier::complete_tx::bytes"}):
        return ("st.async is modeled in its shared::cluster form completing on an mbarrier "
                "(.weak.shared::cluster.mbarrier::complete_tx::bytes) only")
    if typ not in _ST_ASYNC_TYPES or vec not in ("", "v2", "v4") or (vec == "v4" and typ[1:] == "64"):
        form = f".{vec}.{typ}" if vec else f".{typ}"
        return (f"st.async is modeled for .b32/.b64/.u32/.u64/.s32/.s64/.f32/.f64, .v2 of those or .v4 of a 32-bit "
                f"type; not {form}")
    return ""


def cluster_memory(op: str, t: list[str], n: int, dtypes) -> OpInfo:
    """st.async [remote addr], value(s), [remote mbar] (PTX ISA 9.7.9.12), red.async (9.7.13.7),
    tensormap.replace [tmap], [ord,] value (9.7.9.27), cp.reduce.async.bulk[.tensor] (9.7.9.25)."""
    head = t[0]
    q = _quals(t[1:])
    if head in ("st_async", "red_async"):
        width = {"v2": 2, "v4": 4}.get(q.get("vec", ""), 1)
        specs = _ops(("addr", "addr"), *[(f"v{i}", "value", _type_dtype(q)) for i in range(width)], ("mbar", "addr"))
        _check_count(head, n, (len(specs),), "remote addr, value(s), remote mbar")
        info = _info(op, head.replace("_", "."), "async_copy", specs, q, {"async", "writes", "sync"})
        if head == "red_async":
            return _unsupported(info, "red.async (a reduction into a peer CTA's shared memory completing on its "
                                      "mbarrier) is not modeled")
        why = _st_async_form(q)
        return _unsupported(info, why) if why else info
    if head == "tensormap_replace":
        _check_count(head, n, (2, 3), "tmap addr[, ord], value")
        specs = _ops(("addr", "addr"), *[(f"a{i}", "value", None) for i in range(n - 1)])
        info = _info(op, "tensormap.replace", "memory", specs, q, {"writes"})
        if "tile" not in q or q.get("space", "global") not in ("global", "shared::cta"):
            return _unsupported(info, "tensormap.replace is modeled in .tile mode on .global or .shared::cta maps")
        return info
    rest = t[2:]           # cp.reduce.async.bulk[.tensor.Nd]...
    dim_tok = rest[3] if len(rest) > 3 and rest[2] == "tensor" else ""
    if len(dim_tok) == 2 and dim_tok[0] in "12345" and dim_tok[1] == "d":
        dims = int(dim_tok[0])
        q = _quals(rest[4:])
        q["dims"] = str(dims)
        specs = _ops(("tmap", "tmap"), *[(f"c{i}", "value", "int32") for i in range(dims)], ("src", "addr"))
        if _has_cache_hint(q):
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "cp.reduce.async.bulk.tensor", "async_copy", specs, q, {"async", "reads", "writes"})
        if q.get("dst") != "global" or "bulk_group" not in q or any(k.startswith("im2col") for k in q):
            return _unsupported(info, "cp.reduce.async.bulk.tensor is modeled in .tile mode from shared::cta to "
                                      "global with .bulk_group completion")
        return info
    if q.get("dst") == "global":     # shared::cta -> global, bulk group
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"))
        if _has_cache_hint(q):
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "cp.reduce.async.bulk", "async_copy", specs, q, {"async", "reads", "writes"})
        return info if "bulk_group" in q else _unsupported(info, "cp.reduce.async.bulk into global completes "
                                                                 "through .bulk_group")
    specs = _ops(*[(f"r{i}", "value", None) for i in range(n)])
    return _unsupported(_info(op, "cp.reduce.async.bulk", "async_copy", specs, q, {"async", "reads", "writes"}),
                        "cp.reduce.async.bulk into shared::cluster (completing on a peer's mbarrier) is not modeled")


HANDLERS = {**{h: _dst_first for h in _DST_FIRST}, "ldmatrix": _matrix, "stmatrix": _matrix, "mma": _matrix,
            "movmatrix": _movmatrix, "redux_sync": _redux,
            "prefetch": _prefetch, "prefetchu": _prefetch, "st_async": cluster_memory,
            "red_async": cluster_memory, "tensormap_replace": cluster_memory}
