"""Capture the arguments a `tirx-kernels` module passes to its own compiled kernel, on the CPU.

Runs in a child process of `benchmarks/production_corpus.py` (environment of
`benchmarks/corpus_setup.sh`).  Every module of the library ships `run_test(**config)`, which
prepares its tensors, compiles the kernel (`tirx_kernels.runner.compile_kernel`), calls it and
compares against a reference.  Here, for the configuration the build printed the kernels at (`CONFIGS[0]`, or
the index's `config_index`: benchmarks/corpus/config_fit.py):

- `compile_kernel` returns a recorder instead of a CUDA executable: calling it records the
  arguments (tensors, scalars, tensor-map descriptors) and launches nothing;
- the CPU environment (benchmarks/corpus/cpu_env.py): `cuda` tensors live on the CPU in CUDA-aligned
  storage, `torch.cuda` answers as a B200 would without a driver, reference packages not installed
  here are stand-ins whose values never become kernel arguments (benchmarks/corpus/standins.py), except
  the helpers tests build operands with that have a CPU implementation (benchmarks/corpus/references.py);
- `runtime.cuTensorMapEncodeTiled` (TVM) and the CUDA driver's encode (cuda-python, ctypes) are CPU
  recorders, so host code that encodes tensor maps gives the exact encode arguments, tied to the
  captured tensor they point into by its data pointer.

What the test does after the (non-)launch -- comparing zeros against its reference -- fails, and
is ignored (`torch.testing.assert_close` only records a mismatch): the point is the arguments.  When
the test fails on a missing reference after binding its launch, the launch it prepared is made
(`_resume_launches`).  Per function (matched to the printed cache by its
`script()` text) this writes `<cache>/<module>/<function>.inputs.npz` (one array per buffer
parameter, by the parameter's name) and records scalars and tensor maps in the JSON record.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback

from benchmarks.corpus import standins
from benchmarks.corpus.cpu_env import IGNORED, NUM_SMS, OPS, _ReferenceStubs, cpu_torch, stub_missing_references



class KernelRecorder:
    """What `compile_kernel(func)` / `tvm.compile(mod)` return here.  Attribute and item access give
    recorders of the same kernel (`ex.jit().main`, `ex["name"]`, `ex.mod[...]`); a call with arguments
    is recorded and launches nothing."""

    def __init__(self, kernel, sink, key: str | None = None):
        self._kernel = kernel
        self._sink = sink
        self._key = key

    def _func(self):
        """The PrimFunc this recorder stands for (the named one of an IRModule, else its `main`)."""
        k = self._kernel
        tvm = sys.modules.get("tvm")   # not imported: the kernel cannot be an IRModule
        if tvm is not None and isinstance(k, tvm.IRModule):
            names = {gv.name_hint: f for gv, f in k.functions.items()}
            return names.get(self._key) or names.get("main") or next(iter(names.values()))
        return k

    def __call__(self, *args, **kwargs):
        if args:
            self._sink(self._func(), args)
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return KernelRecorder(self._kernel, self._sink, name if name not in ("jit", "mod") else self._key)

    def __getitem__(self, key):
        return KernelRecorder(self._kernel, self._sink, str(key))


def _numpy(t):
    """A CPU torch tensor as a numpy array of the same dtype (ml_dtypes for bf16 / fp8 / fp4)."""
    import ml_dtypes
    import numpy as np
    import torch
    name = str(t.dtype).replace("torch.", "")
    t = t.detach().contiguous()
    special = {"bfloat16": (torch.int16, ml_dtypes.bfloat16), "float8_e4m3fn": (torch.uint8, ml_dtypes.float8_e4m3fn),
               "float8_e5m2": (torch.uint8, ml_dtypes.float8_e5m2),
               "float8_e8m0fnu": (torch.uint8, ml_dtypes.float8_e8m0fnu),
               "float4_e2m1fn_x2": (torch.uint8, np.uint8)}
    if name in special:
        raw, np_t = special[name]
        return t.view(raw).numpy().view(np_t)
    if name == "bool":
        return t.numpy()
    return t.numpy()


def _match(funcs: dict, func) -> str | None:
    """The cached function name whose printed text equals `func.script()`."""
    try:
        text = func.script()
    except Exception:   # noqa: BLE001 -- an unprintable function matches nothing
        return None
    for name, pre in funcs.items():
        if pre == text:
            return name
    body = _without_attrs(text)   # the same kernel built with other function attributes (arch spelling ...)
    for name, pre in funcs.items():
        if _without_attrs(pre) == body:
            return name
    return None


def _without_attrs(text: str) -> list[str]:
    """A printed function's lines without its `T.func_attr(...)` line: the body, parameters and constants."""
    return [line for line in text.splitlines() if not line.lstrip().startswith("T.func_attr(")]


