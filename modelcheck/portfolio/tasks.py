"""Expanding a plan into tasks, and each task's key.

A task is one check of one kernel file at one constant point with one inputs recipe.  It
carries the kernel's text and the builder's source, so a worker needs nothing from the
driver's file system, and what it checks is exactly what was hashed.  The key is the
sha256 of the kernel text, the constants, the inputs recipe (builder function and source,
specs, seed), the check (with the prove settings) and the tool version: a rerun skips a
task whose key is already recorded, and an edited kernel or builder is checked again.

`expand(plan)` parses each kernel once at its default constants to reject constant names
the kernel does not have (`PlanError` at the sweep's `constants` line); a kernel that does
not parse is left to its tasks, which record it as incomplete with the parse error.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .plan import Budget, Plan, PlanError


@dataclass(frozen=True)
class Task:
    index: int                  # position in the expanded plan (first occurrence of its key)
    key: str
    kernel: str                 # the kernel path as shown in reports (relative to the cwd when below it)
    kernel_text: str
    constants: dict             # module-constant overrides at this point
    scalars: dict               # scalar-parameter values at this point (given as constants in the plan)
    builder: str | None         # "module.py:function" as the plan wrote it
    builder_path: str | None
    builder_function: str | None
    builder_source: str | None
    inputs: dict                # parameter -> zeros|ones|random:SEED
    seed: int | None
    check: str                  # sync | race | prove
    symbolic: dict = field(default_factory=dict)     # prove: name -> (lo, hi or None)
    budget: Budget = Budget()

    def point(self) -> dict:
        """The task's identity without the kernel text, as recorded in the results."""
        out = {"kernel": self.kernel, "constants": {**self.constants, **self.scalars}, "check": self.check,
               "inputs": {"builder": self.builder, "specs": dict(self.inputs), "seed": self.seed}}
        if self.check == "prove":
            out["symbolic"] = {n: [lo, hi] for n, (lo, hi) in self.symbolic.items()}
        return out


def display_path(path: Path) -> str:
    try:
        return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:
        return str(path)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def task_key(kernel_text: str, constants: dict, inputs_recipe: dict, check: str, prove: dict | None,
             version: str) -> str:
    payload = {"kernel_sha256": _sha(kernel_text), "constants": constants, "inputs": inputs_recipe,
               "check": check, "prove": prove, "tool": f"modelcheck {version}"}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def expand(plan: Plan) -> list[Task]:
    """The plan's tasks in plan order (sweep, kernel, point, check, seed), each key once."""
    import modelcheck
    version = modelcheck.__version__
    texts: dict = {}
    signatures: dict = {}
    builders: dict = {}
    tasks: list[Task] = []
    seen: set = set()
    locate = plan.locate
    assert locate is not None                   # from_dict always sets it
    for sweep in plan.sweeps:
        keys = ("sweep", sweep.index)
        builder_src = None
        if sweep.builder is not None:
            bpath, bfunc, bref = sweep.builder
            if bpath not in builders:
                builders[bpath] = _read(bpath, locate(keys + ("inputs_builder",)))
            builder_src = builders[bpath]
            _check_builder(bpath, bfunc, builder_src, bool(sweep.seeds), locate(keys + ("inputs_builder",)))
        for kpath in sweep.kernels:
            if kpath not in texts:
                texts[kpath] = _read(kpath, locate(keys + ("kernels",)))
                signatures[kpath] = _signature(kpath, texts[kpath])
            text, sig = texts[kpath], signatures[kpath]
            shown = display_path(kpath)
            for point in sweep.points:
                consts, scalars = _split(point, sig, shown, locate(keys + ("constants",)))
                for check in sweep.checks:
                    if check == "prove":
                        _check_symbolic(sweep.symbolic, sig, shown, locate(keys + ("prove", "symbolic")))
                    for seed in (sweep.seeds or (None,)):
                        specs = {n: (f"random:{seed}" if s == "random" and seed is not None else s)
                                 for n, s in sorted(sweep.inputs.items())}
                        c = dict(sorted(consts.items()))
                        prove = None
                        if check == "prove":
                            c = {n: v for n, v in c.items() if n not in sweep.symbolic}
                            prove = {"symbolic": {n: list(r) for n, r in sorted(sweep.symbolic.items())}}
                        recipe = {"builder": None if sweep.builder is None or builder_src is None else
                                  {"function": sweep.builder[1], "source_sha256": _sha(builder_src)},
                                  "specs": specs, "seed": seed, "scalars": dict(sorted(scalars.items()))}
                        key = task_key(text, c, recipe, check, prove, version)
                        if key in seen:
                            continue
                        seen.add(key)
                        tasks.append(Task(
                            index=len(tasks), key=key, kernel=shown, kernel_text=text, constants=c,
                            scalars=dict(sorted(scalars.items())),
                            builder=None if sweep.builder is None else sweep.builder[2],
                            builder_path=None if sweep.builder is None else str(sweep.builder[0]),
                            builder_function=None if sweep.builder is None else sweep.builder[1],
                            builder_source=builder_src, inputs=specs, seed=seed, check=check,
                            symbolic=dict(sweep.symbolic) if check == "prove" else {},
                            budget=sweep.budget))
    return tasks


def _read(path: Path, where: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PlanError(f"{where}cannot read {path}: {getattr(err, 'strerror', None) or err}") from None


def _signature(path: Path, text: str):
    """(module constants, scalar parameters) of the kernel at its defaults, or None when it does not parse."""
    import ir
    try:
        func = ir.parse(text, str(path))
    except Exception:                # noqa: BLE001 -- any failure is recorded by the kernel's tasks
        return None
    return ({c.name for c in func.constants}, {p.name for p in func.params if p.kind == "scalar"})


def _split(point: dict, sig, shown: str, where: str) -> tuple[dict, dict]:
    if sig is None:
        return dict(point), {}
    names, scalars = sig
    unknown = sorted(set(point) - names - scalars)
    if unknown:
        raise PlanError(f"{where}constant {', '.join(unknown)}: not a module constant or scalar parameter of "
                        f"{shown} (constants: {', '.join(sorted(names)) or 'none'}; scalar parameters: "
                        f"{', '.join(sorted(scalars)) or 'none'})")
    return ({k: v for k, v in point.items() if k in names}, {k: v for k, v in point.items() if k in scalars})


def _check_symbolic(symbolic: dict, sig, shown: str, where: str) -> None:
    if sig is None:
        return
    unknown = sorted(set(symbolic) - sig[0])
    if unknown:
        raise PlanError(f"{where}prove.symbolic {', '.join(unknown)}: not a module constant of {shown} "
                        f"(constants: {', '.join(sorted(sig[0])) or 'none'})")


def _check_builder(path: Path, function: str, source: str, seeded: bool, where: str) -> None:
    """The builder module runs once here, so a missing function or a module that fails to import is a plan
    error now rather than an incomplete record for every task."""
    import inspect

    from .worker import load_builder
    try:
        fn = load_builder(str(path), function, source)
    except Exception as err:         # noqa: BLE001 -- user code: any exception is the user's error
        raise PlanError(f"{where}inputs_builder {path.name}:{function}: {type(err).__name__}: {err}") from None
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    if seeded and "seed" not in params and not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        raise PlanError(f"{where}inputs_builder {path.name}:{function} takes no seed parameter, but the sweep "
                        f"gives seeds (the builder is called as {function}(constants, seed=SEED))")
