"""Parse, Synccheck and Racecheck one printed corpus function (a child process per function).

`run_all` (in the parent) starts `python -m benchmarks.corpus.check CACHE MODULE FUNCTION GEN STAGE`
per function and generation, with a timeout, so one failure or hang never stops the run; the
child prints one JSON record: parsed, the first parse error (line, construct, snippet), and for
stage `check` the verdicts of both checkers on zero-filled and on random inputs, their finding
kinds, the first unmodeled op, and the time taken.

Inputs are, where `--capture` recorded them, the arguments the library's own `run_test` passes to
the kernel (`library`: its prepared data; tensor maps over the bytes they describe).  Otherwise they come from the function's parameters as the build recorded them: buffers get arrays of
their shape and dtype (a symbolic extent is bound from the configuration when a config key
has its name, else it is reported as unbound and the function is not checked); tensor-map
parameters get `modelcheck.numsim.TensorMap` descriptors from the encode arguments the build
recorded by running the kernel's own host code against a CPU `runtime.cuTensorMapEncodeTiled`
(`tensor_maps` in the index), else the function is not checked and the record says why.  Where the capture
failed, a module's launch recipe (benchmarks/corpus/recipes.py: what its host code passes, read from it) gives the
extents, scalars and valid index data the configuration does not name; such rows say
"inputs from the library's launch code (read)" instead of "captured".
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from benchmarks.corpus.launch_inputs import lowered_inputs, make_inputs  # noqa: F401 -- make_inputs re-exported

MARK = "@@CORPUS-RECORD@@"
SEEDS = {"zeros": None, "random": 0}
CHECK_SECONDS = 60.0     # each checker's time budget per function: the API default (past it: incomplete, named)
# measured in CPU seconds of the check (modelcheck.set_budget_clock): the run has parallel jobs on a shared machine,
# and a verdict must not depend on what else ran beside it
BUDGET_CLOCK = "cpu"


def _dtype(name: str):
    import numpy as np
    from modelcheck.numsim.tensormap import np_dtype
    try:
        return np_dtype(name)
    except TypeError:
        return np.dtype("uint8")


def _as_recorded(arr, dtype_name: str | None):
    """The captured array in the dtype the capture recorded (else, at binding, the parameter's): `.npz` keeps
    no ml_dtypes (bf16, fp8, fp4 load back as raw `|V1`/`|V2` records), so those are viewed again as the
    element type they were saved from.  Records of another width stay void: the binding then says so."""
    if arr.dtype.kind != "V" or not dtype_name:
        return arr
    elem = _dtype(dtype_name)
    return arr.view(elem) if elem.itemsize == arr.dtype.itemsize else arr


def _fill(shape, dtype, fill: str, rng):
    import numpy as np
    arr = np.zeros(shape, dtype=dtype)
    if fill == "random" and arr.nbytes:
        raw = rng.integers(0, 256, size=arr.nbytes, dtype=np.uint8)
        arr = raw.view(dtype).reshape(shape)
        if arr.dtype.kind == "f":
            arr = np.nan_to_num(arr.astype(np.float32), nan=0.0, posinf=1.0, neginf=-1.0).clip(-4, 4).astype(dtype)
    return arr


_SWIZZLES = {0: "none", 1: "32B", 2: "64B", 3: "128B", 4: "128B_atom_32B"}   # CUtensorMapSwizzle codes


def _elements(raw, dtype: str):
    """Global bytes from a map's base on, as whole elements of the map's dtype (a packed 4-bit map,
    CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B, takes the bytes themselves: two elements a byte)."""
    if dtype == "float4_e2m1fn":
        return raw
    elem = _dtype(dtype)
    return raw[: raw.size - raw.size % elem.itemsize].view(elem)


def tensor_map_inputs(maps: dict, fill: str, rng) -> dict:
    """TensorMap descriptors of recorded encodes, over one array per host tensor (maps of the same
    tensor share it, as on the GPU)."""
    from modelcheck.numsim import TensorMap
    tensors, out = {}, {}
    for param, enc in maps.items():
        if param.startswith("_"):
            continue
        key = enc.get("tensor") or param
        if key not in tensors:
            tensors[key] = _fill(enc["tensor_shape"], _dtype(enc["tensor_dtype"]), fill, rng).reshape(-1)
        out[param] = TensorMap(tensors[key], enc["dims"], enc["strides"], enc["box"], enc["element_strides"],
                               enc["dtype"], swizzle=_SWIZZLES[enc["swizzle"]],
                               oob_fill="nan" if enc["oob_fill"] else "zero").numpy()
    return out


def captured_inputs(cache: Path, cap: dict, func, pre_path: Path | None = None):
    """(inputs, problems) from what the library's own `run_test` passed to the kernel (benchmarks/corpus/
    capture.py): its arrays (the library's prepared data), its
    scalars, and tensor maps over the bytes they describe (parameters, and buffers the library filled with
    descriptor words: `tensormap.with_maps`).  Parameters bind by name; a lowered pointer
    parameter `X_ptr` (or `X_handle`) takes the array of `X`."""
    import numpy as np
    data = np.load(cache / cap["npz"])
    recorded = cap.get("buffers") or {}
    arrays = {k: _as_recorded(data[k], (recorded.get(k) or [None, None])[1]) for k in data.files}
    return bind_params(func, arrays, cap.get("scalars", {}), cap.get("tensor_maps") or {},
                       cap.get("descriptor_buffers") or {}, pre_path)


def bind_params(func, arrays: dict, scalars: dict, maps: dict, held: dict, pre_path: Path | None = None):
    """(inputs, problems): `func`'s parameters bound to the launch's arrays, scalars and tensor-map encodes, by
    the pre-lowering names (a lowered `X_ptr` takes `X`; the lowered host's launch gives map positions and the
    integers it computes from the scalars).  `maps` values are encode records or ready descriptors."""
    inputs, problems = {}, []
    prelude: PreludeMaps | None = None
    launch = HostLaunch(pre_path.with_name(pre_path.name.replace(".pre.py", ".host.py")), func.name) \
        if pre_path is not None else None
    for position, p in enumerate(func.params):
        name = p.name
        base = next((name[: -len(sfx)] for sfx in ("_ptr", "_handle") if name.endswith(sfx)), None)
        k = launch.map_index(position) if launch is not None and p.kind == "handle" else None
        if k is not None and pre_path is not None:
            # a tensor map the host encodes and passes at this position: the device function's names are the
            # lowering's own (`v`, `v_1`, ...) and may even equal a buffer's name (`v`), so never bind by name
            prelude = prelude or PreludeMaps(pre_path, arrays, scalars)
            var = prelude.order[k] if k < len(prelude.order) else None
            if var in prelude.maps:
                inputs[name] = prelude.maps[var]
            else:
                problems.append(f"parameter {name}: the host passes its tensor map #{k}, which "
                                f"{prelude.why.get(var or '', 'the pre-lowering host prelude does not encode')}")
        elif name in maps or (base and base in maps and name not in arrays):
            enc = maps[name] if name in maps else maps[base]
            if not isinstance(enc, dict):
                inputs[name] = enc               # a descriptor built already
                continue
            if "_missing" in enc:
                problems.append(f"tensor-map parameter {name}: {enc['_missing']}")
                continue
            inputs[name] = _map_of(enc, arrays).numpy()
        elif name in arrays and not name.startswith("__"):
            inputs[name] = _held(_as_recorded(arrays[name], p.dtype), held.get(name), arrays)
        elif base and base in arrays:
            inputs[name] = _held(_as_recorded(arrays[base], p.dtype), held.get(base), arrays)
        elif name in scalars:
            inputs[name] = scalars[name]
        elif p.kind == "scalar" and launch is not None \
                and (value := launch.integer(position, scalars)) is not None:
            inputs[name] = value      # a value the lowered host computes (`cse_v1 = B * N`) from the scalars
        elif pre_path is not None and p.kind == "handle":
            # the lowered function takes the maps the pre-lowering host prelude encodes, by name
            prelude = prelude or PreludeMaps(pre_path, arrays, scalars)
            if name in prelude.maps:
                inputs[name] = prelude.maps[name]
            else:
                problems.append(f"parameter {name}: neither the library's call nor the pre-lowering host prelude "
                                f"gives it" + (f" (that map {prelude.why[name]})" if name in prelude.why else ""))
        else:
            problems.append(f"parameter {name}: the library's call passed nothing the capture could bind to it")
    return inputs, problems


def _held(arr, encs: list | None, arrays: dict):
    """`arr`, holding as data the tensor maps of the descriptor words the library put in it (if any)."""
    from modelcheck.numsim.tensormap import with_maps
    if not encs:
        return arr
    return with_maps(arr, {enc["buffer_byte_offset"]: _map_of(enc, arrays) for enc in encs})


def _map_of(enc: dict, arrays: dict):
    """The TensorMap a recorded encode describes, over the captured bytes it points into."""
    from modelcheck.numsim import TensorMap
    flat = _elements(arrays[enc["global_bytes"]][enc["byte_offset"]:], enc["dtype"])
    return TensorMap(flat, enc["dims"], enc["strides"], enc["box"], enc["element_strides"], enc["dtype"],
                     swizzle=_SWIZZLES[enc["swizzle"]], oob_fill="nan" if enc["oob_fill"] else "zero")


class PreludeMaps:
    """The tensor maps the pre-lowering text's host prelude encodes over the captured buffers: `order` (every
    encode's map name, in the prelude's order), `maps` (name -> TensorMap descriptor) and `why` (name -> why
    that map is not given: its buffer was not captured, an argument is not static, or the encode breaks a
    cuTensorMapEncodeTiled rule).  As for the pre-lowering prelude (tensormap.bind_host_maps), a map wider
    than the captured bytes is given (`within_base=False`: the driver sees only a pointer, and a template whose
    address the kernel patches is so on purpose); a TMA reaching past the bytes is `oob` at the op."""

    def __init__(self, pre_path: Path, arrays: dict, scalars: dict):
        import ir
        from modelcheck.numsim import TensorMap
        from modelcheck.numsim.compile_stmt import _static
        from modelcheck.numsim.tensormap import TensorMapError
        pre = ir.parse_file(pre_path)
        encodes = [h for h in pre.host if isinstance(h, ir.TensorMapEncode)]
        self.order: list[str] = [h.var.name for h in encodes]
        self.maps: dict = {}
        self.why: dict[str, str] = {}
        for h in encodes:
            if h.buffer not in arrays:
                self.why[h.var.name] = f"is encoded over {h.buffer}, which the capture did not record"
                continue
            vals = {field: [_static(e, pre.constant_values, scalars) for e in getattr(h, field)]
                    for field in ("shape", "strides", "box", "elem_strides")}
            enums = [_static(e, pre.constant_values, scalars) for e in (h.swizzle, h.oob, h.byte_offset, h.cu_dtype)]
            if any(v is None for vs in vals.values() for v in vs) or any(v is None for v in enums):
                self.why[h.var.name] = "has an encode argument that is not a static value"
                continue
            # a forced element type: only packed 4-bit (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B) maps are modeled
            packed = enums[3] == 13 and h.dtype in ("float4_e2m1fn", "uint8")
            if enums[3] != -1 and not packed:
                self.why[h.var.name] = f"forces CUtensorMapDataType {enums[3]}, which is not modeled"
                continue
            dtype = "float4_e2m1fn" if packed else h.dtype
            flat = arrays[h.buffer].reshape(-1).view("uint8")[int(enums[2]):]
            flat = _elements(flat, dtype)
            try:
                self.maps[h.var.name] = TensorMap(
                    flat, [int(v) for v in vals["shape"]], [int(v) for v in vals["strides"]],
                    [int(v) for v in vals["box"]], [int(v) for v in vals["elem_strides"]], dtype,
                    swizzle=_SWIZZLES[int(enums[0])], oob_fill="nan" if enums[1] else "zero",
                    within_base=False).numpy()
            except TensorMapError as err:
                self.why[h.var.name] = f"is not a map over the captured {h.buffer}: {err}"


_MAP_ALLOCA = re.compile(r"^\s*(\w+): T\.let\[T\.TensorMap\(\)\] = T\.tvm_stack_alloca\(\"tensormap\"", re.M)
_ARG_SET = re.compile(r"T\.tvm_struct_set\(stack_ffi_any, (\d+), 15, (.+)\)\s*$", re.M)
_HOST_LET = re.compile(r"^\s*(\w+): T\.let\[T\.(?:u?int\d+)\] = (.+)$", re.M)


class HostLaunch:
    """What the lowered host function (printed `.host.py`) passes to one device function's launch: the
    host packs the arguments with `tvm_struct_set(stack_ffi_any, i, 15, value)` right before
    `call_packed_lowered("<device>", ...)`.  Read from the printed text (our parser does not take host
    functions); empty when the text is missing or not in that shape, and binding then falls back to names."""

    def __init__(self, host_path: Path, device: str):
        self.args: dict[int, str] = {}
        self.map_allocas: list[str] = []
        self.lets: dict[str, str] = {}
        try:
            text = host_path.read_text(encoding="utf-8")
        except OSError:
            return
        call = text.find(f'T.call_packed_lowered("{device}", stack_ffi_any')
        if call < 0:
            return
        start = text.rfind("T.call_packed_lowered(", 0, call) + 1     # the previous call ends the packing
        self.args = {int(i): v for i, v in _ARG_SET.findall(text, start, call)}
        self.map_allocas = _MAP_ALLOCA.findall(text)   # in the pre-lowering host prelude's encode order
        for name, expr in _HOST_LET.findall(text, 0, call):
            self.lets[name] = expr                      # the last definition before the launch

    def map_index(self, position: int) -> int | None:
        """k when the argument at `position` is the host's k-th tensor map."""
        v = self.args.get(position)
        return self.map_allocas.index(v) if v in self.map_allocas else None

    def integer(self, position: int, scalars: dict) -> int | None:
        """The value of an integer the host computes from the launch's scalars (`cse_v1 = B * N`), or None."""
        v = self.args.get(position)
        if v is None:
            return None
        return _host_int(v, {k: x for k, x in scalars.items() if isinstance(x, int) and not isinstance(x, bool)},
                         self.lets)


