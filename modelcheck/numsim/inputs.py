"""Binding inputs to kernel parameters: arrays for buffers, scalars for scalar parameters.

Inputs are never mutated: every bound array is copied.  A missing or ill-typed binding
raises `InputError` naming the parameters and what was expected.
"""
from __future__ import annotations

import numpy as np

import ir
from ir import dtypes as dt

from . import values as V
from .budget import DEFAULT_MAX_MEMORY_MB, megabytes
from .errors import InputError, ResourceLimit


def _static(e, constants, scalars):
    from .compile_stmt import _static as static
    return static(e, constants, scalars)


def bind_scalars(func: ir.PrimFunc, inputs: dict) -> dict:
    scalars = {}
    for p in func.params:
        if p.kind != "scalar" or p.name not in inputs:
            continue
        v = inputs[p.name]
        if isinstance(v, np.ndarray):
            if v.size != 1:
                raise InputError(f"scalar input {p.name!r} has a buffer value (shape {v.shape}); "
                                 f"pass a Python or NumPy scalar")
            v = v.reshape(()).item()
        if isinstance(v, (np.generic,)):
            v = v.item()
        if dt.is_float(p.dtype):
            scalars[p.name] = V.scalar_of(p.dtype, float(v))
        elif p.dtype == "bool":
            scalars[p.name] = bool(v)
        else:
            if isinstance(v, float) and not v.is_integer():
                raise InputError(f"scalar input {p.name!r} is {v}, but the parameter is {p.dtype}")
            scalars[p.name] = dt.wrap(int(v), p.dtype)
    return scalars


def normalize(func: ir.PrimFunc, inputs: dict) -> dict:
    """Inputs keyed by parameter name: a buffer bound to a handle parameter (T.match_buffer, the lowered
    form's pointer parameters) may be given under the buffer's name too."""
    out = dict(inputs)
    for p in func.params:
        if p.buffer is not None and p.buffer.name != p.name and p.name not in out and p.buffer.name in out:
            out[p.name] = out.pop(p.buffer.name)
    return out


def missing(func: ir.PrimFunc, inputs: dict) -> list[str]:
    return [p.name for p in func.params if p.name not in inputs]


def check_inputs(func: ir.PrimFunc, inputs: dict) -> None:
    absent = missing(func, inputs)
    if absent:
        wanted = ", ".join(_describe(p) for p in func.params if p.name in absent)
        raise InputError(f"missing input bindings for {', '.join(absent)}; the kernel takes: {wanted}",
                         tuple(absent))
    known = {p.name for p in func.params} | {d.name for d in func.dims}
    extra = sorted(set(inputs) - known)
    if extra:
        raise InputError(f"unknown input(s) {', '.join(extra)}; parameters are {', '.join(sorted(known))}")


def resolve_dims(func: ir.PrimFunc, inputs: dict) -> dict:
    """Values of the symbolic dimensions: given by name in `inputs`, or read off the shapes of buffer inputs
    (an extent that is the dimension itself, or the lowered form's flat product of dimensions when the array
    has one axis per factor).  Two disagreeing sources are an `InputError` naming the dimension."""
    names = {d.name for d in func.dims}
    if not names:
        return {}
    dims: dict = {}
    for name in names:
        v = inputs.get(name)
        if v is not None and not isinstance(v, (str, np.ndarray)):
            dims[name] = int(v)
    for p in func.params:
        arr = inputs.get(p.name)
        if p.buffer is None or not isinstance(arr, np.ndarray):
            continue
        shape = p.buffer.shape
        factors = _product_of_dims(shape[0], names) if len(shape) == 1 else None
        if factors is not None and len(factors) > 1:
            pairs = zip(factors, arr.shape) if len(factors) == arr.ndim else _flat_pairs(factors, arr)
        elif arr.ndim == len(shape):
            pairs = zip(shape, arr.shape)
        else:
            continue
        for e, n in pairs:
            if isinstance(e, ir.Var) and e.name in names:
                if dims.setdefault(e.name, int(n)) != int(n):
                    raise InputError(f"dimension {e.name} is {dims[e.name]}, but input {p.name!r} has shape "
                                     f"{arr.shape} (it gives {n})")
    return dims


def _product_of_dims(e, names):
    """The factors (in order) whose product `e` is: dimensions and integer constants (the lowered form
    flattens `(n, 128)` to `n * T.int64(128)`), or None."""
    while isinstance(e, ir.Cast):
        e = e.value
    if isinstance(e, ir.Var) and e.name in names:
        return [e]
    if isinstance(e, ir.Const) and isinstance(e.value, int):
        return [e]
    if isinstance(e, ir.BinOp) and e.op == "*":
        a, b = _product_of_dims(e.a, names), _product_of_dims(e.b, names)
        return None if a is None or b is None else a + b
    return None


