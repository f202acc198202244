"""Inputs from the shell: `--const`, `--input NAME=SPEC`, `--inputs FILE.npz|builder.py:function`.

`InputPlan` collects the options, builds the inputs of a kernel at given constants (the same
dict the Python API would take) and says where each input came from, for the report:

- `--inputs builder.py:function` calls `function(constants)` (the kernel's module constants
  after `--const`), which returns a dict of arrays, TensorMaps, scalars or specs -- the form
  of `kernels/inputs/*.py`; `--inputs FILE.npz` gives arrays by parameter name;
- `--input NAME=zeros|ones|random[:seed]|FILE.npy|FILE.npz[:KEY]` sets one parameter
  (a later option overrides an earlier one); bf16 and fp8 arrays saved with `np.save` come
  back as raw bytes (`|V2`, `|V1`) and are viewed as the parameter's type;
- a tensor-map descriptor that lost its base (loaded from a file) is bound to the buffer
  parameter whose data it snapshots -- the unique buffer of its element type, size and bytes,
  or the one named by `--input tmap=FILE.npy@BUFFER` -- so TMA stores write the very buffer
  the outputs show, as they do when the same descriptor is built in Python.
"""
from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

import ir
from ir.errors import UsageError

from .. import numsim

SPECS = ("zeros", "ones", "random")
_EXPECTED = "zeros, ones, random[:seed], FILE.npy or FILE.npz[:KEY]"


def _var_names(e) -> set[str]:
    """Names of the variables in an extent expression (`n`, `num_heads_kv * nnz`)."""
    return {n.name for n in ir.walk(e) if isinstance(n, ir.Var)}


def parse_consts(pairs, option: str = "--const") -> dict:
    out: dict[str, int | float] = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"{option} expects NAME=VALUE, got {pair!r}")
        try:
            out[name] = int(value, 0)
        except ValueError:
            try:
                out[name] = float(value)
            except ValueError:
                raise UsageError(f"{option} {name}: {value!r} is not a number") from None
    return out


def split_consts(func: ir.PrimFunc, consts: dict, dims: dict | None = None) -> tuple[dict, dict]:
    """--const values: (module constants, scalar parameters and symbolic dimensions -- the latter also from
    --dim); an unknown name is a usage error."""
    names = {c.name for c in func.constants}
    scalars = {p.name for p in func.params if p.kind == "scalar"}
    symbolic = {d.name for d in func.dims}
    bad = sorted(set(dims or {}) - symbolic)
    if bad:
        raise UsageError(f"--dim {', '.join(bad)}: not a symbolic dimension of {func.name} "
                         f"(its dimensions: {', '.join(sorted(symbolic)) or 'none'})")
    unknown = sorted(set(consts) - names - scalars - symbolic)
    if unknown:
        raise UsageError(f"--const {', '.join(unknown)}: not a module constant, scalar parameter or dimension of "
                         f"{func.name} (constants: {', '.join(sorted(names)) or 'none'}; scalar parameters: "
                         f"{', '.join(sorted(scalars)) or 'none'}; dimensions: "
                         f"{', '.join(sorted(symbolic)) or 'none'})")
    values = {k: v for k, v in consts.items() if k in scalars or k in symbolic}
    values.update(dims or {})
    return {k: v for k, v in consts.items() if k in names}, values


@dataclass
class _Option:
    """One --input NAME=... or --inputs ... as given."""

    option: str                 # "--input" | "--inputs"
    text: str
    name: str | None = None     # --input: the parameter
    value: object = None        # a spec string, an array, a builder callable, a dict of arrays
    label: str = ""             # where it came from, for the report
    bind_to: str | None = None  # --input tmap=FILE@BUFFER