def _host_int(expr: str, env: dict, lets: dict, depth: int = 0) -> int | None:
    """An integer host expression over known names: + - * // % << >> & |, T.min/T.max, T.Cast to an integer
    type, T.int32/T.int64 literals; anything else (a load, a call into the runtime) is None."""
    import ast
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
           ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None, ast.RShift: lambda a, b: a >> b,
           ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b}

    def ev(n) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in env:
                return env[n.id]
            return _host_int(lets[n.id], env, lets, depth + 1) if n.id in lets and depth < 16 else None
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            x = ev(n.operand)
            return None if x is None else -x
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            a, b = ev(n.left), ev(n.right)
            return None if a is None or b is None else ops[type(n.op)](a, b)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id == "T" and not n.keywords:
            name, args = n.func.attr, n.args
            if name in ("min", "max") and len(args) == 2:
                a, b = ev(args[0]), ev(args[1])
                return None if a is None or b is None else (min if name == "min" else max)(a, b)
            if name in ("int32", "int64") and len(args) == 1:
                return ev(args[0])
            if name == "Cast" and len(args) == 2 and isinstance(args[0], ast.Constant) \
                    and re.fullmatch(r"u?int(8|16|32|64)", str(args[0].value)):
                x, bits = ev(args[1]), int(str(args[0].value).lstrip("uint"))
                if x is None:
                    return None
                x &= (1 << bits) - 1                     # two's complement, as the cast on the device
                return x - (1 << bits) if not str(args[0].value).startswith("u") and x >> (bits - 1) else x
        return None
    return ev(tree)


