"""The CPU environment the capture (benchmarks/corpus/capture.py) runs a test of `tirx-kernels` in.

- a torch function mode sends every `cuda` tensor to the CPU, in fresh storage aligned as CUDA's allocator
  aligns it, and turns ops on reference stand-ins into stand-ins (`standins.StandIn`, `standins.Taint`);
- the `torch.cuda` calls tests make (synchronize, streams, events, graphs, device properties) answer as a
  device of the module's arch would, without a driver;
- reference packages not installed here (CUDA-only) import as stand-ins, the CUDA driver's Python and ctypes
  bindings as tensor-map encode recorders.
"""
from __future__ import annotations

import sys
import weakref

from benchmarks.corpus import standins

NUM_SMS = 148
OPS = [0]   # torch calls the test made (how much CPU work its preparation is)
IGNORED: list[str] = []   # comparisons that failed (unlaunched outputs, stand-in references) and were let pass


def _ignored_comparison(assert_close):
    """`torch.testing.assert_close` that records a mismatch instead of raising: nothing was launched, so a
    comparison has nothing to say, and one that fails before the launch (a reference checked against itself
    on stand-in outputs) must not stop the test from reaching its kernel.  Comparisons build no inputs."""
    def compare(actual, expected, *args, **kwargs):
        try:
            assert_close(actual, expected, *args, **kwargs)
        except (AssertionError, TypeError, standins.ReferenceUnavailable) as err:
            IGNORED.append(f"{type(err).__name__}: {str(err).strip().splitlines()[0][:160]}")
    return compare


class LiveViews:
    """Weak references to tensors sharing one storage; calling it gives a live one (or None).  The newest
    few are kept: a storage lives as long as any of its views does."""

    KEEP = 8

    def __init__(self, tensor):
        self.refs = [weakref.ref(tensor)]

    def add(self, tensor) -> None:
        self.refs = [r for r in self.refs if r() is not None][-(self.KEEP - 1):] + [weakref.ref(tensor)]

    def __call__(self):
        return next((t for t in (r() for r in reversed(self.refs)) if t is not None), None)


def cpu_torch(arch: str, storages: dict, taint: standins.Taint):
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
                storages[ptr] = LiveViews(result)
            elif isinstance(ref, LiveViews):
                # a view of a known storage: it may outlive the tensor registered first
                # (`data = data.reshape(...).view(...)` drops the original)
                ref.add(result)
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

    class _AnyGenerator(type(cpu_generator)):   # type: ignore[misc]
        def __instancecheck__(cls, obj):
            return isinstance(obj, cpu_generator)

    class _CpuGenerator(cpu_generator, metaclass=_AnyGenerator):   # type: ignore[misc]
        """`torch.Generator(device="cuda")` gives a CPU generator; still a class (`torch.Generator | None`
        annotations are evaluated when torch.distributed imports)."""
        def __new__(cls, *a, **k):
            return cpu_generator(device="cpu")

    torch.Generator = _CpuGenerator   # type: ignore[misc]
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
    torch.testing.assert_close = _ignored_comparison(torch.testing.assert_close)
    mode = CpuOnly()
    mode.__enter__()
    return mode


# the correctness references the tests compare against (CUDA-only libraries): absent on a CPU machine
REFERENCE_PACKAGES = ("cutlass", "flashinfer", "flash_attn", "triton", "deep_gemm", "deep_ep", "sgl_kernel",
                      "cudnn", "cuda", "nvidia", "tilelang", "vllm", "fla")


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


def stub_missing_references(encodes: list) -> list[str]:
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