def _closest(funcs: dict, func) -> dict:
    """For a called kernel no printed one equals: the printed function sharing the longest prefix with it and
    the first line (1-based) where they differ -- the test built another variant than `get_kernel`."""
    try:
        lines = func.script().splitlines()
    except Exception as err:   # noqa: BLE001
        return {"unprintable": f"{type(err).__name__}: {err}"[:200]}
    best = {"function": None, "first_differing_line": 0, "called_lines": len(lines)}
    for name, pre in funcs.items():
        other = pre.splitlines()
        same = next((i for i, (a, b) in enumerate(zip(lines, other)) if a != b), min(len(lines), len(other)))
        if best["function"] is None or same + 1 > best["first_differing_line"]:
            best.update(function=name, first_differing_line=same + 1, printed_lines=len(other))
    return best


class AllCaptured(Exception):
    """Every function of the module has been called once: the test has nothing more to give."""


class Snapshot:
    """Turns each recorded kernel call into its inputs at the moment of the call: arrays of the buffer
    arguments, scalars, and tensor maps over a copy of the global bytes they describe."""

    def __init__(self, funcs: dict, encoder, storages: dict):
        self.funcs, self.encoder, self.storages = funcs, encoder, storages
        self.functions: dict = {}
        self.arrays: dict = {}
        self.unmatched = 0
        self.taint: standins.Taint | None = None
        self.mismatches: list[dict] = []   # how the unmatched calls' kernels differ from the printed ones
        self.earlier: dict[int, str] = {}   # storage -> "function.param" of the recorded calls so far

    def __call__(self, func, args) -> None:
        fname = _match(self.funcs, func)
        if fname is None:
            self.unmatched += 1
            if len(self.mismatches) < 5:
                self.mismatches.append(_closest(self.funcs, func))
            return
        if fname in self.functions:
            return
        self.functions[fname], self.arrays[fname] = self.one(func, args, fname)
        if set(self.functions) >= set(self.funcs):
            raise AllCaptured   # the rest of the test compares unlaunched outputs: no need to run it

    def one(self, func, args, fname: str = "") -> tuple[dict, dict]:
        import numpy as np
        import torch

        from benchmarks.corpus.build import _params
        kinds = {p["name"]: p["kind"] for p in _params(func)}
        params = [str(p.name) for p in func.params]
        if len(args) != len(params):
            return {"error": f"{len(args)} arguments for {len(params)} parameters"}, {}
        encodes = {e["descriptor"]: e for e in self.encoder.calls if e.get("descriptor")}
        arrays, scalars, tmaps, in_buffers, refused = {}, {}, {}, {}, []
        args = [_as_torch(a) for a in args]
        for pname, arg in zip(params, args):
            why = self.not_data(arg)
            if why:
                refused.append(f"{pname} ({why})")
                continue
            if kinds.get(pname) == "tensor_map":
                enc = encodes.get(_descriptor_ptr(arg)) or self.by_serial(arg)
                if enc is None:
                    tmaps[pname] = {"_missing": f"argument of type {type(arg).__name__} is not a recorded "
                                                "tensor map (no runtime.cuTensorMapEncodeTiled call wrote it)"}
                    continue
                tmaps[pname] = self.bind(enc, arrays)
            elif isinstance(arg, torch.Tensor):
                arrays[pname] = _numpy(arg).copy()
                found = standins.descriptor_serials(arrays[pname])
                if found:   # descriptor bytes passed as data: which encode wrote each
                    in_buffers[pname] = [dict(self.bind(self.encoder.calls[serial], arrays), buffer_byte_offset=off)
                                         for off, serial in found if serial < len(self.encoder.calls)]
            elif isinstance(arg, (bool, int, float, np.integer, np.floating)):
                scalars[pname] = arg.item() if hasattr(arg, "item") else arg
            else:
                tmaps[pname] = {"_missing": f"argument of type {type(arg).__name__} for a {kinds.get(pname)} "
                                            "parameter"}
        if refused:
            return {"error": "arguments not built by the library: " + "; ".join(refused)}, {}
        # nothing is launched: a buffer an earlier kernel of the test received holds what the test left in it,
        # not that kernel's output
        shared = {}
        for pname, arg in zip(params, args):
            if isinstance(arg, torch.Tensor):
                ptr = arg.untyped_storage().data_ptr()
                if ptr in self.earlier:
                    shared[pname] = self.earlier[ptr]
                self.earlier.setdefault(ptr, f"{fname}.{pname}")
        out: dict = {"scalars": scalars,
                     "buffers": {k: [list(v.shape), str(v.dtype)] for k, v in arrays.items() if not k.startswith("__")}}
        if tmaps:
            out["tensor_maps"] = tmaps
        if shared:
            out["shared_with_unlaunched"] = shared
        if in_buffers:   # buffers holding stand-in descriptor words (not the driver's format): their encodes
            out["descriptor_buffers"] = in_buffers
        return out, arrays

    def not_data(self, arg) -> str | None:
        """Why an argument holds no data the library built (a reference's stand-in, or a tensor one was
        written into), else None."""
        if isinstance(arg, standins.StandIn):
            return repr(arg)
        if self.taint is not None and hasattr(arg, "untyped_storage"):
            why = self.taint.of(arg)
            return f"written from {why}" if why else None
        return None

    def by_serial(self, arg) -> dict | None:
        """The encode a stand-in descriptor came from: passed as a tensor, or as a host pointer (a ctypes
        `c_void_p`, or an object's `.ptr`) to the 128 bytes the library copied the descriptor words into."""
        import ctypes

        import numpy as np
        if hasattr(arg, "untyped_storage"):
            found = standins.descriptor_serials(_numpy(arg))
        elif isinstance(getattr(arg, "ptr", arg), ctypes.c_void_p) and getattr(arg, "ptr", arg).value:
            found = standins.descriptor_serials(np.frombuffer(ctypes.string_at(getattr(arg, "ptr", arg).value, 16),
                                                              np.uint8))
        else:
            return None
        if found and found[0][1] < len(self.encoder.calls):
            return self.encoder.calls[found[0][1]]
        return None

    def bind(self, enc: dict, arrays: dict) -> dict:
        """An encode record tied to a copy of the global bytes it describes (`global_bytes` npz key and
        `byte_offset`), or `_missing` saying why not."""
        enc = dict(enc)
        owner = self.owner(enc.pop("data"))
        enc.pop("descriptor", None)
        if owner is None:
            return {"_missing": "the tensor map's global address lies in no tensor the test made"}
        key, raw, offset = owner
        arrays.setdefault(key, raw)
        enc.update(global_bytes=key, byte_offset=offset)
        return enc

    def owner(self, addr: int):
        """(npz key, a copy of the storage's bytes, byte offset of `addr`) of the live storage holding `addr`."""
        import ctypes

        import numpy as np
        for base, ref in list(self.storages.items()):
            tensor = ref()
            if tensor is None or tensor.untyped_storage().data_ptr() != base:
                continue
            storage = tensor.untyped_storage()
            if base <= addr < base + max(storage.nbytes(), 1):
                # a copy of the storage's bytes straight from memory (iterating a storage is per element)
                raw = np.ctypeslib.as_array((ctypes.c_uint8 * storage.nbytes()).from_address(base)).copy() \
                    if storage.nbytes() else np.zeros(0, np.uint8)
                return f"__global_{base:x}", raw, addr - base
        return None