@dataclass
class InputPlan:
    """The input options of one command line, applied to a kernel at given constants."""

    options: list = field(default_factory=list)
    scalars: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)     # parameter -> where its value came from (after build)

    @classmethod
    def from_args(cls, args, scalars: dict | None = None) -> "InputPlan":
        plan = cls(scalars=dict(scalars or {}))
        for text in getattr(args, "inputs", None) or ():
            plan.options.append(_inputs_option(text))
        for text in getattr(args, "input", None) or ():
            plan.options.append(_input_option(text))
        return plan

    def files(self) -> list[str]:
        """The files these options read (an output may never overwrite one)."""
        out = []
        for o in self.options:
            path = o.text.partition("=")[2] if o.option == "--input" else o.text
            path = path.rpartition("@")[0] if o.bind_to else path
            if o.option == "--inputs" and ".py:" in path:
                path = path.rpartition(":")[0]
            elif ".npz:" in path:
                path = path.rpartition(":")[0]
            out.append(path)
        return out

    def overrides(self, func: ir.PrimFunc) -> dict:
        """Parameter -> value from the options, in order (later options override earlier ones)."""
        import numpy as np
        params = {p.name: p for p in func.params}
        out: dict = {}
        self.sources = {}
        for o in self.options:
            if o.option == "--inputs":
                values = o.value(dict(func.constant_values)) if callable(o.value) else o.value
                values = _builder_result(values, o)
                unknown = sorted(set(values) - set(params) - {d.name for d in func.dims})
                if unknown:
                    raise UsageError(f"--inputs {o.text}: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} "
                                     f"not a parameter of {func.name} (parameters: {', '.join(params)})")
                for name, v in values.items():
                    out[name] = _as_param_value(func, params.get(name), v, f"--inputs {o.text} ({name})")
                    self.sources[name] = o.label
            else:
                if o.name not in params:
                    raise UsageError(f"--input {o.text}: {o.name!r} is not a parameter of {func.name} "
                                     f"(parameters: {', '.join(params)})")
                value = o.value
                label = o.label
                if isinstance(value, np.ndarray):
                    value = _as_param_value(func, params[o.name], value, f"--input {o.text}")
                    label = f"{label} ({_shape(value)})"
                out[o.name] = value
                self.sources[o.name] = label
        for name, v in self.scalars.items():
            out[name] = v
            self.sources[name] = f"--const {name}={v}"
        return out

    def build(self, func: ir.PrimFunc, max_memory_mb: float = numsim.budget.DEFAULT_MAX_MEMORY_MB) -> dict:
        """The inputs of `func`: the options' values, every other static-shape buffer zero-filled, tensor-map
        descriptors from files bound to the buffer they describe."""
        overrides = self.overrides(func)
        inputs = numsim.default_inputs(func, overrides, max_memory_mb=max_memory_mb)
        unbound = [d.name for d in func.dims if d.name not in inputs]
        if unbound:
            users = sorted({p.name for p in func.params if p.buffer is not None
                            and any(d in _var_names(e) for e in p.buffer.shape for d in unbound)})
            raise UsageError(f"symbolic dimension(s) {', '.join(unbound)} of {func.name} have no value"
                             f"{' (extents of ' + ', '.join(users) + ')' if users else ''}: pass --dim "
                             f"{unbound[0]}=VALUE, or the array{'s' if len(users) > 1 else ''} with --input "
                             f"NAME=FILE.npy")
        for p in func.params:
            if p.name in inputs and p.name not in self.sources:
                self.sources[p.name] = "zeros (default)" if p.kind == "buffer" else "given"
        binds = {o.name: o.bind_to for o in self.options if o.bind_to}
        for p in func.params:
            if p.kind == "handle" and p.name in inputs:
                inputs[p.name] = self._bind_map(func, p.name, inputs, binds.get(p.name))
        return inputs

    def _bind_map(self, func, name: str, inputs: dict, bind_to: str | None):
        import numpy as np

        from ..numsim import tensormap as tm
        arr = inputs[name]
        if isinstance(arr, numsim.TensorMap):
            arr = arr.numpy()
        if not isinstance(arr, np.ndarray):
            return arr
        try:
            f = tm.decode(arr)
        except numsim.TensorMapError:
            return arr          # not a descriptor: the engine reports it at the first TMA op that uses it
        if getattr(arr, "tensor_base", None) is not None and bind_to is None:
            return arr          # built in this process: its base is live
        buffers = {p.name: inputs[p.name] for p in func.params
                   if p.kind == "buffer" and isinstance(inputs.get(p.name), np.ndarray)}
        if bind_to is not None:
            if bind_to not in buffers:
                raise UsageError(f"--input {name}=...@{bind_to}: {bind_to!r} is not a buffer parameter of "
                                 f"{func.name} (buffers: {', '.join(buffers) or 'none'})")
            target = buffers[bind_to]
            if target.nbytes < f.base_nbytes:
                raise UsageError(f"--input {name}=...@{bind_to}: the map spans {f.base_nbytes} bytes, {bind_to} "
                                 f"has {target.nbytes}")
            self.sources[name] += f", bound to {bind_to}"
            return tm.rebind(arr, np.ascontiguousarray(target))
        data = tm.payload(arr, f.base_nbytes)
        same_shape = [b for b, v in buffers.items() if v.nbytes == f.base_nbytes and v.dtype.name == f.dtype]
        same_data = [b for b in same_shape if np.array_equal(buffers[b].reshape(-1).view(np.uint8), data)]
        if len(same_data) == 1:
            self.sources[name] += f", bound to {same_data[0]}"
            return tm.rebind(arr, buffers[same_data[0]])
        if len(same_data) > 1:
            raise UsageError(f"--input {name}: the tensor map's data matches several buffers ({', '.join(same_data)}); "
                             f"say which it describes with --input {name}=FILE.npy@BUFFER")
        # data no buffer parameter holds (an operand only the map reaches): the engine gives it an allocation
        self.sources[name] += (", its own copy of the data (no buffer parameter holds it"
                               + (f"; bind it with @BUFFER if it describes {' or '.join(same_shape)})" if same_shape
                                  else ")"))
        return arr

    def describe(self) -> dict:
        return dict(self.sources)

    def for_constants(self, kernel_path: str, max_memory_mb: float):
        """inputs(constants) -> the inputs at those constants (for `prove`, whose sizes change)."""
        cache: dict = {}

        def at(consts: dict) -> dict:
            key = tuple(sorted(consts.items()))
            if key not in cache:
                cache[key] = self.build(ir.parse_file(kernel_path, **consts), max_memory_mb)
            return cache[key]
        return at