def _findings(report) -> dict:
    kinds = sorted({f.kind for f in report.findings})
    unmodeled = next((f.details.get("operation") or f.message for f in report.findings
                      if f.kind == "unsupported_operation"
                      or (f.kind == "analysis_incomplete" and f.details.get("reason") == "unsupported_operation")), None)
    why = next((f"{f.details.get('reason', '')}: {f.message}" for f in report.findings
                if f.kind == "analysis_incomplete"), None)
    out = {"verdict": report.verdict, "kinds": kinds, "counts": report.counts(), "first_unmodeled_op": unmodeled}
    if why:
        out["incomplete_because"] = why[:300]
    errors = [f"{f.kind}: {f.message}"[:300] for f in report.findings if getattr(f, "severity", "") == "error"
              or f.kind in ("data_race", "deadlock", "oob")]
    if errors:
        out["errors"] = errors[:3]
    return out


def check_one(cache: Path, module: str, function: str, gen: str, stage: str) -> dict:
    import ir
    import modelcheck
    from modelcheck.numsim.targets import NOT_MODELED, TARGETS
    from benchmarks.corpus import census, census_rules
    from benchmarks.corpus.chain import Chain
    from benchmarks.corpus.recipes import recipe_for

    index = json.loads((cache / "index.json").read_text())
    mod = next(m for m in index["modules"] if m["module"] == module)
    frec = next(f for f in mod["functions"] if f["function"] == function)
    rec = {"module": module, "function": function, "generation": gen, "config": config_of(mod)}
    rel = frec.get(gen)
    if rel is None:
        rec.update(parsed=False, skipped=f"no {gen} text ({frec.get(gen + '_error', 'not printed')})")
        return rec
    text = (cache / rel).read_text()
    t0 = time.perf_counter()
    failure = census.first_failure(text, str(cache / rel))
    rec["parse_s"] = round(time.perf_counter() - t0, 3)
    rec["parsed"] = failure is None
    if failure is not None:
        rule = census_rules.classify(failure)
        rec["parse_error"] = {"line": failure.line, "col": failure.col, "what": failure.what,
                              "construct": rule.id if rule else census.other_id(failure),
                              "snippet": failure.text[:200], "kind": failure.kind}
        return rec
    if stage != "check":
        return rec
    func = ir.parse(text, path=str(cache / rel))
    config = {k: v for k, v in (mod.get("config") or {}).items() if k != "label"}
    captured = frec.get("captured") or {}
    recipe = recipe_for(module, function) if "npz" not in captured else None
    rec["inputs_from"] = "the library's run_test (captured)" if "npz" in captured else \
        f"the library's launch code (read): {recipe.source}" if recipe is not None else "configuration shapes"
    # the library's own data when it was captured (one run per checker), else zeros and random of the shapes
    fills = ("library",) if "npz" in captured else tuple(SEEDS)
    rec["fills"] = list(fills)
    # buffers the test also passes to another of the module's kernels: on the GPU that launch may write them
    # first, and the capture launches nothing; they are taken from NumSim's run of that launch when it completes
    # (`inputs_from_chained_run`), else they stay as captured (a finding on them is judged with that in mind)
    others = {b: src for b, src in (captured.get("shared_with_unlaunched") or {}).items()
              if src.partition(".")[0] != function}
    if others:
        rec["inputs_shared_with_other_launches"] = others
    target = mod.get("arch")
    if target not in TARGETS:
        why = NOT_MODELED.get(target, "no cited launch limits for it")
        rec["not_checked"] = [f"target {target}: {why} (modelcheck knows {', '.join(sorted(TARGETS))})"]
        return rec
    for fill in fills:
        if "npz" in captured:
            pre_path = cache / frec["pre"] if gen == "lowered" and frec.get("pre") else None
            inputs, problems = captured_inputs(cache, captured, func, pre_path)
        else:
            inputs, problems = make_inputs(frec, config, fill, recipe)
            if captured.get("why") and recipe is None:
                problems.append(f"inputs not captured: {captured['why']}")
            if recipe is not None and gen == "lowered" and frec.get("pre") and not problems:
                inputs, problems = lowered_inputs(func, frec, inputs, cache / frec["pre"])
        if problems:
            rec["not_checked"] = problems
            break
        if others and "npz" in captured:
            # buffers an earlier launch writes (prologue -> main): from NumSim's run of that launch
            chain = Chain(cache, mod, target, CHECK_SECONDS)
            inputs, chained = chain.inputs(frec, func, inputs, gen)
            rec["chained_launches"] = chained["launches"]
            if chained["buffers"]:
                rec["inputs_from_chained_run"] = chained["buffers"]
                rec["inputs_from"] += "; buffers other launches write from NumSim's run of those launches"
        for checker in ("synccheck", "racecheck"):
            t1, c1 = time.perf_counter(), time.process_time()
            try:
                report = getattr(modelcheck, checker)(func, inputs, max_seconds=CHECK_SECONDS, target=target)
                out = _findings(report)
            except Exception as err:   # noqa: BLE001 -- a checker crash is a result to record
                out = {"verdict": "exception", "error": f"{type(err).__name__}: {err}"[:500]}
            out["seconds"] = round(time.perf_counter() - t1, 3)
            out["cpu_seconds"] = round(time.process_time() - c1, 3)    # what the budget counts (BUDGET_CLOCK)
            rec[f"{checker}_{fill}"] = out
    return rec


