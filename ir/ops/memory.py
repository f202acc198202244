"""Memory instructions: ld/st, atom/red, cp.async and the bulk and tensor (TMA) copies."""
from __future__ import annotations

from .base import (OpInfo, _check_count, _has_cache_hint, _info, _layout, _ops, _quals,
                   _type_dtype, _unsupported, _vec_width)


def _ld_st(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    q = _quals(t[1:])
    width = _vec_width(q)
    hint = 1 if _has_cache_hint(q) else 0
    if t[0] == "ld":
        specs = _ops(*[(f"d{i}", "dst", None) for i in range(width)], ("addr", "addr"))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (width + 1 + hint,), _layout(specs))
        return _info(op, "ld", "memory", specs, q, {"reads"})
    specs = _ops(("addr", "addr"), *[(f"v{i}", "value", _type_dtype(q)) for i in range(width)])
    if hint:
        specs += _ops(("cache_policy", "value", "uint64"))
    _check_count(op, n, (width + 1 + hint,), _layout(specs))
    return _info(op, "st", "memory", specs, q, {"writes"})


_ATOM_OPS = {"add", "min", "max", "exch", "cas", "and", "or", "xor", "inc", "dec"}


def _atom_red(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    q = _quals(t[1:])
    ops = [x for x in t[1:] if x in _ATOM_OPS]
    if not ops:
        return None
    q["op"] = ops[0]
    hint = 1 if _has_cache_hint(q) else 0
    width = _vec_width(q)     # .v2/.v4/.v8 (global f16/bf16/f32 add, min, max): a register per element
    if t[0] == "atom":
        specs = _ops(*[(f"d{i}" if width > 1 else "d", "dst", None) for i in range(width)], ("addr", "addr"),
                     *[(f"b{i}" if width > 1 else "b", "value", _type_dtype(q)) for i in range(width)])
        if ops[0] == "cas":
            specs += _ops(("c", "value", _type_dtype(q)))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "atom", "memory", specs, q, {"reads", "writes"})
    else:
        specs = _ops(("addr", "addr"), *[(f"b{i}" if width > 1 else "b", "value", _type_dtype(q))
                                         for i in range(width)])
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "red", "memory", specs, q, {"reads", "writes"})
    if "vec" in q:
        return _unsupported(info, "vector atomics are not modeled")
    return info


def _bulk_prefetch(op: str, rest: list[str], n: int) -> OpInfo | None:
    """cp.async.bulk.prefetch.tensor.Nd.L2.global{.load_mode}{.L2::cache_hint} [tmap, coords]{, policy} and
    cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy}: the PTX ISA (cp.async.bulk.prefetch,
    cp.async.bulk.prefetch.tensor; PTX 8.0, sm_90) calls them a hint to bring data into L2; they write nothing
    the program sees and complete on no barrier or group, so they are the `prefetch` no-op (im2col prefetches,
    whose offsets this layout does not take, are not)."""
    if rest and rest[0] == "tensor":
        dim_tok = rest[1] if len(rest) > 1 else ""
        if not (len(dim_tok) == 2 and dim_tok[0] in "12345" and dim_tok[1] == "d"):
            return None
        q = _quals(rest[2:])
        q["dims"] = dim_tok[0]
        ncoords = 5 if "tile::gather4" in q else int(dim_tok[0])
        specs = _ops(("tmap", "tmap"), *[(f"c{i}", "value", "int32") for i in range(ncoords)])
    else:
        q = _quals(rest)
        specs = _ops(("src", "addr"), ("size", "value", "uint32"))
    if _has_cache_hint(q):
        specs += _ops(("cache_policy", "value", "uint64"))
    _check_count(op, n, (len(specs),), _layout(specs))
    info = _info(op, "prefetch", "misc", specs, q, set())
    if any(k.startswith("im2col") for k in q):
        return _unsupported(info, "an im2col prefetch is not modeled")
    return info


