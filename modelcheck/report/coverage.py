"""What a report covered: the constants, the input sources, the launch, the schedules explored,
and what the kernel's manifest knows about sizes this run did not check.

A verdict is only as wide as what ran: Synccheck and Racecheck decide the kernel at these
constants and inputs, so the report says which they were.  `coverage_lines(report)` is the
text; `coverage_dict(report)` the same as data.  `report.sources` (parameter -> where its
value came from, set by the command line) names the input sources; without it the report
says "given" or "zeros (default)" from the inputs themselves.
"""
from __future__ import annotations

import json
from pathlib import Path

_ORDER = ["clean", "review", "incomplete", "error"]


def constants_text(func, overrides=None) -> str:
    overrides = overrides or {}
    consts = func.constant_values
    if not consts:
        return "none"
    parts = [f"{k}={v}" + (" (--const)" if k in overrides else "") for k, v in consts.items()]
    return ", ".join(parts)


def input_sources(report) -> dict:
    given = getattr(report, "sources", None)
    if given:
        return dict(given)
    result = getattr(report, "result", None)
    inputs = getattr(result, "inputs", None) or {}
    out = {}
    for p in report.func.params:
        v = inputs.get(p.name)
        if v is None:
            out[p.name] = "missing"
        elif p.kind == "scalar":
            out[p.name] = f"{v}"
        else:
            out[p.name] = "given" if getattr(v, "any", lambda: True)() else "zeros"
    return out


def sources_text(sources: dict) -> str:
    """'a, b <- builder.py:f(constants); c <- zeros (default)': parameters grouped by where they came from."""
    groups: dict = {}
    for name, src in sources.items():
        groups.setdefault(src, []).append(name)
    return "; ".join(f"{', '.join(names)} <- {src}" for src, names in groups.items()) or "none"


def launch_text(stats: dict) -> str:
    ns = stats.get("numsim") or {}
    if not ns.get("ctas"):
        return "not started"
    grid, block = ns.get("grid"), ns.get("block")
    return (f"{ns['ctas']} CTA(s) x {ns.get('warps', 0) // max(ns['ctas'], 1)} warp(s) "
            f"(grid {tuple(grid) if grid else '?'}, block {tuple(block) if block else '?'}), "
            f"{ns.get('warp_instructions', 0):,} warp-instructions, target {ns.get('target', '?')}")


def schedules_text(report) -> str:
    st = report.stats
    term = st.get("termination", (st.get("numsim") or {}).get("termination", "completed"))
    if report.checker == "synccheck":
        if "verifier_states" in st:
            text = (f"every schedule of the run's synchronization program ({st['verifier_states']:,} verifier "
                    f"states, {st['verifier_transitions']:,} transitions; {st.get('certified_projections', 0)} of "
                    f"{st.get('projections', 0)} projections certified without search)")
            if st.get("clc_paths"):
                # the default run's numbers; each answer sequence of the CLC requests was one more run
                text += (f"; {st['clc_paths']} answer sequence(s) of the cluster launch control requests "
                         f"({st.get('clc_choice_points', 0)} choice point(s) at most per run, bound "
                         f"{st.get('clc_max_paths')})")
            return text
        return f"one execution (it stopped: {term}), so no schedule search"
    if report.checker == "racecheck":
        return (f"one execution ({term}): {st.get('semantic_accesses', st.get('accesses', 0)):,} memory accesses in "
                f"{', '.join(st.get('spaces', []))}, each conflicting pair judged by happens-before (an unordered "
                f"pair is a race in some schedule)")
    return ""


def coverage_dict(report, overrides=None) -> dict:
    func = report.func
    out = {"constants": dict(func.constant_values), "overridden": sorted(overrides or {}),
           "inputs": input_sources(report), "launch": launch_text(report.stats),
           "schedules": {report.checker: schedules_text(report)}}
    if getattr(func, "origin", ""):
        out["source"] = func.origin
    return out


def coverage_lines(report, overrides=None, indent: str = "  ") -> list[str]:
    sources = input_sources(report)
    lines = [f"{indent}constants: {constants_text(report.func, overrides)}",
             f"{indent}inputs: {sources_text(sources)}",
             f"{indent}launch: {launch_text(report.stats)}"]
    origin = getattr(report.func, "origin", "")
    if origin:     # a real tvm object: whose lines the spans name (ir/source_map.py)
        lines.insert(0, f"{indent}source: {origin}")
    return lines


def manifest_note(func, checker: str, verdict: str, kernel_path: str | None) -> str | None:
    """When the kernel is in a manifest.json beside it that expects a worse verdict of `checker` at other
    constants than this run's, say so (a bug that needs a larger size than the one checked)."""
    if not kernel_path:
        return None
    path = Path(kernel_path).resolve()
    manifest = path.parent / "manifest.json"
    try:
        entries = json.loads(manifest.read_text())["kernels"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    consts = func.constant_values
    for name, entry in sorted(entries.items()):
        if not isinstance(entry, dict) or entry.get("file") != path.name:
            continue
        expect = (entry.get("expect") or {}).get(checker) or {}
        want = expect.get("verdict")
        at = entry.get("constants") or {}
        if want not in _ORDER or _ORDER.index(want) <= _ORDER.index(verdict):
            continue
        differs = {k: v for k, v in at.items() if consts.get(k) != v}
        if not differs and not entry.get("inputs_builder"):
            continue
        kinds = expect.get("kinds") or expect.get("any_kind") or []
        how = " ".join(f"--const {k}={v}" for k, v in differs.items())
        builder = entry.get("inputs_builder")
        if builder:
            module, _, fn = builder.partition(":")
            how += f" --inputs {path.parent / 'inputs' / (module + '.py')}:{fn}"
        now = ", ".join(f"{k}={consts.get(k)}" for k in differs) or "the same constants"
        return (f"note: {manifest.parent.name}/manifest.json ({name}) expects {checker} {want}"
                f"{' (' + ', '.join(kinds) + ')' if kinds else ''} at "
                f"{', '.join(f'{k}={v}' for k, v in at.items()) or 'its defaults'}; this run checked {now}. "
                f"Check that size too: {how.strip()}")
    return None