def config_of(mod: dict) -> dict:
    """Which listed configuration the module was built and checked at, and why when not the first
    (benchmarks/corpus/config_fit.py)."""
    out = {"index": int(mod.get("config_index") or 0), "label": (mod.get("config") or {}).get("label")}
    if mod.get("config_why"):
        out["why"] = mod["config_why"]
    return out


def run_all(index: dict, cache: Path, *, stage: str, only, jobs: int, timeout: float, child) -> list[dict]:
    from concurrent.futures import ThreadPoolExecutor
    root = Path(__file__).resolve().parents[2]
    names = {m["module"] for m in index["modules"]}
    todo = [(m["module"], f["function"], gen) for m in index["modules"] if _selected(m["module"], only, names)
            for f in m.get("functions", []) for gen in ("pre", "lowered")]

    def one(item):
        module, function, gen = item
        env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        rec, err, seconds = child([sys.executable, "-m", "benchmarks.corpus.check", str(cache), module, function,
                                   gen, stage], env, timeout)
        if rec is None:
            rec = {"module": module, "function": function, "generation": gen, "parsed": False,
                   "child_error": err.strip()[-1500:]}
        rec["wall_s"] = round(seconds, 2)
        return rec

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, todo))


def _selected(name, only, names) -> bool:
    if not only:
        return True
    return any(o == name if o in names else o in name for o in only)


