"""Which listed configuration a corpus module is built, captured and checked at (issue 14).

The benchmark builds each module at `CONFIGS[0]`, which for some modules is a production-size configuration
whose inputs do not fit the memory a check is given (the fused KDA backward: 3.4 GB, the MSA combine: 6.2 GB).
A user checking on the CPU would pick a smaller configuration of the module's own list, and so does the build:
when `CONFIGS[0]`'s inputs are known not to fit, it takes the first listed configuration whose inputs are known
to fit, and records which one and why (`config_index`, `config_why` in the index and the results).

A configuration's input bytes are those of each function's buffer parameters, their extents bound by the
configuration or the module's launch recipe (benchmarks/corpus/recipes.py), exactly as the check stage binds
them (launch_inputs.make_inputs).  A configuration fits when every function's inputs take at most half the
memory a check is given: the run copies the buffers the kernel writes, so inputs past half of it can take the
run past its budget.  An alternative must be fully known (every buffer sized, the recipe evaluates for it); a
`CONFIGS[0]` that cannot be sized stays (what its capture records decides).
"""
from __future__ import annotations

from typing import Any

from benchmarks.corpus.launch_inputs import INPUT_BYTES

FIT_BYTES = INPUT_BYTES // 2


def as_recorded(config: dict) -> dict:
    """A configuration as the index records it (and the check stage reads it): scalars as they are, anything
    else (a tuple of sequence lengths) as its repr."""
    return {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)) for k, v in config.items()}


def input_bytes(module: str, functions: list[dict], config: dict) -> tuple[int | None, str]:
    """(the largest function's input bytes at `config`, which function and its biggest buffers), or (None, why
    they are not known): a buffer no extent binds, or the module's recipe failing for this configuration."""
    from benchmarks.corpus.launch_inputs import _sizes
    from benchmarks.corpus.recipes import recipe_for
    env: dict[str, Any] = {k: v for k, v in as_recorded(config).items() if k != "label"}
    worst: tuple[int, str] = (0, "no buffer parameters")
    for frec in functions:
        recipe = recipe_for(module, frec["function"])
        fenv = env
        if recipe is not None:
            fenv, problems = recipe.environment(env)
            if problems:
                return None, f"{frec['function']}: {problems[0]}"
        sizes = _sizes(frec, fenv)
        buffers = [p["name"] for p in frec.get("params", []) if p.get("kind") == "buffer"]
        unsized = [b for b in buffers if b not in sizes]
        if unsized:
            return None, f"{frec['function']}: the extents of {unsized[0]} are not bound by the configuration" + \
                (" or the launch recipe" if recipe is not None else "")
        total = sum(sizes.values())
        if total >= worst[0]:
            big = sorted(sizes.items(), key=lambda kv: -kv[1])[:2]
            worst = (total, f"{frec['function']}: " + ", ".join(f"{k} {_size(v)}" for k, v in big))
    return worst


def choose(module: str, configs: list[dict], functions: list[dict]) -> tuple[int, str | None]:
    """(index into `configs` to build at, why it is not 0 -- or why 0 stays although it does not fit; None when
    `CONFIGS[0]` fits or cannot be sized).  `functions`: the module's function records (their parameters)."""
    if not configs or not functions:
        return 0, None
    first, what = input_bytes(module, functions, configs[0])
    if first is None or first <= FIT_BYTES:
        return 0, None
    over = (f"CONFIGS[0] ({configs[0].get('label', 'unlabelled')}) needs {_size(first)} of inputs ({what}), over "
            f"{_size(FIT_BYTES)} (half the {INPUT_BYTES >> 20} MB a check is given: the run copies what it writes)")
    skipped = []
    for i, config in enumerate(configs[1:], start=1):
        size, why = input_bytes(module, functions, config)
        if size is not None and size <= FIT_BYTES:
            return i, f"{over}; CONFIGS[{i}] ({config.get('label', 'unlabelled')}) is the first listed " \
                      f"configuration whose inputs fit ({_size(size)})" + \
                      (f", after {len(skipped)} that do not or cannot be sized" if skipped else "")
        skipped.append(why)
    return 0, f"{over}; no listed configuration's inputs fit"


def _size(n: int) -> str:
    return f"{n / 2**30:.2f} GB" if n >= 2**30 else f"{n / 2**20:.1f} MB"
