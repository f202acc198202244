"""Build one `tirx-kernels` registry module with the real compiler and print its functions.

Runs in a child process of `benchmarks/production_corpus.py`, inside the environment made by
`benchmarks/corpus_setup.sh` (apache-tvm 0.27.0.post1, tirx-kernels 0.1.2.post1, torch CPU).
For the module's first configuration (`CONFIGS[0]`; the first listed one whose inputs fit a check when
`CONFIGS[0]`'s do not: benchmarks/corpus/config_fit.py) and first listed CUDA arch it calls
`get_kernel(**config)`, flattens what comes back (a PrimFunc, an IRModule, a nested
list/tuple/dict, or a tirx-lite kernel object with `.func`) and, per function, writes

    <cache>/<module>/<function>.pre.py       func.script(), the pre-lowering generation
    <cache>/<module>/<function>.lowered.py   the device kernel(s) after TVM's `tirx` pipeline and
                                             the device finalization passes, i.e. what reaches
                                             CUDA codegen (`tvm.tirx.build` steps 3-6)
    <cache>/<module>/<function>.host.py      the host side of the same lowering (for reference)

and prints one JSON record on stdout.  Nothing is launched and no CUDA is initialized.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback


def _flatten(obj, path: str, out: list) -> None:
    """(path, PrimFunc) pairs of whatever `get_kernel` returned."""
    import tvm
    from tvm.tirx import PrimFunc

    if isinstance(obj, PrimFunc):
        out.append((path, obj))
    elif isinstance(obj, tvm.IRModule):
        for gv, func in sorted(obj.functions.items(), key=lambda kv: kv[0].name_hint):
            if isinstance(func, PrimFunc):
                out.append((f"{path}.{gv.name_hint}" if path else gv.name_hint, func))
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _flatten(obj[key], f"{path}.{key}" if path else str(key), out)
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _flatten(item, f"{path}.{i}" if path else str(i), out)
    elif hasattr(obj, "func"):
        _flatten(obj.func, path, out)
    else:
        raise TypeError(f"get_kernel returned {type(obj).__name__} at {path or 'top level'}, not a PrimFunc")


def _function_names(pairs: list) -> list[str]:
    """A file-safe unique name per function: its global symbol, else the path it came from."""
    names, seen = [], {}
    for path, func in pairs:
        symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
        name = str(symbol) if symbol else (path or "main")
        name = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)
        if name in seen:
            seen[name] += 1
            name = f"{name}__{seen[name]}"
        else:
            seen[name] = 0
        names.append(name)
    return names


def _params(func) -> list[dict]:
    """Each parameter: name, kind (buffer / scalar / tensor_map / handle), dtype, shape as text."""
    out = []
    for p in func.params:
        ty_obj = getattr(p, "ty", None)
        ty = type(ty_obj).__name__ if ty_obj is not None else ""
        if ty == "PointerType" and "TensorMap" in str(ty_obj):
            ty = "TensorMap"
        entry = {"name": str(p.name) if hasattr(p, "name") else str(p), "type": ty}
        shape = getattr(p, "shape", None)
        if "TensorMap" in ty:
            entry["kind"] = "tensor_map"
        elif shape is not None and not callable(shape):
            try:
                entry["kind"] = "buffer"
                entry["shape"] = [int(d) if hasattr(d, "value") or isinstance(d, int) else str(d) for d in shape]
                entry["dtype"] = str(p.dtype)
                entry["scope"] = str(p.scope()) if callable(getattr(p, "scope", None)) else ""
            except Exception as err:   # a parameter that looks like a buffer but does not answer as one
                entry["kind"] = "handle"
                entry["error"] = f"{type(err).__name__}: {err}"
        elif "handle" in ty or "Pointer" in ty or "*" in ty:
            entry["kind"] = "handle"
        else:
            entry["kind"] = "scalar"
            entry["dtype"] = str(getattr(p, "dtype", ty))
        out.append(entry)
    return out


def lower(func, arch: str):
    """(device functions {name: PrimFunc}, host IRModule) after the `tirx` pipeline and finalization.

    The same steps `tvm.tirx.build` takes before `tir_to_runtime` hands the modules to codegen:
    BindTarget, the `tirx` pipeline (LowerTIRx ... MakePackedAPI, storage legalization),
    host/device split, then each side's finalization passes.
    """
    import tvm
    from tvm.tirx.build import split_host_device_mods

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    host = tvm.target.Target("llvm" if tvm.runtime.enabled("llvm") else "c")
    mod = tvm.IRModule({"main": func})
    with target:
        mod = tvm.tirx.transform.BindTarget(target.with_host(host))(mod)
        pipeline, finalize_host, finalize_device = tvm.tirx.get_tir_pipeline("tirx")
        mod = pipeline(mod)
        host_mod, device_mods = split_host_device_mods(mod)
        host_mod = finalize_host()(host_mod)
        device = {}
        for _target, dmod in device_mods.items():
            dmod = finalize_device()(dmod)
            for gv, f in sorted(dmod.functions.items(), key=lambda kv: kv[0].name_hint):
                device[gv.name_hint] = f
    return device, host_mod


def _device_text(device: dict) -> str:
    """One device kernel prints as a lone `@T.prim_func`; several (or helpers) as their IRModule."""
    import tvm

    if len(device) == 1:
        return next(iter(device.values())).script()
    return tvm.IRModule(device).script()


# ----------------------------------------------------------------------------- tensor maps from host code

def _address(handle) -> int:
    """An FFI pointer argument as an integer address (0 when it has none)."""
    value = getattr(handle, "value", handle)
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


class EncodeRecorder:
    """A CPU stand-in for `runtime.cuTensorMapEncodeTiled` (the CUDA build registers the real one; the
    CPU build has none), registered in TVM's global function registry so the library's own host code
    produces the exact encode arguments: (descriptor, dtype, rank, data pointer, dims[rank],
    byte strides[rank-1], box[rank], element strides[rank], interleave, swizzle, l2 promotion, oob fill)."""

    def __init__(self):
        self.calls: list[dict] = []

    def __call__(self, desc, dtype, rank, data, *rest):
        rank = int(rank)
        rest = [int(x) for x in rest]
        dims, strides = rest[:rank], rest[rank:2 * rank - 1]
        box, elem = rest[2 * rank - 1:3 * rank - 1], rest[3 * rank - 1:4 * rank - 1]
        modes = rest[4 * rank - 1:]
        self.calls.append({"dtype": str(dtype), "rank": rank, "data": _address(data), "descriptor": _address(desc),
                           "dims": dims, "strides": strides, "box": box, "element_strides": elem,
                           "interleave": modes[0] if modes else 0, "swizzle": modes[1] if len(modes) > 1 else 0,
                           "l2_promotion": modes[2] if len(modes) > 2 else 0,
                           "oob_fill": modes[3] if len(modes) > 3 else 0})
        return 0

    def register(self) -> None:
        import tvm_ffi
        tvm_ffi.register_global_func("runtime.cuTensorMapEncodeTiled", self, override=True)


def _fa4_tensor_maps(module, config: dict, recorder: EncodeRecorder):
    """flash_attention4: the module's `build_tensor_maps(Q, Kt, V, O, ...)` on CPU tensors of the
    configuration's shapes ([batch, seq, heads, head_dim] float16, as its run_gpu allocates them)."""
    import torch
    b, s, hq, hk, d = (config[k] for k in ("batch_size", "seq_len", "num_qo_heads", "num_kv_heads", "head_dim"))
    tensors = {"Q": torch.zeros(b, s, hq, d, dtype=torch.float16), "K": torch.zeros(b, s, hk, d, dtype=torch.float16),
               "V": torch.zeros(b, s, hk, d, dtype=torch.float16), "O": torch.zeros(b, s, hq, d, dtype=torch.float16)}
    module.build_tensor_maps(tensors["Q"], tensors["K"], tensors["V"], tensors["O"], batch_size=b, seq_len_q=s,
                             seq_len_kv=s, num_qo_heads=hq, num_kv_heads=hk, head_dim=d,
                             is_causal=config.get("is_causal", False))
    return tensors, "flash_attention4.build_tensor_maps (the library's host code, params in declaration order)"