def _input_option(text: str) -> _Option:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise UsageError(f"--input expects NAME={_EXPECTED.replace(', ', '|').replace(' or ', '|')}, got {text!r}")
    kind = value.partition(":")[0]
    if kind in SPECS:
        arg = value.partition(":")[2]
        if kind != "random" and arg or kind == "random" and arg and not arg.isdigit():
            raise UsageError(f"--input {text}: expected {_EXPECTED}")
        return _Option("--input", text, name, value, value)
    bind_to = None
    head, at, tail = value.rpartition("@")
    if at and tail.isidentifier() and head.endswith((".npy", ".npz")) or at and ".npz:" in head and tail.isidentifier():
        value, bind_to = head, tail
    if value.endswith(".npy"):
        arr = _load_npy(value, f"--input {text}")
        return _Option("--input", text, name, arr, value, bind_to)
    path, colon, key = value.partition(".npz")
    if colon and (not key or key.startswith(":")):
        path = path + ".npz"
        explicit = bool(key)
        key = key[1:] or name
        arr = _load_npz_key(path, key, f"--input {text}", explicit)
        return _Option("--input", text, name, arr, f"{path}[{key}]", bind_to)
    raise UsageError(f"--input {text}: expected {_EXPECTED} after {name}=")


def _inputs_option(text: str) -> _Option:
    if text.endswith(".npz"):
        import numpy as np
        try:
            with np.load(_existing(text, f"--inputs {text}"), allow_pickle=False) as data:
                values = {k: data[k] for k in data.files}
        except (OSError, ValueError) as err:
            raise UsageError(f"--inputs {text}: not a readable .npz archive ({err})") from None
        return _Option("--inputs", text, None, values, text)
    path, colon, function = text.rpartition(":")
    if not colon or not path.endswith(".py") or not function.isidentifier():
        raise UsageError(f"--inputs {text}: expected FILE.npz (arrays by parameter name) or BUILDER.py:FUNCTION "
                         f"(a function of the kernel's constants returning a dict of inputs)")
    return _Option("--inputs", text, None, load_builder(path, function), f"{path}:{function}(constants)")


