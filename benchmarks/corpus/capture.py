"""Capture the arguments a `tirx-kernels` module passes to its own compiled kernel, on the CPU.

Runs in a child process of `benchmarks/production_corpus.py` (environment of
`benchmarks/corpus_setup.sh`).  Every module of the library ships `run_test(**config)`, which
prepares its tensors, compiles the kernel (`tirx_kernels.runner.compile_kernel`), calls it and
compares against a reference.  Here, for `CONFIGS[0]`:

- `compile_kernel` returns a recorder instead of a CUDA executable: calling it records the
  arguments (tensors, scalars, tensor-map descriptors) and launches nothing;
- a torch function mode moves every tensor the test creates on `cuda` to the CPU, and the
  `torch.cuda` calls the tests make (synchronize, streams, device properties) answer as a B200 would
  without touching a driver;
- `runtime.cuTensorMapEncodeTiled` is a CPU recorder, so host code that encodes tensor maps gives the
  exact encode arguments, tied to the captured tensor they point into by its data pointer.

What the test does after the (non-)launch -- comparing zeros against its reference -- fails, and
is ignored: the point is the arguments.  Per function (matched to the printed cache by its
`script()` text) this writes `<cache>/<module>/<function>.inputs.npz` (one array per buffer
parameter, by the parameter's name) and records scalars and tensor maps in the JSON record.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
import weakref

from benchmarks.corpus import standins

NUM_SMS = 148
OPS = [0]   # torch calls the test made (how much CPU work its preparation is)


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
        import tvm
        k = self._kernel
        if isinstance(k, tvm.IRModule):
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


def _cpu_torch(arch: str, storages: dict, taint: standins.Taint):
    """Enter a torch function mode that sends `cuda` tensors to the CPU (in fresh storage aligned as CUDA's
    allocator aligns it), turns ops on reference stand-ins into stand-ins (tainting a tensor one is written
    into); patch `torch.cuda` queries to answer as a device of `arch` (sm_100a -> capability (10, 0))."""
    import torch
    from torch.utils._pytree import tree_flatten
    digits = "".join(c for c in arch if c.isdigit())
    capability = (int(digits[:-1]), int(digits[-1]))
    from torch.overrides import TorchFunctionMode

    def is_cuda(dev) -> bool:
        return (isinstance(dev, str) and dev.startswith("cuda")) or (isinstance(dev, torch.device)
                                                                      and dev.type == "cuda")

    class CpuOnly(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            OPS[0] += 1
            kwargs = dict(kwargs or {})
            if is_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func in (torch.Tensor.cuda,):
                return args[0]
            if func in (torch.Tensor.to,):
                args = tuple("cpu" if is_cuda(a) else a for a in args)
            if getattr(func, "__name__", "") == "pin_memory":
                return args[0]
            flat = tree_flatten((args, kwargs))[0]
            stand_in = next((a for a in flat if isinstance(a, standins.StandIn)), None)
            tainted = stand_in or next((t for a in flat if isinstance(a, torch.Tensor) and (t := taint.of(a))), None)
            if tainted is not None:
                return self.derived(func, args, kwargs, stand_in, str(tainted))
            result = func(*args, **kwargs)
            if isinstance(result, torch.Tensor) and result.device.type == "cpu":
                result = self.fresh(result, flat)
            return result

        @staticmethod
        def derived(func, args, kwargs, stand_in, why: str):
            """An op on a reference's stand-in (or on a tensor one was written into): no data results."""
            name = getattr(func, "__name__", "")
            dest = kwargs.get("out", args[0] if args else None)
            writes = "out" in kwargs or name == "__setitem__" or (name.endswith("_") and not name.endswith("__"))
            if writes and isinstance(dest, torch.Tensor):
                taint.mark(dest, why)
                if stand_in is None:
                    func(*args, **kwargs)
                return None if name == "__setitem__" else dest
            if stand_in is not None:
                return standins.StandIn(f"torch.{name}({why})")
            result = func(*args, **kwargs)
            for t in tree_flatten(result)[0]:
                if isinstance(t, torch.Tensor):
                    taint.mark(t, why)
            return result

        @staticmethod
        def fresh(result, flat):
            """Register the result's storage; a new allocation moves to CUDA-aligned storage (host code
            checks TMA bases for 128-byte alignment, which CUDA's allocator always gives)."""
            ptr = result.untyped_storage().data_ptr()
            ref = storages.get(ptr)
            known = ref is not None and ref() is not None
            inputs = {a.untyped_storage().data_ptr() for a in flat if isinstance(a, torch.Tensor)}
            if (not known and ptr not in inputs and type(result) is torch.Tensor and ptr % standins.CUDA_ALIGN
                    and (not result.requires_grad or result.is_leaf) and result.layout == torch.strided):
                result = standins.aligned_copy(result)
                ptr = result.untyped_storage().data_ptr()
                known = False
            if not known:
                # every tensor the test makes (weakly), so a tensor map's global address finds its bytes
                storages[ptr] = weakref.ref(result)
            return result

    class _Props:
        multi_processor_count = NUM_SMS
        major, minor = capability
        name = "NVIDIA B200 (modelcheck CPU capture)"
        total_memory = 180 << 30
        shared_memory_per_block_optin = 232448
        L2_cache_size = 126 << 20

    class _Stream:
        """A stream, a stream context, a graph capture: work is recorded, never run, so ordering is moot."""
        device = torch.device("cuda", 0)

        def __init__(self, *a, **k):
            self.cuda_stream = 0

        def synchronize(self):
            pass

        def wait_stream(self, *a):
            pass

        def wait_event(self, *a):
            pass

        def record_event(self, *a):
            return _Event()

        def query(self):
            return True

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    class _Event(_Stream):
        def record(self, *a):
            pass

        def wait(self, *a):
            pass

        def elapsed_time(self, *a):
            return 0.0

    class _Graph(_Stream):
        def capture_begin(self, *a, **k):
            pass

        def capture_end(self):
            pass

        def replay(self):
            pass

        def reset(self):
            pass

        def pool(self):
            return None

    cuda = torch.cuda
    cuda.Event = _Event
    cuda.CUDAGraph = _Graph
    cuda.graph = lambda *a, **k: _Stream()
    cuda.ExternalStream = _Stream
    cuda.is_current_stream_capturing = lambda: False
    cuda._sleep = lambda *a: None
    cuda.nvtx.range_push = cuda.nvtx.range_pop = cuda.nvtx.mark = lambda *a, **k: None
    cuda.nvtx.range = lambda *a, **k: _Stream()
    cuda.synchronize = lambda *a, **k: None
    cuda.is_available = lambda: True
    cuda.get_device_capability = lambda *a, **k: capability
    cpu_generator = torch.Generator
    torch.Generator = lambda *a, **k: cpu_generator(device="cpu")   # type: ignore[misc]
    cuda.manual_seed = cuda.manual_seed_all = lambda *a, **k: None
    cuda.get_device_properties = lambda *a, **k: _Props()
    cuda.current_device = lambda: 0
    cuda.set_device = lambda *a, **k: None
    cuda.empty_cache = lambda: None
    cuda.device_count = lambda: 1
    cuda.current_stream = lambda *a, **k: _Stream()
    cuda.Stream = _Stream
    cuda.stream = lambda *a, **k: _Stream()
    cuda.is_initialized = lambda: True
    mode = CpuOnly()
    mode.__enter__()
    return mode