def payload(index: dict, rows: list[dict], stage: str) -> dict:
    mods = index["modules"]
    built = [m for m in mods if m["status"] == "built"]
    summary = {"modules": len(mods), "modules_built": len(built),
               "functions": sum(len(m["functions"]) for m in built)}
    for gen in ("pre", "lowered"):
        gen_rows = [r for r in rows if r["generation"] == gen]
        summary[f"{gen}_parsed"] = sum(1 for r in gen_rows if r.get("parsed"))
        summary[f"{gen}_rows"] = len(gen_rows)
        for checker in ("synccheck", "racecheck"):
            verdicts: dict = {}
            for r in gen_rows:
                v = (r.get(f"{checker}_library") or r.get(f"{checker}_zeros") or {}).get("verdict")
                if v:
                    verdicts[v] = verdicts.get(v, 0) + 1
            summary[f"{gen}_{checker}"] = verdicts
    build = [{"module": m["module"], "status": m["status"], "arch": m.get("arch"), "config": m.get("config"),
              "config_index": int(m.get("config_index") or 0), "config_why": m.get("config_why"),
              "error": m.get("error"), "functions": [f["function"] for f in m.get("functions", [])],
              "wall_s": m.get("wall_s")} for m in mods]
    return {"stage": stage, "versions": index.get("versions"), "build_wall_s": index.get("build_wall_s"),
            "budget": {"seconds_per_check": CHECK_SECONDS, "clock": BUDGET_CLOCK}, "summary": summary, "build": build, "rows": rows}


