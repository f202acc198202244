"""tcgen05: TMEM allocation, ld/st/cp/shift, commit and the UMMA `tcgen05.mma`."""
from __future__ import annotations

from .base import (OpInfo, _check_count, _info, _layout, _ops, _quals,
                   _unsupported)


_TC_LD_SHAPES = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}
_TC_CP_SHAPES = {"128x256b", "4x256b", "128x128b", "64x128b", "32x128b"}
_DENSE_KINDS = ("kind::f16", "kind::tf32", "kind::f8f6f4")
_SCALED_KINDS = ("kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4")


def _tcgen05(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    if len(t) < 2:
        return None
    action = t[1]
    q = _quals(t[2:])
    two_cta = "cta_group::2" in q
    fam = "tcgen05"
    if two_cta:
        q["cta_group"] = "2"

    def maybe_v2(info: OpInfo) -> OpInfo:
        # cta_group::2 is modeled for the pair-collective lifecycle, mma, cp and commit; shift moves rows of the
        # peer's TMEM in a layout the cited sources do not give
        if two_cta and info.name == "tcgen05.shift":
            return _unsupported(info, f"{info.name}.cta_group::2 is not modeled")
        return info

    if action == "alloc":
        specs = _ops(("dst", "addr"), ("ncols", "value", "uint32"))
        _check_count("tcgen05.alloc", n, (2,), _layout(specs))
        info = _info(op, "tcgen05.alloc", fam, specs, q, {"sync", "collective", "writes"})
        return maybe_v2(_unsupported(info, "exclusive TMEM allocation is not modeled") if "exclusive" in q else info)
    if action == "dealloc":
        specs = _ops(("taddr", "value", "uint32"), ("ncols", "value", "uint32"))
        _check_count("tcgen05.dealloc", n, (2,), _layout(specs))
        return maybe_v2(_info(op, "tcgen05.dealloc", fam, specs, q, {"sync", "collective"}))
    if action == "relinquish_alloc_permit":
        _check_count("tcgen05.relinquish_alloc_permit", n, (0,), "no operands")
        return maybe_v2(_info(op, "tcgen05.relinquish_alloc_permit", fam, (), q, {"sync", "collective"}))
    if action in ("ld", "st"):
        shape = next((x for x in t[2:] if x in _TC_LD_SHAPES), None)
        num = next((x for x in t[2:] if x.startswith("x") and x[1:].isdigit()), None)
        if shape is None or num is None:
            return None
        q["shape"], q["num"] = shape, num
        regs = _TC_LD_SHAPES[shape] * int(num[1:])
        split = shape == "16x32bx2"
        if action == "ld" and "spcompress" in q:   # mdata and cdata register vectors, [redval], taddr
            specs = _ops(*[(f"r{i}", "dst", None) for i in range(max(n - 1, 1))], ("taddr", "value", "uint32"))
            _check_count(f"tcgen05.ld.spcompress.{shape}.{num}", n, tuple(range(2, 2 * regs + 3)),
                         "mdata and cdata registers, [redval,] taddr")
            return _unsupported(_info(op, "tcgen05.ld", fam, specs, q, {"sync", "collective", "async", "reads"}),
                                "tcgen05.ld.spcompress is not modeled")
        if action == "ld":
            specs = _ops(*[(f"r{i}", "dst", None) for i in range(regs)])
            if "red" in q:                           # the reduction of the loaded values
                specs += _ops(("redval", "dst", None))
            specs += _ops(("taddr", "value", "uint32"))
            if split:
                specs += _ops(("half_splitoff", "imm", "int32"))
        else:
            specs = _ops(("taddr", "value", "uint32"))
            if split:
                specs += _ops(("half_splitoff", "imm", "int32"))
            specs += _ops(*[(f"r{i}", "value", None) for i in range(regs)])
        _check_count(f"tcgen05.{action}.{shape}.{num}", n, (len(specs),),
                     (f"{regs} register(s){', redval' if 'red' in q else ''} and taddr" if action == "ld"
                      else f"taddr and {regs} register(s)"))
        effects = {"sync", "collective", "async", "reads" if action == "ld" else "writes"}
        info = _info(op, f"tcgen05.{action}", fam, specs, q, effects)
        if "red" in q and not ({"min", "max"} & set(q) and q.get("type") in ("f32", "u32", "s32")):
            return _unsupported(info, "tcgen05.ld.red needs .min or .max and .f32, .u32 or .s32")
        return info
    if action in ("wait::ld", "wait::st"):
        _check_count(f"tcgen05.{action}", n, (0,), "no operands")
        return _info(op, f"tcgen05.{action}", fam, (), q, {"sync", "collective"})
    if action in ("fence::before_thread_sync", "fence::after_thread_sync"):
        _check_count(f"tcgen05.{action}", n, (0,), "no operands")
        return _info(op, f"tcgen05.{action}", fam, (), q, {"sync"})
    if action == "cp":
        shape = next((x for x in t[2:] if x in _TC_CP_SHAPES), None)
        if shape is None:
            return None
        q["shape"] = shape
        specs = _ops(("taddr", "value", "uint32"), ("s_desc", "value", "uint64"))
        _check_count("tcgen05.cp", n, (2,), _layout(specs))
        info = _info(op, "tcgen05.cp", fam, specs, q, {"async", "reads", "writes"})
        if any(k.startswith(("b8x16", "b6x16", "b4x16")) for k in q):
            return _unsupported(info, "tcgen05.cp decompression is not modeled")
        return maybe_v2(info)
    if action == "shift":
        specs = _ops(("taddr", "value", "uint32"))
        _check_count("tcgen05.shift", n, (1,), "taddr")
        return maybe_v2(_info(op, "tcgen05.shift", fam, specs, q, {"async", "reads", "writes"}))
    if action == "commit":
        specs = _ops(("mbar", "addr"))
        multicast = any(k.startswith("multicast") for k in q)
        if multicast:
            specs += _ops(("cta_mask", "value", "uint16"))
        _check_count("tcgen05.commit", n, (len(specs),), _layout(specs))
        info = _info(op, "tcgen05.commit", fam, specs, q, {"sync"})
        if any(k.startswith("sync_restrict") for k in q):
            return _unsupported(info, "sync_restrict commits are not modeled")
        return maybe_v2(info)
    if action == "mma":
        return _mma(op, t, q, n, dtypes, two_cta, maybe_v2)
    return None




def _mma(op: str, t: list[str], q: dict, n: int, dtypes, two_cta: bool, maybe_v2) -> OpInfo | None:
    """tcgen05.mma and its syntax lines (PTX ISA 9.7.18.10.10): dense, `.sp` (a metadata TMEM address after
    b_desc), `.block_scale` (scale-factor TMEM addresses after idesc) and `.ws` (weight-stationary: no lane
    masks, an optional zero-column mask descriptor last).  The disable-output-lane vector has 4 registers
    under cta_group::1 and 8 under cta_group::2, given one operand each, or left out."""
    kind = next((x for x in t[2:] if x.startswith("kind::")), None)
    if kind is None:
        return None
    q["kind"] = kind
    is_ts = len(dtypes) > 1 and dtypes[1] in ("uint32", "int32")
    q["form"] = "ts" if is_ts else "ss"
    a = ("a_tmem", "value", "uint32") if is_ts else ("a_desc", "value", "uint64")
    head = _ops(("d_tmem", "value", "uint32"), a, ("b_desc", "value", "uint64"))
    if "sp" in q:
        head += _ops(("sp_meta_tmem", "value", "uint32"))
    head += _ops(("idesc", "value", "uint32"))
    enable = _ops(("enable_input_d", "pred", "uint32"))
    if "ws" in q:
        layouts = [head + enable, head + enable + _ops(("zero_col_mask", "value", "uint64"))]
        text = "d_tmem, a, b_desc, idesc, enable_input_d[, zero_col_mask]"
    elif "block_scale" in q:
        layouts = [head + _ops(("sfa_tmem", "value", "uint32"), ("sfb_tmem", "value", "uint32")) + enable]
        text = "d_tmem, a, b_desc, idesc, sfa_tmem, sfb_tmem, enable_input_d"
    else:
        masks = 8 if two_cta else 4
        layouts = [head + enable,
                   head + _ops(*[(f"disable_output_lane{i}", "value", "uint32") for i in range(masks)]) + enable]
        text = f"d_tmem, a, b_desc, idesc[, {masks} disable-output-lane masks], enable_input_d"
    if "sp" in q:
        text = text.replace("b_desc,", "b_desc, sp_meta_tmem,")
    _check_count("tcgen05.mma", n, tuple(len(x) for x in layouts), text)
    specs = next(x for x in layouts if len(x) == n)
    info = _info(op, "tcgen05.mma", "tcgen05", specs, q, {"async", "reads", "writes"})
    scaled = kind in _SCALED_KINDS
    if kind not in _DENSE_KINDS and not scaled:
        return _unsupported(info, f"tcgen05.mma {kind} is not modeled (kind::f16, kind::tf32, kind::f8f6f4 and the "
                                  f"block-scaled kind::mxf8f6f4, kind::mxf4, kind::mxf4nvf4 are)")
    if scaled != ("block_scale" in q):
        return _unsupported(info, f"tcgen05.mma {kind} " + ("needs .block_scale" if scaled else
                                                            "has no .block_scale form"))
    # collector qualifiers only say where the operand stays between MMAs: modeled as plain reads
    if "ws" in q:
        # PTX ISA 9.7.16.10.9.3: .ws is cta_group::1 only, kinds f16/tf32/f8f6f4/i8, collector usage on B only
        if two_cta:
            return _unsupported(info, "tcgen05.mma.ws exists for cta_group::1 only")
        if kind not in ("kind::f16", "kind::tf32", "kind::f8f6f4"):
            return _unsupported(info, f"tcgen05.mma.ws {kind} is not modeled (kind::f16, kind::tf32 and "
                                      f"kind::f8f6f4 are)")
        if any(k.startswith("collector::a") for k in q):
            return _unsupported(info, "tcgen05.mma.ws takes .collector::bN (B buffers), not .collector::a")
    special = [k for k in ("sp", "ashift") if k in q] + [k for k in q if k.startswith(("decompress", "lut"))]
    if special:
        return _unsupported(info, f"tcgen05.mma .{', .'.join(special)} is not modeled")
    return maybe_v2(info)