# registry name -> adapter(module, config, recorder) -> ({tensor name: torch tensor}, how)
TENSOR_MAP_HOSTS = {"flash_attention4": _fa4_tensor_maps}


def tensor_maps(name: str, module, config: dict, func) -> dict:
    """{param: encode record} for the function's tensor-map parameters, from the library's host code."""
    params = [str(p.name) for p in func.params if "TensorMap" in str(getattr(p, "ty", ""))]
    if not params:
        return {}
    adapter = TENSOR_MAP_HOSTS.get(name)
    if adapter is None:
        return {"_missing": "no adapter reads this kernel's host code; derive the encode arguments by reading it"}
    recorder = EncodeRecorder()
    recorder.register()
    tensors, how = adapter(module, config, recorder)
    by_ptr = {int(t.data_ptr()): (k, t) for k, t in tensors.items()}
    if len(recorder.calls) != len(params):
        return {"_missing": f"{how}: {len(recorder.calls)} encodes for {len(params)} tensor-map parameters"}
    out = {"_source": how}
    for param, call in zip(params, recorder.calls):
        tname, t = by_ptr.get(call["data"], (None, None))
        call = dict(call, tensor=tname, tensor_shape=list(t.shape) if t is not None else None,
                    tensor_dtype=str(t.dtype).replace("torch.", "") if t is not None else None)
        call.pop("data")
        call.pop("descriptor", None)
        out[param] = call
    return out


