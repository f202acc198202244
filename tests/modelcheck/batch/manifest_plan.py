"""kernels/manifest.json as a batch plan: one sweep per manifest entry, with the entry's constants,
inputs, inputs_builder and the checks it states expectations for (synccheck -> sync, racecheck ->
race, prove -> prove with its symbolic ranges)."""
from __future__ import annotations

import json

from tests.manifest import INPUT_BUILDERS, KERNELS, entries

STAGE_CHECK = {"synccheck": "sync", "racecheck": "race", "prove": "prove"}


def toml_value(v) -> str:
    """TOML for the plain values a plan holds (JSON strings and numbers are valid TOML)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, bool) or v is None:
        raise TypeError(f"no TOML for {v!r}")
    return json.dumps(v)


def manifest_sweeps(names=None, stages=tuple(STAGE_CHECK)) -> list[tuple[str, dict]]:
    """(entry name, sweep table) for the manifest entries (all, or `names`) with an expectation in `stages`."""
    out = []
    for name, entry in entries():
        if names is not None and name not in names:
            continue
        checks = [STAGE_CHECK[s] for s in stages if entry["expect"].get(s) is not None]
        if not checks:
            continue
        sweep = {"kernels": [str(KERNELS / entry["file"])], "checks": checks}
        if entry["constants"]:
            sweep["constants"] = dict(entry["constants"])
        if entry["inputs"]:
            sweep["inputs"] = dict(entry["inputs"])
        if entry.get("inputs_builder"):
            module, _, function = entry["inputs_builder"].partition(":")
            sweep["inputs_builder"] = f"{INPUT_BUILDERS / (module + '.py')}:{function}"
        if "prove" in checks:
            sweep["prove"] = {"symbolic": {n: f"{lo}..{'' if hi is None else hi}"
                                           for n, (lo, hi) in entry["expect"]["prove"]["symbolic"].items()}}
        out.append((name, sweep))
    return out


def plan_text(sweeps: list[tuple[str, dict]], budget_seconds: float = 300) -> str:
    lines = ["# generated from kernels/manifest.json", "[budget]", f"seconds = {budget_seconds}", ""]
    for name, sweep in sweeps:
        lines.append(f"[[sweep]]   # {name}")
        lines.extend(f"{k} = {toml_value(v)}" for k, v in sweep.items())
        lines.append("")
    return "\n".join(lines)


def expected(names=None, stages=tuple(STAGE_CHECK)) -> dict:
    """(kernel file, constants, check) -> the manifest's expectation for that point."""
    out = {}
    for name, entry in entries():
        if names is not None and name not in names:
            continue
        for stage in stages:
            expect = entry["expect"].get(stage)
            if expect is not None:
                # entries may share a kernel file and constants and differ in their inputs (negative_extent and
                # its fixed twin): the inputs builder is part of the point
                builder = (entry.get("inputs_builder") or "").partition(":")[2] or None
                key = (str(KERNELS / entry["file"]), json.dumps(entry["constants"], sort_keys=True), STAGE_CHECK[stage],
                       builder)
                out[key] = (name, expect)
    return out