def _cp(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    if len(t) < 2 or t[1] != "async":
        return None
    rest = t[2:]
    if not rest:
        return None
    # classic cp.async
    if rest[0] in ("ca", "cg"):
        q = _quals(rest[1:])
        q["cache"] = rest[0]
        specs = _ops(("dst", "addr"), ("src", "addr"), ("cp_size", "imm", "int32"), ("src_size", "value", "uint32"))
        hint = 1 if _has_cache_hint(q) else 0
        allowed = (3 + hint, 4 + hint)
        _check_count(op, n, allowed, "dst, src, cp_size[, src_size]")
        chosen = specs[: n - hint] + (_ops(("cache_policy", "value", "uint64")) if hint else ())
        return _info(op, "cp.async", "async_copy", chosen, q, {"async", "reads", "writes"})
    if rest[0] == "commit_group":
        _check_count(op, n, (0,), "no operands")
        return _info(op, "cp.async.commit_group", "async_copy", (), {}, {"sync"})
    if rest[0] == "wait_group":
        _check_count(op, n, (1,), "n")
        return _info(op, "cp.async.wait_group", "async_copy", _ops(("n", "imm", "int32")), {}, {"sync"})
    if rest[0] == "wait_all":
        _check_count(op, n, (0,), "no operands")
        return _info(op, "cp.async.wait_all", "async_copy", (), {}, {"sync"})
    if rest[0] == "mbarrier":
        q = _quals(rest[1:])
        _check_count(op, n, (1,), "addr")
        return _info(op, "cp.async.mbarrier.arrive", "async_copy", _ops(("addr", "addr")), q, {"sync"})
    if rest[0] != "bulk":
        return None
    rest = rest[1:]
    if not rest:
        return None
    if rest[0] == "commit_group":
        _check_count(op, n, (0,), "no operands")
        return _info(op, "cp.async.bulk.commit_group", "async_copy", (), {}, {"sync"})
    if rest[0] == "wait_group":
        q = {"read": "read"} if "read" in rest else {}
        _check_count(op, n, (1,), "n")
        return _info(op, "cp.async.bulk.wait_group", "async_copy", _ops(("n", "imm", "int32")), q, {"sync"})
    if rest[0] == "prefetch":
        return _bulk_prefetch(op, rest[1:], n)
    if rest[0] == "tensor":
        dim_tok = rest[1] if len(rest) > 1 else ""
        if not (len(dim_tok) == 2 and dim_tok[0] in "12345" and dim_tok[1] == "d"):
            return None
        dims = int(dim_tok[0])
        q = _quals(rest[2:])
        q["dims"] = str(dims)
        hint = 1 if _has_cache_hint(q) else 0
        # gather4/scatter4 address four rows of a 2D tensor: a column and four row coordinates
        ncoords = 5 if any(k in q for k in ("tile::gather4", "tile::scatter4")) else dims
        coords = [(f"c{i}", "value", "int32") for i in range(ncoords)]
        if q.get("dst") == "global":   # shared -> global (TMA store)
            specs = _ops(("tmap", "tmap"), *coords, ("src", "addr"))
            if hint:
                specs += _ops(("cache_policy", "value", "uint64"))
            _check_count(op, n, (len(specs),), _layout(specs))
            info = _info(op, "cp.async.bulk.tensor.s2g", "async_copy", specs, q, {"async", "reads", "writes"})
            bad = [k for k in q if k.startswith(("im2col", "tile::scatter4", "override"))]
        else:                          # global -> shared (TMA load)
            specs = _ops(("dst", "addr"), ("tmap", "tmap"), *coords, ("mbar", "addr"))
            if "multicast::cluster" in q or any(k.startswith("multicast") for k in q):
                specs += _ops(("cta_mask", "value", "uint16"))
            if hint:
                specs += _ops(("cache_policy", "value", "uint64"))
            _check_count(op, n, (len(specs),), _layout(specs))
            info = _info(op, "cp.async.bulk.tensor.g2s", "async_copy", specs, q, {"async", "reads", "writes"})
            bad = [k for k in q if k.startswith(("im2col", "override", "mbarrier::report"))
                   or (k == "tile::gather4" and dims != 2)
                   or (k.startswith("multicast") and k != "multicast::cluster")]
        if bad:
            return _unsupported(info, f"TMA {', '.join(bad)} is not modeled (v1 models tile mode and 2D "
                                      f"tile::gather4)")
        return info
    q = _quals(rest)
    hint = 1 if _has_cache_hint(q) else 0
    if q.get("dst") == "global":       # bulk shared -> global
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        if "cp_mask" in q:
            specs += _ops(("byte_mask", "value", "uint16"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "cp.async.bulk.s2g", "async_copy", specs, q, {"async", "reads", "writes"})
        return _unsupported(info, "bulk copy byte masks are not modeled") if "cp_mask" in q else info
    if q.get("src") == "global":       # bulk global -> shared
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"))
        if "ignore_oob" in q:
            specs += _ops(("ignore_bytes_left", "value", "uint32"), ("ignore_bytes_right", "value", "uint32"))
        specs += _ops(("mbar", "addr"))
        if any(k.startswith("multicast") for k in q):
            specs += _ops(("cta_mask", "value", "uint16"))
        if hint:
            specs += _ops(("cache_policy", "value", "uint64"))
        _check_count(op, n, (len(specs),), _layout(specs))
        info = _info(op, "cp.async.bulk.g2s", "async_copy", specs, q, {"async", "reads", "writes"})
        bad = [k for k in q if k.startswith(("multicast", "mbarrier::report")) and k != "multicast::cluster"]
        if bad:
            return _unsupported(info, f"bulk copy {', '.join(bad)} is not modeled")
        if "ignore_oob" in q:
            return _unsupported(info, "ignore_oob bulk copies are not modeled")
        return info
    if q.get("dst") == "shared::cluster" and q.get("src") in ("shared::cta", "shared"):
        specs = _ops(("dst", "addr"), ("src", "addr"), ("size", "value", "uint32"), ("mbar", "addr"))
        _check_count(op, n, (len(specs),), _layout(specs))
        return _info(op, "cp.async.bulk.s2c", "async_copy", specs, q, {"async", "reads", "writes"})
    return None




_CACHE_RANGE_LEVELS = {"discard": "L2", "applypriority": "L2::evict_normal"}


def _cache_range(op: str, t: list[str], n: int, dtypes) -> OpInfo | None:
    """discard{.global}.L2 [a], 128 and applypriority{.global}.L2::evict_normal [a], 128 (PTX ISA 9.7.10.17,
    9.7.10.20; PTX 7.4, sm_80).  The size can only be 128, so TIRx's table owns it and the call passes the address
    alone.  discard is a weak write of an unstable indeterminate value to the 128 bytes; applypriority only sets
    the lines' eviction priority, with no effect the program can see."""
    name = t[0]
    specs = _ops(("addr", "addr"))
    _check_count(op, n, (1,), _layout(specs))
    extra = [x for x in t[1:] if x not in ("global", _CACHE_RANGE_LEVELS[name])]
    info = _info(op, name, "memory", specs, _quals(t[1:]), {"writes"} if name == "discard" else set())
    if extra or _CACHE_RANGE_LEVELS[name] not in t[1:]:
        return _unsupported(info, f"{op} is not a form PTX defines ({name}{{.global}}."
                                  f"{_CACHE_RANGE_LEVELS[name]} [a], 128)")
    return info