def capture(name: str, cache: str) -> dict:
    """Run module `name`'s `run_test(**CONFIGS[config_index])` with recorders; write its kernels' inputs."""
    import numpy as np
    import tvm
    from tirx_kernels import registry, runner

    from benchmarks.corpus.build import EncodeRecorder

    index = json.loads(open(os.path.join(cache, "index.json")).read())
    mod_rec = next(m for m in index["modules"] if m["module"] == name)
    funcs = {}
    for f in mod_rec.get("functions", []):
        if f.get("pre"):
            funcs[f["function"]] = open(os.path.join(cache, f["pre"])).read()
    rec: dict = {"module": name, "functions": {}}
    encoder = EncodeRecorder()
    encoder.register()
    storages: dict = {}
    snap = Snapshot(funcs, encoder, storages)
    original = runner.compile_kernel
    runner.compile_kernel = lambda func, **kw: KernelRecorder(func, snap)
    tvm.compile = lambda mod, *a, **kw: KernelRecorder(mod, snap)
    tvm.tirx.build = lambda mod, *a, **kw: KernelRecorder(mod, snap)
    taint = standins.Taint()
    snap.taint = taint
    cpu_torch(mod_rec.get("arch") or "sm_100a", storages, taint)
    rec["stubbed_references"] = stub_missing_references(encoder.calls)
    t0 = time.perf_counter()
    module = registry.load_kernel(name, strict=True)
    if getattr(module, "compile_kernel", None) is original:   # imported at module level
        module.compile_kernel = runner.compile_kernel
    # the configuration the build printed the kernels at (benchmarks/corpus/config_fit.py), so they match
    at = int(mod_rec.get("config_index") or 0)
    config = {k: v for k, v in (module.CONFIGS[at] if getattr(module, "CONFIGS", None) else {}).items()
              if k != "label"}
    try:
        module.run_test(**config)
        rec["run_test"] = "returned"
    except AllCaptured:
        rec["run_test"] = "stopped after the last function's call"
    except BaseException as err:   # noqa: BLE001 -- the reference comparison on unlaunched outputs fails
        rec["run_test"] = f"{type(err).__name__}: {str(err)[:300]}"
        rec["run_test_traceback"] = traceback.format_exc()[-3000:]
        if not isinstance(err, KeyboardInterrupt):
            rec["resumed_launches"] = _resume_launches(err.__traceback__, snap)
    rec["capture_s"] = round(time.perf_counter() - t0, 3)
    rec["stand_ins_imported"] = sorted(set(_ReferenceStubs.touched))
    rec["torch_calls"] = OPS[0]
    rec["comparisons_ignored"] = IGNORED[:20]
    for fname, out in snap.functions.items():
        if "error" not in out:
            np.savez(os.path.join(cache, name, f"{fname}.inputs.npz"), **snap.arrays[fname])
            out["npz"] = f"{name}/{fname}.inputs.npz"
        rec["functions"][fname] = out
    rec["unmatched_calls"] = snap.unmatched
    if snap.mismatches:
        rec["unmatched_kernels"] = snap.mismatches
    return rec


