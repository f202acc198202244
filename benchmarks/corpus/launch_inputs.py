"""Inputs of a corpus function from the configuration and the module's launch recipe (benchmarks/corpus/recipes.py),
for functions whose capture failed: `make_inputs` by the pre-lowering parameter names, `lowered_inputs` bound to
the lowered function's own parameters as captured inputs are (check.bind_params).  Split out of check.py, which
re-exports `make_inputs`."""
from __future__ import annotations

from pathlib import Path

from modelcheck.numsim.budget import DEFAULT_MAX_MEMORY_MB

# a recipe's buffers, together, stay within the memory a check is given (past it the machine, not the checker,
# would fail: the MSA combine's partial outputs are 6 GB at its registry size)
INPUT_BYTES = DEFAULT_MAX_MEMORY_MB << 20


def make_inputs(func_rec: dict, config: dict, fill: str, recipe=None):
    """(inputs, problems): arrays for buffer parameters, scalars from the config (or the module's launch
    recipe, benchmarks/corpus/recipes.py), tensor-map descriptors from the recorded host-code encodes, or why a
    parameter cannot be given.  A symbolic extent is a config key, a recipe value, or an expression over them
    (`num_heads_kv * (total_rows + 1)`); a buffer the recipe builds (`data`: offsets, indices) gets its valid
    contents in every fill."""
    import numpy as np
    from benchmarks.corpus.check import _dtype, _fill, tensor_map_inputs
    from benchmarks.corpus.recipes import RecipeError, evaluate
    rng = np.random.default_rng(0)
    inputs, problems = {}, []
    sized: dict[str, int] = {}
    env: dict = {k: v for k, v in config.items() if isinstance(v, (int, float, str, bool)) or v is None}
    if recipe is not None:
        env, problems = recipe.environment(env)
    maps = func_rec.get("tensor_maps") or {}
    if maps and "_missing" not in maps:
        inputs.update(tensor_map_inputs(maps, fill, rng))
    for p in func_rec.get("params", []):
        name, kind = p["name"], p.get("kind")
        if kind == "buffer":
            shape = []
            for d in p.get("shape", []):
                value = d if isinstance(d, int) else env.get(d)
                if not isinstance(value, int) and recipe is not None and not isinstance(d, int):
                    try:
                        value = evaluate(d, env)      # an extent printed as an expression over scalars
                    except RecipeError:
                        value = None
                if isinstance(value, (int, np.integer)):
                    shape.append(int(value))
                else:
                    where = "the configuration or the launch recipe" if recipe is not None else "the configuration"
                    problems.append(f"extent {d} of {name} is not bound by {where}")
                    shape = None
                    break
            if shape is None:
                continue
            dtype = _dtype(p.get("dtype", "float32"))
            if recipe is not None and not sized:
                sized.update(_sizes(func_rec, env))
                if sum(sized.values()) > INPUT_BYTES:
                    big = sorted(sized.items(), key=lambda kv: -kv[1])[:3]
                    problems.append(f"the inputs need {sum(sized.values()) / 2**30:.1f} GB (" +
                                    ", ".join(f"{k} {v / 2**30:.2f} GB" for k, v in big) + "), over the "
                                    f"{DEFAULT_MAX_MEMORY_MB} MB a check is given: not allocated")
                    return inputs, problems
            arr = _fill(shape, dtype, fill, rng)
            if recipe is not None and name in recipe.data:
                try:
                    built = np.asarray(evaluate(recipe.data[name], env)).astype(arr.dtype).reshape(-1)
                except RecipeError as err:
                    problems.append(f"launch recipe data {name}: {err}")
                    continue
                if built.size != arr.size:
                    problems.append(f"launch recipe data {name}: {built.size} elements for a buffer of {arr.size}")
                    continue
                arr = built.reshape(shape)
            inputs[name] = arr
        elif kind == "scalar":
            value = env.get(name)
            if isinstance(value, (int, float, np.integer, np.floating)):    # a bool flag passes as 0/1
                inputs[name] = value.item() if isinstance(value, np.generic) else \
                    int(value) if isinstance(value, bool) else value
            else:
                where = "the configuration or the launch recipe" if recipe is not None else "the configuration"
                problems.append(f"scalar parameter {name} has no value in {where}")
        elif kind == "tensor_map":
            if recipe is not None and name in recipe.maps:
                continue                          # after the buffers: a map may read one of them
            if name not in inputs:
                why = maps.get("_missing", "no descriptor derived from the library's host code")
                problems.append(f"tensor-map parameter {name}: {why}")
        else:
            problems.append(f"parameter {name} of kind {kind} cannot be given")
    wanted = {p["name"] for p in func_rec.get("params", []) if p.get("kind") == "tensor_map"}
    if recipe is not None and wanted & set(recipe.maps):
        encodes, why = recipe.encodes(env, wanted)
        problems += why
        inputs.update(_recipe_maps(encodes, inputs, fill, rng, problems))
    return inputs, problems


