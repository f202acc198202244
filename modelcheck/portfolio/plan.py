"""Batch plans: TOML (or YAML) files that name kernels, constant grids, inputs and checks.

`load(path)` reads a plan file and `from_dict(data, base)` takes the same structure as a
dict; both validate every field and raise `PlanError` with `file:line` where the line
can be found.  The result is a `Plan`: budgets, where results and reports go, and the
sweeps.  `expand(plan)` (in `tasks`) turns it into tasks.  See docs/batch.md for the format.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CHECKS = ("sync", "race", "prove")
SPEC = re.compile(r"^(zeros|ones|random(:\d+)?)$")
DEFAULT_SECONDS = 60.0          # the checkers' own defaults (numsim.budget), so a batch judges as `modelcheck check`
DEFAULT_MEMORY_MB = 2048
_TOP_KEYS = {"results", "output", "budget", "sweep"}
_SWEEP_KEYS = {"kernels", "checks", "constants", "inputs_builder", "inputs", "seeds", "prove", "budget"}
_BUDGET_KEYS = {"seconds", "memory_mb"}
_PROVE_KEYS = {"symbolic"}


class PlanError(ValueError):
    """A plan that cannot be read or does not follow the format; the message starts with file:line."""


@dataclass(frozen=True)
class Budget:
    """Per task, each a soft limit (the checkers' own `max_seconds` / `max_memory_mb`, which end in an
    incomplete verdict) with a hard one behind it on the worker: the process is killed at `kill_after`
    seconds, and its address space may grow by at most `address_space_mb` (0: no memory bound)."""

    seconds: float = DEFAULT_SECONDS
    memory_mb: int = DEFAULT_MEMORY_MB

    @property
    def kill_after(self) -> float:
        """The budget plus 20 % (at least 1 s, at most 30 s) for a checker to stop by itself."""
        return self.seconds + max(1.0, min(30.0, 0.2 * self.seconds))

    @property
    def address_space_mb(self) -> int:
        """The budget plus 25 % (at least 512 MB): address space counts reserved memory, not only used."""
        return self.memory_mb + max(512, self.memory_mb // 4) if self.memory_mb else 0


@dataclass(frozen=True)
class Sweep:
    index: int                      # 0-based position in the plan
    kernels: tuple                  # resolved kernel paths, in pattern order, without repeats
    checks: tuple
    points: tuple                   # constant points: tuple of dicts
    builder: tuple | None           # (resolved path, function name, as written)
    inputs: dict
    seeds: tuple                    # () when the plan gives none
    symbolic: dict                  # prove: name -> (lo, hi or None)
    budget: Budget


@dataclass(frozen=True)
class Plan:
    path: str                       # the plan file ("<dict>" for a plan given as data)
    base: Path                      # relative paths are relative to this folder
    results: Path | None
    output: Path | None
    budget: Budget
    sweeps: tuple = field(default_factory=tuple)
    locate: Callable[[tuple], str] | None = None    # (key path) -> "file:line: " prefix for later errors


def load(path: str | Path) -> Plan:
    """Read and validate a plan file (.toml; .yaml/.yml when PyYAML is installed)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise PlanError(f"{path}: cannot read the plan: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise PlanError(f"{path}: the plan is not UTF-8 text") from None
    suffix = path.suffix.lower()
    if suffix == ".toml":
        data, locate = _read_toml(path, text)
    elif suffix in (".yaml", ".yml"):
        data, locate = _read_yaml(path, text)
    else:
        raise PlanError(f"{path}: a plan is a .toml file (or .yaml/.yml with PyYAML installed), not "
                        f"{suffix or 'a file without extension'!r}")
    return from_dict(data, path.parent, str(path), locate)


def from_dict(data: dict, base: str | Path = ".", name: str = "<dict>", locate=None) -> Plan:
    """Validate a plan given as data; relative paths are relative to `base`."""
    base = Path(base).resolve()
    loc = locate or (lambda keys: f"{name}: ")
    if not isinstance(data, dict):
        raise PlanError(f"{loc(())}a plan is a table of keys (results, output, budget, sweep)")
    _unknown(data, _TOP_KEYS, (), loc, "the plan")
    budget = _budget(data.get("budget", {}), Budget(), ("budget",), loc)
    results = _path_value(data, "results", base, loc)
    output = _path_value(data, "output", base, loc)
    sweeps = data.get("sweep")
    if sweeps is None:
        raise PlanError(f"{loc(())}the plan has no sweep: add at least one [[sweep]] with kernels = [...]")
    if isinstance(sweeps, dict):
        sweeps = [sweeps]
    if not isinstance(sweeps, list) or not all(isinstance(s, dict) for s in sweeps):
        raise PlanError(f"{loc(('sweep',))}sweep must be a list of tables ([[sweep]] in TOML)")
    plan_sweeps = tuple(_sweep(s, k, base, budget, loc) for k, s in enumerate(sweeps))
    return Plan(name, base, results, output, budget, plan_sweeps, loc)


# --- reading files ----------------------------------------------------------------------------


def _read_toml(path: Path, text: str):
    try:
        import tomllib
    except ModuleNotFoundError:        # Python 3.10: the tomli backport has the same interface
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise PlanError(f"{path}: reading TOML plans needs Python 3.11 or the tomli package "
                            f"(pip install tomli)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        if m:
            msg = msg[:m.start()].rstrip()
            raise PlanError(f"{path}:{m.group(1)}:{m.group(2)}: invalid TOML: {msg}") from None
        if msg.endswith("(at end of document)"):
            msg = msg[:-len("(at end of document)")].rstrip()
            raise PlanError(f"{path}:{max(1, len(text.splitlines()))}: invalid TOML: {msg} (at the end of the file)") \
                from None
        raise PlanError(f"{path}: invalid TOML: {msg}") from None
    return data, _TomlLocator(path, text)


def _read_yaml(path: Path, text: str):
    try:
        import yaml
    except ImportError:
        raise PlanError(f"{path}: YAML plans need PyYAML (pip install pyyaml); or write the plan as TOML") from None
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(err, "problem", None) or str(err)
        raise PlanError(f"{where}: invalid YAML: {problem}") from None
    return data if data is not None else {}, _YamlLocator(path, root)


class _TomlLocator:
    """The line of a key path in TOML text, found by scanning the headers and `key =` lines
    (tomllib keeps no positions); falls back to the enclosing table's header."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.splitlines()

    def __call__(self, keys: tuple) -> str:
        line = self._line(keys)
        return f"{self.path}:{line}: " if line else f"{self.path}: "

    def _line(self, keys: tuple) -> int | None:
        lines = self.lines
        lo, hi, found, rest = 0, len(lines), None, keys
        if keys[:1] == ("sweep",):
            headers = [i for i, t in enumerate(lines) if re.match(r"^\s*\[\[\s*sweep\s*\]\]", t)]
            if len(keys) == 1 or not headers or keys[1] >= len(headers):
                return headers[0] + 1 if headers else None
            lo = headers[keys[1]]
            hi = headers[keys[1] + 1] if keys[1] + 1 < len(headers) else len(lines)
            found, rest = lo + 1, keys[2:]
        for name in rest:
            if not isinstance(name, str):
                continue          # a position in a list: the names after it are searched from here
            key = re.escape(name)
            hit = next((i for i in range(lo, hi)
                        if re.match(rf"^\s*(\"?){key}\1\s*=", lines[i])
                        or re.match(rf"^\s*\[[^\[\]]*\b{key}\s*\]\s*(#.*)?$", lines[i])), None)
            if hit is None:
                break
            found, lo = hit + 1, hit
        return found


class _YamlLocator:
    def __init__(self, path: Path, root):
        self.path = path
        self.root = root

    def __call__(self, keys: tuple) -> str:
        node, line = self.root, None
        if node is not None:
            line = node.start_mark.line + 1
        for key in keys:
            nxt = None
            if node is not None and node.id == "mapping":
                nxt = next((v for k, v in node.value if k.value == key), None)
                if nxt is not None:
                    key_node = next(k for k, v in node.value if k.value == key)
                    line = key_node.start_mark.line + 1
            elif node is not None and node.id == "sequence" and isinstance(key, int) and key < len(node.value):
                nxt = node.value[key]
                line = nxt.start_mark.line + 1
            if nxt is None:
                break
            node = nxt
        return f"{self.path}:{line}: " if line else f"{self.path}: "


# --- validation -------------------------------------------------------------------------------


def _unknown(table: dict, allowed: set, keys: tuple, loc, what: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise PlanError(f"{loc(keys + (extra[0],))}{what}: unknown key {extra[0]!r} "
                        f"(known: {', '.join(sorted(allowed))})")


def _path_value(data: dict, key: str, base: Path, loc) -> Path | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise PlanError(f"{loc((key,))}{key} must be a path (a string), got {value!r}")
    return (base / value).resolve()


def _budget(table, default: Budget, keys: tuple, loc) -> Budget:
    if not isinstance(table, dict):
        raise PlanError(f"{loc(keys)}budget must be a table with seconds and/or memory_mb")
    _unknown(table, _BUDGET_KEYS, keys, loc, "budget")
    seconds = table.get("seconds", default.seconds)
    memory = table.get("memory_mb", default.memory_mb)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise PlanError(f"{loc(keys + ('seconds',))}budget.seconds must be a positive number, got {seconds!r}")
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 0:
        raise PlanError(f"{loc(keys + ('memory_mb',))}budget.memory_mb must be a whole number of MB "
                        f"(0: no limit), got {memory!r}")
    return Budget(float(seconds), memory)


def _strings(value, keys: tuple, loc, what: str) -> list:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise PlanError(f"{loc(keys)}{what} must be a string or a non-empty list of strings, got {value!r}")
    return value


def _sweep(table: dict, k: int, base: Path, budget: Budget, loc) -> Sweep:
    keys = ("sweep", k)
    label = f"sweep {k + 1}"
    _unknown(table, _SWEEP_KEYS, keys, loc, label)
    if "kernels" not in table:
        raise PlanError(f"{loc(keys)}{label}: kernels is required (a glob or a list of globs, relative to the plan)")
    kernels = _kernels(_strings(table["kernels"], keys + ("kernels",), loc, f"{label}: kernels"), base,
                       keys + ("kernels",), loc, label)
    named = _strings(table.get("checks", ["sync", "race"]), keys + ("checks",), loc, f"{label}: checks")
    for c in named:
        if c not in CHECKS:
            raise PlanError(f"{loc(keys + ('checks',))}{label}: unknown check {c!r}; choose from {', '.join(CHECKS)}")
    checks = tuple(dict.fromkeys(named))
    points = _points(table.get("constants", {}), keys + ("constants",), loc, label)
    builder = None
    if "inputs_builder" in table:
        builder = _builder_ref(table["inputs_builder"], base, keys + ("inputs_builder",), loc, label)
    inputs = table.get("inputs", {})
    if not isinstance(inputs, dict):
        raise PlanError(f"{loc(keys + ('inputs',))}{label}: inputs must be a table NAME = \"zeros|ones|random[:seed]\"")
    for name, spec in inputs.items():
        if not isinstance(spec, str) or not SPEC.match(spec):
            raise PlanError(f"{loc(keys + ('inputs', name))}{label}: input {name} = {spec!r}: expected zeros, ones, "
                            f"random or random:SEED (inputs a spec cannot express come from an inputs_builder)")
    seeds = table.get("seeds", [])
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if not isinstance(seeds, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                              for s in seeds):
        raise PlanError(f"{loc(keys + ('seeds',))}{label}: seeds must be a list of non-negative integers, "
                        f"got {seeds!r}")
    if seeds and builder is None and "random" not in inputs.values():
        raise PlanError(f"{loc(keys + ('seeds',))}{label}: seeds are given but nothing uses them: they go to the "
                        f"inputs_builder (as seed=) and to inputs given as bare \"random\"")
    symbolic = {}
    if "prove" in table:
        symbolic = _prove(table["prove"], keys + ("prove",), loc, label)
    if "prove" in checks and not symbolic:
        raise PlanError(f"{loc(keys + ('checks',))}{label}: the prove check needs prove.symbolic: the constants to "
                        f"leave symbolic, e.g. prove = {{ symbolic = {{ ROUNDS = \"1..\" }} }}")
    if symbolic and "prove" not in checks:
        raise PlanError(f"{loc(keys + ('prove',))}{label}: prove settings are given but checks does not list \"prove\"")
    sweep_budget = _budget(table["budget"], budget, keys + ("budget",), loc) if "budget" in table else budget
    return Sweep(k, tuple(kernels), checks, tuple(points), builder, dict(inputs), tuple(dict.fromkeys(seeds)),
                 symbolic, sweep_budget)


def _kernels(patterns: list, base: Path, keys: tuple, loc, label: str) -> list:
    import glob
    out: dict = {}
    for pattern in patterns:
        full = pattern if Path(pattern).is_absolute() else str(base / pattern)
        matches = sorted(p for p in glob.glob(full, recursive=True) if Path(p).is_file())
        if not matches:
            raise PlanError(f"{loc(keys)}{label}: kernels pattern {pattern!r} matches no file (relative to {base})")
        for m in matches:
            out.setdefault(Path(m).resolve(), None)
    return list(out)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _points(value, keys: tuple, loc, label: str) -> list:
    """A table of NAME = value or [values] is one grid (the product of its lists); a list of
    such tables is the union of their grids, so a list of tables of single values lists points."""
    import itertools
    grids = value if isinstance(value, list) else [value]
    points: list = []
    for g, grid in enumerate(grids):
        gkeys = keys + ((g,) if isinstance(value, list) else ())
        if not isinstance(grid, dict):
            raise PlanError(f"{loc(gkeys)}{label}: constants must be a table NAME = value or [values], or a list of "
                            f"such tables, got {grid!r}")
        axes = []
        for name, vals in grid.items():
            if not name.isidentifier():
                raise PlanError(f"{loc(gkeys + (name,))}{label}: {name!r} is not a constant name")
            vals = vals if isinstance(vals, list) else [vals]
            if not vals or not all(_number(v) for v in vals):
                raise PlanError(f"{loc(gkeys + (name,))}{label}: constant {name} must be a number or a non-empty "
                                f"list of numbers, got {grid[name]!r}")
            axes.append([(name, v) for v in dict.fromkeys(vals)])
        for combo in itertools.product(*axes):
            point = dict(combo)
            if point not in points:
                points.append(point)
    return points or [{}]


def _builder_ref(value, base: Path, keys: tuple, loc, label: str) -> tuple:
    if not isinstance(value, str) or value.count(":") < 1:
        raise PlanError(f"{loc(keys)}{label}: inputs_builder must be \"path/to/module.py:function\", got {value!r}")
    module, _, function = value.rpartition(":")
    if not module.endswith(".py") or not function.isidentifier():
        raise PlanError(f"{loc(keys)}{label}: inputs_builder must be \"path/to/module.py:function\", got {value!r}")
    path = Path(module) if Path(module).is_absolute() else base / module
    if not path.is_file():
        raise PlanError(f"{loc(keys)}{label}: inputs_builder module {module} does not exist (relative to {base})")
    return (path.resolve(), function, value)


def _prove(table, keys: tuple, loc, label: str):
    if not isinstance(table, dict):
        raise PlanError(f"{loc(keys)}{label}: prove must be a table with symbolic")
    _unknown(table, _PROVE_KEYS, keys, loc, f"{label}: prove")
    sym = table.get("symbolic")
    if isinstance(sym, (str, list)):
        sym = {n: "1.." for n in _strings(sym, keys + ("symbolic",), loc, f"{label}: prove.symbolic")}
    if not isinstance(sym, dict) or not sym:
        raise PlanError(f"{loc(keys + ('symbolic',))}{label}: prove.symbolic must name the constants to leave "
                        f"symbolic with their ranges, e.g. {{ ROUNDS = \"1..\" }} or {{ NC = [2, 64] }}")
    out = {}
    for name, rng in sym.items():
        where = loc(keys + ("symbolic", name))
        if not name.isidentifier():
            raise PlanError(f"{where}{label}: {name!r} is not a constant name")
        out[name] = _range(rng, where, f"{label}: prove.symbolic.{name}")
    return out


def _range(rng, where: str, what: str) -> tuple:
    """"LO..", "LO..HI", LO, [LO] or [LO, HI] -> (lo, hi or None)."""
    bad = PlanError(f"{where}{what}: expected a range \"LO..\" or \"LO..HI\" (or [LO, HI]), got {rng!r}")
    if isinstance(rng, str):
        a, dots, b = rng.partition("..")
        if not dots:
            raise bad
        try:
            lo, hi = int(a) if a.strip() else 1, int(b) if b.strip() else None
        except ValueError:
            raise bad from None
    elif isinstance(rng, int) and not isinstance(rng, bool):
        lo, hi = rng, None
    elif isinstance(rng, list) and 1 <= len(rng) <= 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                              for v in rng):
        lo, hi = rng[0], (rng[1] if len(rng) == 2 else None)
    else:
        raise bad
    if lo < 1 or (hi is not None and hi < lo):
        raise PlanError(f"{where}{what}: empty or non-positive range {lo}..{'' if hi is None else hi}")
    return (lo, hi)