def _as_torch(arg):
    """A DLPack tensor of another framework (`tvm_ffi.from_dlpack(t)`) as the torch tensor it shares memory with."""
    import torch
    if not isinstance(arg, torch.Tensor) and hasattr(arg, "__dlpack__") and not isinstance(arg, standins.StandIn):
        try:
            return torch.from_dlpack(arg)
        except Exception:   # noqa: BLE001 -- left as it is: recorded as an argument of its own type
            return arg
    return arg


def _pending_launches(tb) -> list[tuple[str, object]]:
    """(name, closure) of the launch closures the test had built when it failed: argument-free callables in
    the failing frames' locals that close over a compiled kernel (a `KernelRecorder`)."""
    import inspect
    found, seen = [], set()
    while tb is not None:
        for name, value in tb.tb_frame.f_locals.items():
            cells = getattr(value, "__closure__", None) or ()
            if id(value) in seen or not callable(value) or not cells:
                continue
            try:
                holds = any(isinstance(c.cell_contents, KernelRecorder) for c in cells)
                free = all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                           for p in inspect.signature(value).parameters.values())
            except (ValueError, TypeError):   # an empty cell, a builtin without a signature
                continue
            if holds and free:
                seen.add(id(value))
                found.append((f"{tb.tb_frame.f_code.co_name}.{name}", value))
        tb = tb.tb_next
    return found