def load_builder(path: str, function: str):
    """`function` of the Python file `path` (e.g. kernels/inputs/kda.py:kda_fwd)."""
    file = Path(_existing(path, f"--inputs {path}:{function}"))
    spec = importlib.util.spec_from_file_location(f"_modelcheck_inputs_{file.stem}", file)
    if spec is None or spec.loader is None:     # no loader for the file's suffix (not a .py file)
        raise UsageError(f"--inputs {path}:{function}: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent))       # the builder may import its neighbours
    try:
        spec.loader.exec_module(module)
    except Exception as err:   # noqa: BLE001 - the user's file: say where it failed, in one line
        raise UsageError(f"--inputs {path}:{function}: importing {path} failed: {_where(err, file)}"
                         f"{type(err).__name__}: {err}") from None
    finally:
        sys.path.remove(str(file.parent))
    fn = getattr(module, function, None)
    if not callable(fn):
        found = sorted(n for n, v in vars(module).items() if callable(v) and getattr(v, "__module__", "") ==
                       module.__name__ and not n.startswith("_"))
        raise UsageError(f"--inputs {path}:{function}: {path} defines no function {function!r} (its functions: "
                         f"{', '.join(found) or 'none'})")

    def call(consts: dict):
        try:
            return fn(consts)
        except Exception as err:   # noqa: BLE001 - the user's builder
            raise UsageError(f"--inputs {path}:{function}: the builder raised {_where(err, file)}"
                             f"{type(err).__name__}: {err}") from None
    return call


def _where(err: BaseException, file: Path) -> str:
    """'at FILE:LINE: ' of the deepest frame of the traceback in `file` (or a SyntaxError's place)."""
    if isinstance(err, SyntaxError) and err.lineno:
        return f"at {file}:{err.lineno}:{err.offset or 1}: "
    tb, line = err.__traceback__, None
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"at {file}:{line}: " if line else ""


def _builder_result(values, o: _Option) -> dict:
    if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
        raise UsageError(f"--inputs {o.text}: the builder must return a dict of parameter name -> array, "
                         f"TensorMap, scalar or spec, got {type(values).__name__}")
    return values


def _existing(path: str, option: str) -> str:
    if not Path(path).is_file():
        raise UsageError(f"{option}: no such file {path!r}")
    return path


def _load_npy(path: str, option: str):
    import numpy as np
    try:
        return np.load(_existing(path, option), allow_pickle=False)
    except (OSError, ValueError) as err:
        raise UsageError(f"{option}: {path} is not a readable .npy file ({err})") from None


def _load_npz_key(path: str, key: str, option: str, explicit: bool):
    import numpy as np
    try:
        with np.load(_existing(path, option), allow_pickle=False) as data:
            if key in data.files:
                return data[key]
            if len(data.files) == 1 and not explicit:
                return data[data.files[0]]
            raise UsageError(f"{option}: {path} has no array {key!r} (arrays: {', '.join(data.files)}); "
                             f"pick one with FILE.npz:KEY")
    except (OSError, ValueError) as err:
        raise UsageError(f"{option}: {path} is not a readable .npz archive ({err})") from None


def _shape(arr) -> str:
    return f"{arr.dtype.name if arr.dtype.kind != 'V' else arr.dtype}{list(arr.shape)}"


def _as_param_value(func: ir.PrimFunc, p, value, option: str):
    """An array for parameter `p`: bf16/fp8 bytes saved by np.save (void dtypes) viewed as the parameter's
    type; another dtype than the parameter's is a usage error naming the option."""
    import numpy as np

    from ..numsim.values import NP_DTYPE
    if isinstance(value, numsim.TensorMap):
        return value.numpy()
    if p is None or p.kind != "buffer" or not isinstance(value, np.ndarray):
        return value
    want = np.dtype(NP_DTYPE[p.dtype])
    if value.dtype == want:
        return value
    if value.dtype.kind == "V" and value.dtype.itemsize == want.itemsize:
        return value.view(want)
    raise UsageError(f"{option}: the array is {value.dtype}, parameter {p.name} is {p.dtype}; save it as "
                     f"{want.name} (e.g. arr.astype(ml_dtypes.{want.name}) or np.{want.name})")