def print_summary(payload: dict) -> None:
    s = payload["summary"]
    print(f"\n{s['modules_built']}/{s['modules']} modules built, {s['functions']} functions")
    print(f"{'generation':<10} {'parsed':>10}  synccheck                    racecheck   (library data, else zeros)")
    for gen in ("pre", "lowered"):
        print(f"{gen:<10} {s[f'{gen}_parsed']:>4}/{s[f'{gen}_rows']:<5}  {json.dumps(s[f'{gen}_synccheck']):<28} "
              f"{json.dumps(s[f'{gen}_racecheck'])}")
    firsts: dict = {}
    for r in payload["rows"]:
        c = (r.get("parse_error") or {}).get("construct")
        if c:
            firsts.setdefault((r["generation"], c), 0)
            firsts[(r["generation"], c)] += 1
    if firsts:
        print("\nfirst parse error, by construct:")
        for (gen, c), n in sorted(firsts.items(), key=lambda kv: (kv[0][0], -kv[1])):
            print(f"  {gen:<8} {n:>4}  {c}")


def main(argv: list[str]) -> int:
    cache, module, function, gen, stage = argv
    import modelcheck
    modelcheck.set_budget_clock(BUDGET_CLOCK)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    rec = check_one(Path(cache), module, function, gen, stage)
    sys.stdout.write("\n" + MARK + json.dumps(rec, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def markdown_table(payload: dict) -> str:
    """One row per function: parsed, where its inputs came from, both checkers' verdicts per generation and
    what stopped them (the first unmodeled op, or why it was not checked)."""
    rows: dict = {}
    for r in payload["rows"]:
        rows.setdefault((r["module"], r["function"]), {})[r["generation"]] = r

    def cell(r: dict | None) -> str:
        if r is None:
            return "—"
        if not r.get("parsed"):
            what = (r.get("parse_error") or {}).get("construct") or r.get("skipped") or "child failed"
            return f"parse: {what}"
        if r.get("not_checked"):
            return "not checked"
        parts = []
        for checker in ("synccheck", "racecheck"):
            out = r.get(f"{checker}_library") or r.get(f"{checker}_zeros") or {}
            v = out.get("verdict", "—")
            kinds = [k for k in out.get("kinds", []) if k not in ("analysis_incomplete",)]
            parts.append(v + (f" ({', '.join(kinds[:3])})" if kinds and v != "clean" else ""))
        return " / ".join(parts)

    def stop(pair: dict) -> str:
        for r in pair.values():
            for checker in ("synccheck", "racecheck"):
                op = (r.get(f"{checker}_library") or r.get(f"{checker}_zeros") or {}).get("first_unmodeled_op")
                if op:
                    return str(op)[:90]
        for r in pair.values():
            if r.get("not_checked"):
                return "; ".join(r["not_checked"])[:140]
        return ""

    lines = ["| module / function | inputs | pre: sync / race | lowered: sync / race | stopped at |",
             "|---|---|---|---|---|"]
    for (module, function), pair in sorted(rows.items()):
        src = next((r.get("inputs_from") for r in pair.values() if r.get("inputs_from")), "—")
        src = "library" if src and src.startswith("the library's run_test") else \
            "read" if src and src.startswith("the library's launch code") else ("shapes" if src != "—" else src)
        if any(r.get("inputs_from_chained_run") for r in pair.values()):
            src += " + chained"
        at = next((r["config"] for r in pair.values() if (r.get("config") or {}).get("index")), None)
        if at:      # not CONFIGS[0]: the first listed configuration whose inputs fit (config_fit.py)
            src += f" @ CONFIGS[{at['index']}] {at.get('label') or ''}".rstrip()
        lines.append(f"| {module} / {function} | {src} | {cell(pair.get('pre'))} | {cell(pair.get('lowered'))} | "
                     f"{stop(pair).replace('|', '/')} |")
    return "\n".join(lines) + "\n"