def _sizes(func_rec: dict, env: dict) -> dict[str, int]:
    """Bytes of each buffer parameter whose extents the environment binds (the others are named elsewhere)."""
    import numpy as np
    from benchmarks.corpus.check import _dtype
    from benchmarks.corpus.recipes import RecipeError, evaluate
    out = {}
    for p in func_rec.get("params", []):
        if p.get("kind") != "buffer":
            continue
        try:
            dims = [d if isinstance(d, int) else env[d] if d in env else evaluate(d, env) for d in p.get("shape", [])]
            out[p["name"]] = int(np.prod([int(x) for x in dims], dtype=np.int64)) * \
                np.dtype(_dtype(p.get("dtype", "float32"))).itemsize
        except (RecipeError, TypeError, ValueError):
            continue
    return out


def _recipe_maps(encodes: dict, inputs: dict, fill: str, rng, problems: list) -> dict:
    """TensorMap descriptors of a recipe's encodes: over the named buffer parameter's array (the bytes the
    kernel also reads or writes directly), else over one host tensor per name, shared by its maps."""
    from benchmarks.corpus.check import _SWIZZLES, _dtype, _elements, _fill
    from modelcheck.numsim import TensorMap
    from modelcheck.numsim.tensormap import DTYPES, TensorMapError
    tensors: dict = {}
    out = {}
    for param, enc in encodes.items():
        key = enc["tensor"]
        # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B (13): 4-bit elements packed two a byte, as a float4_e2m1fn map
        packed = enc["dtype"] == "16U4_ALIGN8B"
        dtype = "float4_e2m1fn" if packed else enc["dtype"]
        if dtype not in DTYPES:
            problems.append(f"launch recipe map {param}: element type {enc['dtype']} is not modeled by NumSim's "
                            f"tensor maps ({', '.join(DTYPES)}, 16U4_ALIGN8B)")
            continue
        if enc["swizzle"] not in _SWIZZLES:
            problems.append(f"launch recipe map {param}: swizzle code {enc['swizzle']} is not modeled by NumSim's "
                            f"tensor maps (codes {sorted(_SWIZZLES)}: none, 32B, 64B, 128B, 128B_ATOM_32B)")
            continue
        if key in inputs:
            base = inputs[key].reshape(-1).view("uint8")
        elif "tensor_shape" in enc:
            if key not in tensors:
                tensors[key] = _fill(enc["tensor_shape"], _dtype(enc["tensor_dtype"]), fill, rng).reshape(-1)
            base = tensors[key].view("uint8")
        else:
            problems.append(f"launch recipe map {param}: its tensor {key} is neither a buffer nor given a shape")
            continue
        try:
            out[param] = TensorMap(_elements(base[enc["byte_offset"]:], dtype), enc["dims"], enc["strides"],
                                   enc["box"], enc["element_strides"], dtype,
                                   swizzle=_SWIZZLES[enc["swizzle"]],
                                   oob_fill="nan" if enc["oob_fill"] else "zero").numpy()
        except (TensorMapError, KeyError) as err:
            problems.append(f"launch recipe map {param}: {err}")
    return out


def lowered_inputs(func, frec: dict, inputs: dict, pre_path: Path):
    """Inputs made by the pre-lowering parameter names, bound to the lowered function's own parameters (its
    `X_ptr` handles, the integers its host computes, the maps at the host's positions) as captured ones are."""
    kinds = {p["name"]: p.get("kind") for p in frec.get("params", [])}
    arrays = {k: v for k, v in inputs.items() if kinds.get(k) == "buffer"}
    scalars = {k: v for k, v in inputs.items() if kinds.get(k) == "scalar"}
    maps = {k: v for k, v in inputs.items() if kinds.get(k) == "tensor_map"}
    from benchmarks.corpus.check import bind_params
    return bind_params(func, arrays, scalars, maps, {}, pre_path)