def _resume_launches(tb, snap: Snapshot) -> list[str]:
    """The test failed on something its kernel's launch does not need (typically the reference of a package
    not installed here, set up after the kernel's inputs): make the launches it had already prepared, with
    the arguments it had bound into them.  The closures' names and how each call ended."""
    out = []
    for name, launch in _pending_launches(tb):
        if set(snap.functions) >= set(snap.funcs):
            break
        try:
            launch()   # type: ignore[operator]
            out.append(f"{name}: returned")
        except AllCaptured:
            out.append(f"{name}: captured the last function")
        except Exception as err:   # noqa: BLE001 -- recorded: the launch itself needs what is missing
            out.append(f"{name}: {type(err).__name__}: {str(err)[:200]}")
    return out


def _descriptor_ptr(arg) -> int | None:
    """The address of a tensor-map argument: a torch byte tensor holding the descriptor, or an opaque
    handle with a `.value` / `data_ptr()`."""
    if isinstance(arg, int):
        return arg
    for attr in ("data_ptr",):
        f = getattr(arg, attr, None)
        if callable(f):
            try:
                return int(f())
            except Exception:   # noqa: BLE001
                return None
    if getattr(arg, "ptr", None) is not None:   # a staging buffer object holding the descriptor's address
        return _descriptor_ptr(arg.ptr)
    value = getattr(arg, "value", None)
    return int(value) if isinstance(value, int) else None


def main(argv: list[str]) -> int:
    name, cache = argv[0], argv[1]
    try:
        rec = capture(name, cache)
    except BaseException as err:   # noqa: BLE001 -- recorded, the parent goes on
        rec = {"module": name, "error": f"{type(err).__name__}: {err}"[:500],
               "traceback": traceback.format_exc()[-3000:]}
    sys.stdout.write("\n@@CORPUS-RECORD@@" + json.dumps(rec, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def run_all(index: dict, cache, *, only, jobs: int, timeout: float, child, select) -> dict:
    """Capture every built module (a child each, under `timeout`); store each function's capture in the
    index (`functions[i]["captured"]`: the npz, scalars and tensor maps, or `why` it is missing)."""
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    names = {m["module"] for m in index["modules"]}
    todo = [m for m in index["modules"] if m["status"] == "built" and select(m["module"], only, names)]

    def one(mod):
        env = dict(os.environ, TIRX_PREPARE_CUDA_ARCH=mod["arch"], TIRX_PREPARE_NUM_SMS=str(NUM_SMS),
                   PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        rec, err, seconds = child([sys.executable, "-m", "benchmarks.corpus.capture", mod["module"], str(cache)],
                                  env, timeout)
        if rec is None:
            rec = {"module": mod["module"], "error": err.strip().splitlines()[0] if err.strip() else "no output"}
        rec["wall_s"] = round(seconds, 2)
        got = sum(1 for f in rec.get("functions", {}).values() if "npz" in f)
        print(f"  capture {mod['module']:<60} {got}/{len(mod['functions'])} function(s) {seconds:6.1f} s", flush=True)
        return mod, rec

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, todo))
    for mod, rec in results:
        why = rec.get("error") or f"run_test never called it ({rec.get('run_test', 'no record')})"
        if rec.get("stand_ins_imported") and not rec.get("error"):
            why += f"; the test imports {', '.join(rec['stand_ins_imported'])}, not installed here (CUDA-only)"
        mod["capture"] = {k: rec.get(k) for k in ("run_test", "capture_s", "wall_s", "unmatched_calls", "error",
                                                 "resumed_launches", "stand_ins_imported", "comparisons_ignored",
                                                 "unmatched_kernels")}
        for f in mod["functions"]:
            got = rec.get("functions", {}).get(f["function"])
            f["captured"] = got if got and "npz" in got else {"why": (got or {}).get("error") or why}
    return index