# the correctness references the tests compare against (CUDA-only libraries): absent on a CPU machine
REFERENCE_PACKAGES = ("cutlass", "flashinfer", "flash_attn", "triton", "deep_gemm", "deep_ep", "sgl_kernel",
                      "cudnn", "cuda", "nvidia", "tilelang", "vllm")


class _ReferenceStubs:
    """A meta-path finder standing in for reference packages that are not installed: any attribute or call of
    the stand-in gives another stand-in.  A test that builds its reference before launching the kernel then
    still reaches the launch the capture records; the comparison afterwards fails, as it would anyway."""

    def find_spec(self, name, path=None, target=None):
        import importlib.machinery
        if name.split(".")[0] not in REFERENCE_PACKAGES:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    touched: list = []
    encodes: list = []   # the encoder's call list: the CUDA driver stand-in records into it

    def create_module(self, spec):
        self.touched.append(spec.name)
        if spec.name in standins.DRIVER_MODULES:
            return standins.driver_module(spec.name, spec, self.encodes)
        return standins.stand_in_module(spec.name, spec)

    def exec_module(self, module):
        pass


def _stub_missing_references(encodes: list) -> list[str]:
    """Install the stand-ins for the reference packages this environment lacks, and for libcuda loaded through
    ctypes; the names stubbed."""
    import ctypes
    import ctypes.util
    import importlib.util
    _ReferenceStubs.encodes = encodes
    cdll = ctypes.CDLL

    def load(name, *args, **kwargs):
        if "libcuda" in str(name or ""):
            return standins.CtypesDriver(encodes)
        return cdll(name, *args, **kwargs)

    ctypes.CDLL = load   # type: ignore[misc,assignment]
    find = ctypes.util.find_library
    ctypes.util.find_library = lambda n: "libcuda.so.1" if n == "cuda" else find(n)
    missing = []
    for name in REFERENCE_PACKAGES:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except (ImportError, ValueError):
            missing.append(name)
    if missing:
        finder = _ReferenceStubs()
        finder.find_spec = (lambda name, path=None, target=None, _f=finder.find_spec:   # type: ignore[method-assign]
                            _f(name, path, target) if name.split(".")[0] in missing else None)
        sys.meta_path.append(finder)
    return missing


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
    return None


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
        self.earlier: dict[int, str] = {}   # storage -> "function.param" of the recorded calls so far

    def __call__(self, func, args) -> None:
        fname = _match(self.funcs, func)
        if fname is None:
            self.unmatched += 1
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
        """The encode a stand-in descriptor passed as a tensor came from."""
        if not hasattr(arg, "untyped_storage"):
            return None
        found = standins.descriptor_serials(_numpy(arg))
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
    """Run module `name`'s `run_test(**CONFIGS[0])` with recorders; write its kernels' inputs."""
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
    _cpu_torch(mod_rec.get("arch") or "sm_100a", storages, taint)
    rec["stubbed_references"] = _stub_missing_references(encoder.calls)
    t0 = time.perf_counter()
    module = registry.load_kernel(name, strict=True)
    if getattr(module, "compile_kernel", None) is original:   # imported at module level
        module.compile_kernel = runner.compile_kernel
    config = {k: v for k, v in (module.CONFIGS[0] if getattr(module, "CONFIGS", None) else {}).items()
              if k != "label"}
    try:
        module.run_test(**config)
        rec["run_test"] = "returned"
    except AllCaptured:
        rec["run_test"] = "stopped after the last function's call"
    except BaseException as err:   # noqa: BLE001 -- the reference comparison on unlaunched outputs fails
        rec["run_test"] = f"{type(err).__name__}: {str(err)[:300]}"
        rec["run_test_traceback"] = traceback.format_exc()[-3000:]
    rec["capture_s"] = round(time.perf_counter() - t0, 3)
    rec["stand_ins_imported"] = sorted(set(_ReferenceStubs.touched))
    rec["torch_calls"] = OPS[0]
    for fname, out in snap.functions.items():
        if "error" not in out:
            np.savez(os.path.join(cache, name, f"{fname}.inputs.npz"), **snap.arrays[fname])
            out["npz"] = f"{name}/{fname}.inputs.npz"
        rec["functions"][fname] = out
    rec["unmatched_calls"] = snap.unmatched
    return rec


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
        mod["capture"] = {k: rec.get(k) for k in ("run_test", "capture_s", "wall_s", "unmatched_calls", "error")}
        for f in mod["functions"]:
            got = rec.get("functions", {}).get(f["function"])
            f["captured"] = got if got and "npz" in got else {"why": (got or {}).get("error") or why}
    return index