def _flat_pairs(factors, arr: np.ndarray) -> list:
    """A one-axis array for a product with exactly one dimension factor: that dimension is the array's
    size over the product of the constant factors (none when it does not divide)."""
    dims = [f for f in factors if isinstance(f, ir.Var)]
    const = int(np.prod([f.value for f in factors if isinstance(f, ir.Const)], dtype=np.int64))
    if arr.ndim != 1 or len(dims) != 1 or const <= 0 or arr.size % const:
        return []
    return [(dims[0], arr.size // const)]


def unbound_extent(func: ir.PrimFunc, p: ir.Param, scalars: dict) -> str:
    """Why a buffer's shape cannot be evaluated: the dimensions (or scalars) it needs that have no value."""
    assert p.buffer is not None                 # a buffer parameter always has its buffer
    need = sorted({n.name for e in p.buffer.shape for n in ir.walk(e) if isinstance(n, ir.Var)} - set(scalars))
    dims = {d.name for d in func.dims}
    parts = [f"dimension {n} (give it with --dim {n}=V, or an input array whose shape fixes it)" if n in dims
             else f"scalar {n}" for n in need]
    return f"the shape of {p.name!r} needs {', '.join(parts) or 'values that are not bound'}"


def _describe(p: ir.Param) -> str:
    if p.kind == "buffer":
        return f"{p.name} (buffer of {p.dtype})"
    if p.kind == "handle":
        return f"{p.name} (tensor map / pointer: a NumPy array)"
    return f"{p.name} ({p.dtype} scalar)"


def all_zero(value: np.ndarray) -> bool:
    """Every byte of a (C-contiguous) array is zero (-0.0 is not: its bytes are not)."""
    if not isinstance(value, np.ndarray) or value.dtype.hasobject or not value.flags.c_contiguous:
        return False          # not an array of plain values (the binding checks report what is wrong)
    return not value.reshape(-1).view(np.uint8).any()


def buffer_array(func: ir.PrimFunc, p: ir.Param, value, scalars: dict, copy: bool = True) -> np.ndarray:
    """A private copy of a buffer input, checked against the parameter's dtype and size; with `copy` False
    (a buffer the kernel only reads) a read-only view of it instead, so a write the compiler did not foresee
    fails loudly rather than changing the caller's array."""
    if not isinstance(value, np.ndarray):
        raise InputError(f"input {p.name!r} must be a NumPy array ({p.dtype}), got {type(value).__name__}")
    want = np.dtype(V.NP_DTYPE[p.dtype])
    if value.dtype != want:
        raise InputError(f"input {p.name!r} has dtype {value.dtype}, the kernel parameter is {p.dtype}")
    numel = 1
    assert p.buffer is not None                 # a buffer parameter always has its buffer
    for e in p.buffer.shape:
        v = _static(e, func.constant_values, scalars)
        if v is None:
            raise InputError(unbound_extent(func, p, scalars))
        numel *= int(v)
    if value.size != numel:
        raise InputError(f"input {p.name!r} has {value.size} elements, the kernel parameter has {numel}")
    if copy and all_zero(value):
        # fresh zeros instead of a copy: the OS maps their pages on first write, so an output buffer the
        # kernel fills sparsely costs only the pages it writes
        return np.zeros(value.size, dtype=value.dtype)
    if copy:
        return np.array(value, copy=True, order="C").reshape(-1)
    # read-only whether viewed or (not contiguous) copied: `RunInfo.unwritten` relies on a write raising
    view = value.reshape(-1).view() if value.flags.c_contiguous else np.array(value, copy=True, order="C").reshape(-1)
    view.flags.writeable = False
    return view


def default_inputs(func: ir.PrimFunc, overrides: dict | None = None, seed: int = 0,
                   max_memory_mb: float = DEFAULT_MAX_MEMORY_MB) -> dict:
    """The embedded default: zero-filled buffers with static shapes, plus any given overrides.

    `overrides` maps a parameter to an array, a scalar, or one of "zeros", "ones", "random[:seed]".
    Buffers made here are charged to a memory budget before they are allocated (`ResourceLimit`)."""
    overrides = dict(overrides or {})
    made = 0
    constants = func.constant_values
    overrides = normalize(func, overrides)
    scalars = {k: v for k, v in overrides.items() if not isinstance(v, (str, np.ndarray))}
    dims = resolve_dims(func, overrides)
    scalars.update(dims)
    out: dict = dict(dims)
    for p in func.params:
        spec = overrides.get(p.name)
        if spec is not None and not isinstance(spec, str):
            out[p.name] = spec
            continue
        if p.kind != "buffer":
            if spec is not None:
                raise InputError(f"{p.name} is a {p.kind} parameter; give it a value, not {spec!r}")
            continue
        shape: list[int] = []
        assert p.buffer is not None             # a buffer parameter always has its buffer
        for e in p.buffer.shape:
            v = _static(e, constants, scalars)
            if v is None:
                break
            shape.append(int(v))
        if len(shape) != len(p.buffer.shape):   # a dimension has no static value
            continue
        np_t = V.NP_DTYPE[p.dtype]
        if any(n < 0 for n in shape):
            raise InputError(f"the shape of {p.name!r} is {tuple(shape)}: extents cannot be negative")
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(np_t).itemsize
        made += nbytes
        if made > max_memory_mb * (1 << 20):
            raise ResourceLimit("memory", f"the default value of {p.name!r} ({p.dtype}{list(shape)}) needs "
                                          f"{megabytes(nbytes)}, past the memory budget of "
                                          f"{megabytes(int(max_memory_mb * (1 << 20)))} (raise it with --max-memory "
                                          f"MB / max_memory_mb=, or shrink the problem with --const)",
                                budget_mb=max_memory_mb, requested_bytes=nbytes)
        kind, _, arg = (spec or "zeros").partition(":")
        if kind == "zeros":
            out[p.name] = np.zeros(shape, dtype=np_t)
        elif kind == "ones":
            out[p.name] = np.ones(shape, dtype=np_t)
        elif kind == "random":
            rng = np.random.default_rng(int(arg) if arg else seed)
            if dt.is_float(p.dtype):
                out[p.name] = rng.standard_normal(shape).astype(np_t)
            elif p.dtype == "bool":
                out[p.name] = rng.integers(0, 2, shape).astype(np_t)
            else:
                lo, hi = dt.int_range(p.dtype)
                out[p.name] = rng.integers(max(lo, -1000), min(hi, 1000) + 1, shape).astype(np_t)
        else:
            raise InputError(f"unknown input spec {spec!r} for {p.name}; use zeros, ones, random[:seed] or an array")
    return out
