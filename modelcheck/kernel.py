"""Loading kernels: files, text, and objects with `.script()` (a tvm_tirx function)."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import ir
from ir.errors import UsageError


@dataclass(frozen=True)
class Kernel:
    """A parsed kernel file: `func` is the `ir.PrimFunc`; `constants` the values it was built with."""

    func: ir.PrimFunc
    path: str
    overrides: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.func.name

    @property
    def constants(self) -> dict[str, int]:
        return self.func.constant_values

    def script(self) -> str:
        return ir.print_func(self.func)


def load(path: str | Path, *, kernel_name: str | None = None, **consts) -> Kernel:
    """Parse a kernel file, overriding module constants by keyword (`load(p, T=320, H=1)`); a file with
    several kernels needs `kernel_name`."""
    return Kernel(ir.parse_file(path, kernel_name=kernel_name, **consts), str(path), dict(consts))


# `package.module:NAME` (NAME optional): a kernel in an importable Python module
_MODULE_TARGET = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)?$")


def is_module_target(target: str) -> bool:
    """`pkg.mod:NAME` names a kernel in a Python module, unless a file of that name exists."""
    return bool(_MODULE_TARGET.match(target)) and not Path(target).exists()


def parse_config(items: list[str]) -> dict:
    """`--config key=value` pairs: each value a Python literal (`128`, `'bfloat16'`, `True`, `(1, 2)`), else the
    bare text as a string."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--config {item!r}: expected KEY=VALUE (e.g. --config hidden_size=128)")
        try:
            out[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[key] = text
    return out


def load_module(target: str, *, kernel_name: str | None = None, config: dict | None = None) -> Kernel:
    """The kernel `pkg.mod:NAME` names, built by the real compiler: this imports the module, so it runs the
    user's Python.  NAME may be a kernel object (a PrimFunc, an IRModule, a kernel with `.func`) or a factory
    called with the configuration.  A module that follows the kernel-library protocol (`get_kernel(**config)`,
    `CONFIGS`, `KERNEL_META`, as tirx-kernels' modules do) needs no NAME, or NAME is the function that
    `get_kernel` returns (one of several); its first configuration is the default that `--config` overrides."""
    match = _MODULE_TARGET.match(target)
    if match is None:
        raise UsageError(f"{target!r} is not a kernel file or a `package.module:NAME` target")
    modname, attr = match.group(1), match.group(2)
    meta = _library_module_meta(modname)
    if meta:   # CPU-side settings the library reads when no GPU is present
        os.environ.setdefault("TIRX_PREPARE_CUDA_ARCH", meta[0])
        os.environ.setdefault("TIRX_PREPARE_NUM_SMS", "148")
    try:
        module = importlib.import_module(modname)
    except ImportError as err:
        raise UsageError(f"cannot import {modname} for {target}: {err}; install the package that provides it in "
                         f"this environment") from err
    config = dict(config or {})
    obj = getattr(module, attr, None) if attr else None
    if obj is None:
        factory = getattr(module, "get_kernel", None)
        if factory is None:
            what = f"no attribute {attr!r}" if attr else "no NAME after the colon and no get_kernel()"
            raise UsageError(f"{target}: module {modname} has {what}; name a kernel object or factory")
        # the library protocol: its first configuration is the default, `--config` overrides keys of it
        defaults = dict(module.CONFIGS[0]) if getattr(module, "CONFIGS", None) else {}
        defaults.pop("label", None)
        config = {**defaults, **config}
        obj, kernel_name = _call(factory, config, target), kernel_name or attr
    elif callable(obj) and not _is_kernel_object(obj):
        obj = _call(obj, config, target)
    func = ir.as_func(_single(obj, kernel_name, target), kernel_name=kernel_name)
    return Kernel(func, target, dict(config))


def _library_module_meta(modname: str) -> list[str]:
    """The runtime CUDA archs a kernel-library module declares, read without importing it (the module may
    need them set before import)."""
    try:
        spec = importlib.util.find_spec(modname)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return []
    text = Path(spec.origin).read_text(errors="replace")
    found = re.search(r'"runtime_cuda_archs"\s*:\s*\[([^\]]*)\]', text)
    return re.findall(r'"(sm_\w+)"', found.group(1)) if found else []


def _is_kernel_object(obj) -> bool:
    return callable(getattr(obj, "script", None)) or hasattr(obj, "func")


def _call(factory, config: dict, target: str):
    try:
        return factory(**config)
    except TypeError as err:
        raise UsageError(f"{target}: calling {getattr(factory, '__name__', 'the factory')}(**config) failed: {err}; "
                         f"give its parameters with --config KEY=VALUE") from err


def _single(obj, kernel_name: str | None, target: str):
    """One kernel of what a factory returned: a list/tuple/dict of kernels is searched for `kernel_name`."""
    if isinstance(obj, (list, tuple, dict)):
        items = list(obj.values()) if isinstance(obj, dict) else list(obj)
        flat = [x for x in items if _is_kernel_object(x)]
        if kernel_name:
            named = [x for x in flat if _kernel_name(x) == kernel_name]
            if named:
                return named[0]
        if len(flat) == 1:
            return flat[0]
        names = ", ".join(sorted(filter(None, (_kernel_name(x) for x in flat))))
        raise UsageError(f"{target} gives {len(flat)} kernels ({names}); pick one with {target.split(':')[0]}:NAME")
    return obj


def _kernel_name(obj) -> str | None:
    func = getattr(obj, "func", obj)
    attrs = getattr(func, "attrs", None)
    try:
        symbol = attrs.get("global_symbol") if attrs is not None else None
    except Exception:   # noqa: BLE001 -- attrs of a foreign object
        symbol = None
    return str(symbol) if symbol else getattr(obj, "__name__", None)


def parse(text: str, path: str = "<string>", **consts) -> ir.PrimFunc:
    """Parse kernel text into an `ir.PrimFunc`."""
    return ir.parse(text, path, **consts)


as_func = ir.as_func