def build(name: str, cache: str) -> dict:
    """Build registry module `name` at its first configuration whose inputs fit a check (`CONFIGS[0]` unless
    it is known not to: benchmarks/corpus/config_fit.py); write its printed functions under `cache`; return the
    record (`config_index`, and `config_why` when it is not 0 or 0 does not fit)."""
    from tirx_kernels import registry

    record_ = registry.kernel_index()[name]
    arch = record_.runtime_cuda_archs[0]
    rec = {"module": name, "module_path": record_.module_name, "category": record_.category,
           "archs": list(record_.runtime_cuda_archs), "arch": arch, "functions": []}
    t0 = time.perf_counter()
    try:
        module = registry.load_kernel(name, strict=True)
        configs = getattr(module, "CONFIGS", None) or [{}]
    except BaseException as err:   # noqa: BLE001 -- any failure of the library is a recorded build error
        rec.update(status="build_error", error=f"{type(err).__name__}: {err}",
                   traceback=traceback.format_exc()[-4000:], build_s=round(time.perf_counter() - t0, 3))
        return rec
    # the configuration whose inputs fit a check (benchmarks/corpus/config_fit.py), sized with the parameters
    # of the module's last build when the cache has one; a first build learns them from CONFIGS[0]'s
    chosen, why = _fitting_config(name, configs, _previous_functions(cache, name), rec)
    for attempt in range(2):
        out = _build_at(name, module, configs, chosen, why, cache, arch, rec, t0)
        if out.get("status") != "built" and chosen:
            # the smaller configuration does not build: CONFIGS[0] as before, and the row says why
            rec["config_fit_error"] = f"CONFIGS[{chosen}] did not build ({out.get('error', '')[:200]}); built CONFIGS[0]"
            for key in ("status", "error", "traceback"):
                rec.pop(key, None)
            rec["functions"] = []
            return _build_at(name, module, configs, 0, f"{why}; but CONFIGS[{chosen}] did not build, so CONFIGS[0]",
                             cache, arch, rec, time.perf_counter())
        if out.get("status") != "built" or attempt:
            return out
        again, again_why = _fitting_config(name, configs, out["functions"], rec)
        if again == chosen:
            return out
        chosen, why = again, again_why
        rec["functions"] = []
        t0 = time.perf_counter()
    return rec


def _previous_functions(cache: str, name: str) -> list[dict]:
    """The module's function records in the cache's index (their parameters), or [] without one."""
    try:
        with open(os.path.join(cache, "index.json")) as fh:
            index = json.load(fh)
    except (OSError, ValueError):
        return []
    old = next((m for m in index.get("modules", []) if m.get("module") == name), None)
    return list(old.get("functions", [])) if old else []


def _fitting_config(name: str, configs: list, functions: list[dict], rec: dict) -> tuple[int, str | None]:
    try:
        from benchmarks.corpus import config_fit
        return config_fit.choose(name, configs, functions)
    except Exception as err:   # noqa: BLE001 -- sizing is advisory: CONFIGS[0] stays, the failure is recorded
        rec["config_fit_error"] = f"{type(err).__name__}: {err}"[:300]
        return 0, None


def _build_at(name: str, module, configs: list, chosen: int, why: str | None, cache: str, arch: str, rec: dict,
              t0: float) -> dict:
    """Build `CONFIGS[chosen]` of the loaded module into `rec` (see `build`)."""
    try:
        config = dict(configs[chosen])
        rec["config"] = {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
                         for k, v in config.items()}
        rec["config_index"] = chosen
        rec.pop("config_why", None)
        if why:
            rec["config_why"] = why
        config.pop("label", None)
        result = module.get_kernel(**config)
        pairs: list = []
        _flatten(result, "", pairs)
    except BaseException as err:   # noqa: BLE001 -- any failure of the library is a recorded build error
        rec.update(status="build_error", error=f"{type(err).__name__}: {err}",
                   traceback=traceback.format_exc()[-4000:], build_s=round(time.perf_counter() - t0, 3))
        return rec
    rec["build_s"] = round(time.perf_counter() - t0, 3)
    out_dir = os.path.join(cache, name)
    os.makedirs(out_dir, exist_ok=True)
    for fname, (path, func) in zip(_function_names(pairs), pairs):
        frec = {"function": fname, "path": path, "params": _params(func),
                "attrs": {str(k): str(v) for k, v in (func.attrs or {}).items()}}
        try:
            maps = tensor_maps(name, module, config, func)
            if maps:
                frec["tensor_maps"] = maps
        except BaseException as err:   # noqa: BLE001
            frec["tensor_maps"] = {"_missing": f"host code failed: {type(err).__name__}: {err}"[:500]}
        t1 = time.perf_counter()
        try:
            pre = func.script()
            with open(os.path.join(out_dir, f"{fname}.pre.py"), "w") as fh:
                fh.write(pre)
            frec["pre"] = f"{name}/{fname}.pre.py"
            frec["pre_lines"] = pre.count("\n") + 1
        except BaseException as err:   # noqa: BLE001
            frec["pre_error"] = f"{type(err).__name__}: {err}"
        t2 = time.perf_counter()
        try:
            device, host_mod = lower(func, arch)
            text = _device_text(device)
            with open(os.path.join(out_dir, f"{fname}.lowered.py"), "w") as fh:
                fh.write(text)
            with open(os.path.join(out_dir, f"{fname}.host.py"), "w") as fh:
                fh.write(host_mod.script())
            frec["lowered"] = f"{name}/{fname}.lowered.py"
            frec["lowered_lines"] = text.count("\n") + 1
            frec["device_functions"] = sorted(device)
        except BaseException as err:   # noqa: BLE001
            frec["lowered_error"] = f"{type(err).__name__}: {err}"[:4000]
        frec["print_s"] = round(t2 - t1, 3)
        frec["lower_s"] = round(time.perf_counter() - t2, 3)
        rec["functions"].append(frec)
    rec["status"] = "built"
    return rec


def main(argv: list[str]) -> int:
    name, cache = argv[0], argv[1]
    rec = build(name, cache)
    sys.stdout.write("\n@@CORPUS-RECORD@@" + json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
