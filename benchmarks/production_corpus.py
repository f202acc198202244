"""The production corpus (issue 14): every kernel of `tirx-kernels` through the real compiler,
printed, parsed and checked by modelcheck, plus a census of what our front end still rejects.

Usage: python benchmarks/production_corpus.py [--only MODULE ...] [--no-build] [--stage parse|check]
                                              [--capture] [--census] [--cache DIR] [--jobs N] [--timeout S]
                                              [--merge]

Run it with the Python of the environment `benchmarks/corpus_setup.sh` makes (apache-tvm
0.27.0.post1, tirx-kernels 0.1.2.post1 --no-deps, torch 2.13.0 CPU, modelcheck editable).

1. build: for every registry module (`tirx_kernels.registry.kernel_index()`), one child process
   with TIRX_PREPARE_CUDA_ARCH=<first listed arch> and TIRX_PREPARE_NUM_SMS=148 calls
   `get_kernel(**CONFIGS[0])` (or, when CONFIGS[0]'s inputs are known not to fit a check, the first listed
   configuration whose inputs do: benchmarks/corpus/config_fit.py, recorded as `config_index` / `config_why`)
   and prints each function before lowering (`func.script()`) and
   after TVM's `tirx` pipeline and device finalization (what reaches CUDA codegen) into
   `<cache>/<module>/<function>.{pre,lowered,host}.py`; `<cache>/index.json` records module,
   config, arch, function, parameters (kind, dtype, shape), build status and errors.  The
   printed kernels stay in the cache, outside the repository.  `--no-build` reuses the cache.
2. `--capture`: per module, a child runs the library's own `run_test(**config)` (the built one) on the CPU with the
   compiler's launch replaced by a recorder (benchmarks/corpus/capture.py), and saves the arguments the
   library passes to each kernel (`<cache>/<module>/<function>.inputs.npz`, scalars and tensor maps in
   the index); the check stage then uses the library's own inputs.
3. parse / check: per function and generation, a child process runs `ir.parse`, then (stage
   `check`) Synccheck and Racecheck on zero-filled and random inputs of the parameters' shapes;
   it records parsed, the first parse error (line, construct), verdicts, finding kinds, time and
   the first unmodeled op.  Writes benchmarks/results/production_corpus.json and prints a table
   (`--only` alone: `<cache>/production_corpus_partial.json`; `--only ... --merge`: the selected modules'
   rows replace theirs in the last full payload, and the results are written from the merged rows).
4. `--census`: from the cache alone, the constructs our parser rejects (each function's full
   list, found by stubbing each rejected construct and re-parsing) and the ops each function
   uses with whether `ir.ops.classify` knows them.  Writes
   benchmarks/results/production_corpus_census.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import RESULTS, record  # noqa: E402

DEFAULT_CACHE = Path(os.environ.get("MODELCHECK_CORPUS_CACHE", Path.home() / ".cache" / "modelcheck" / "corpus"))
NUM_SMS = "148"
MARK = "@@CORPUS-RECORD@@"


def _child(argv: list[str], env: dict, timeout: float) -> tuple[dict | None, str, float]:
    """Run one child; (its JSON record or None, the tail of its output, seconds)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd=str(ROOT))
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else (err.stdout or "")
        return None, f"timeout after {timeout:.0f} s\n{out[-2000:]}", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):]), "", seconds
    return None, f"exit {proc.returncode}\n{proc.stderr[-3000:]}", seconds


def registry_modules() -> dict[str, list[str]]:
    """{registry name: its runtime CUDA archs}, from the package's literal KERNEL_META index."""
    from tirx_kernels import registry
    return {name: list(rec.runtime_cuda_archs) for name, rec in sorted(registry.kernel_index().items())}


def build_all(names: list[str], archs: dict, cache: Path, jobs: int, timeout: float) -> list[dict]:
    def one(name: str) -> dict:
        env = dict(os.environ, TIRX_PREPARE_CUDA_ARCH=archs[name][0], TIRX_PREPARE_NUM_SMS=NUM_SMS,
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        rec, err, seconds = _child([sys.executable, "-m", "benchmarks.corpus.build", name, str(cache)], env, timeout)
        if rec is None:
            rec = {"module": name, "arch": archs[name][0], "archs": archs[name], "status": "build_error",
                   "error": err.strip().splitlines()[-1] if err.strip() else "no output", "traceback": err,
                   "functions": []}
        rec["wall_s"] = round(seconds, 2)
        status = rec["status"] if rec["status"] != "built" else f"built {len(rec['functions'])} function(s)"
        print(f"  build {name:<62} {status:<24} {seconds:6.1f} s", flush=True)
        return rec

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, names))


def select(name: str, only: list[str] | None, names) -> bool:
    """`--only`: a registry name selects exactly that module; anything else selects by substring."""
    if not only:
        return True
    return any(o == name if o in names else o in name for o in only)


def load_index(cache: Path) -> dict:
    path = cache / "index.json"
    if not path.exists():
        sys.exit(f"no corpus index at {path}: run without --no-build first")
    return json.loads(path.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=None, metavar="MODULE", help="registry names (or substrings)")
    ap.add_argument("--no-build", action="store_true", help="reuse the printed cache")
    ap.add_argument("--stage", choices=("none", "parse", "check"), default="check")
    ap.add_argument("--capture", action="store_true",
                    help="capture each kernel's arguments from the library's own run_test (CPU, nothing launched)")
    ap.add_argument("--census", action="store_true", help="write the construct and op census from the cache")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--jobs", type=int, default=1, help="child processes at once")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per child (build or check)")
    ap.add_argument("--merge", action="store_true",
                    help="with --only: replace the selected modules' rows in the last full check payload and write "
                         "the results from the merged rows (the other rows are not rerun)")
    args = ap.parse_args(argv)
    cache = args.cache.expanduser().resolve()
    if cache == ROOT or ROOT in cache.parents:
        sys.exit(f"the cache {cache} lies inside the repository; printed kernels must stay outside it")

    if not args.no_build:
        archs = registry_modules()
        names = [n for n in archs if select(n, args.only, archs)]
        print(f"building {len(names)} of {len(archs)} registry modules into {cache}")
        cache.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        records = build_all(names, archs, cache, args.jobs, args.timeout)
        old = json.loads((cache / "index.json").read_text()) if (cache / "index.json").exists() else {}
        kept = [r for r in old.get("modules", []) if r["module"] not in set(names)] if args.only else []
        wall = round(time.perf_counter() - t0, 1)
        index = {"modules": sorted(kept + records, key=lambda r: r["module"]), "versions": _versions(),
                 "build_jobs": old.get("build_jobs") if args.only else args.jobs,
                 "build_wall_s": old.get("build_wall_s") if args.only else wall}
        if args.only:
            index["last_partial_build"] = {"modules": names, "wall_s": wall}
        (cache / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
        _print_build_summary(index)
    index = load_index(cache)
    if args.capture:
        from benchmarks.corpus import capture
        t0 = time.perf_counter()
        index = capture.run_all(index, cache, only=args.only, jobs=args.jobs, timeout=args.timeout, child=_child,
                                select=select)
        index["capture_wall_s"] = round(time.perf_counter() - t0, 1)
        if args.only:   # a capture takes minutes: keep what other runs wrote to the other modules meanwhile
            names = {m["module"] for m in index["modules"]}
            mine = {m["module"]: m for m in index["modules"] if select(m["module"], args.only, names)}
            index = dict(load_index(cache), capture_wall_s=index["capture_wall_s"])
            index["modules"] = [mine.get(m["module"], m) for m in index["modules"]]
        (cache / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    if args.census:
        from benchmarks.corpus import census
        data = census.run(index, cache, only=args.only, jobs=args.jobs)
        (cache / "census_full.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        if not args.only:
            census.write(without_kernel_text(data), RESULTS)
        census.print_summary(data)
        print(f"the census with example snippets (kernel text, kept out of the repository): {cache / 'census_full.json'}")
    if args.stage != "none":
        from benchmarks.corpus import check
        rows = check.run_all(index, cache, stage=args.stage, only=args.only, jobs=args.jobs, timeout=args.timeout,
                             child=_child)
        full = cache / "production_corpus_full.json"
        merged = None
        if args.only and args.merge:
            rows, merged = merge_rows(full, rows, args.stage)
        payload = check.payload(index, rows, args.stage)
        if merged is not None:
            payload["merged"] = merged
        complete = not args.only or merged is not None
        # a partial run goes beside the full payload, never over it
        out = full if complete else cache / "production_corpus_partial.json"
        out.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
        if complete:
            path = record("production_corpus", without_kernel_text(payload))
            print(f"wrote {path.relative_to(ROOT)}")
        check.print_summary(payload)
    return 0


def merge_rows(full: Path, rows: list[dict], stage: str) -> tuple[list[dict], dict]:
    """The last full payload's rows with those of the modules just run replaced; what was merged."""
    if not full.exists():
        sys.exit(f"--merge: no full check payload at {full} to merge into: run the check stage without --only")
    old = json.loads(full.read_text())
    if old.get("stage") != stage:
        sys.exit(f"--merge: the payload at {full} is of stage {old.get('stage')}, not {stage}")
    rerun = {r["module"] for r in rows}
    kept = [r for r in old["rows"] if r["module"] not in rerun]
    merged = {"modules": sorted(rerun), "rows_rerun": len(rows), "rows_kept": len(kept),
              "at": time.strftime("%Y-%m-%d %H:%M:%S")}
    return sorted(kept + rows, key=lambda r: (r["module"], r["function"], r["generation"])), merged


def without_kernel_text(data):
    """A copy without `snippet` fields: the recorded results name positions in the cache, never kernel text."""
    if isinstance(data, dict):
        return {k: without_kernel_text(v) for k, v in data.items() if k != "snippet"}
    if isinstance(data, list):
        return [without_kernel_text(v) for v in data]
    return data


def _versions() -> dict:
    out = {}
    try:
        from importlib.metadata import version
        for dist in ("apache-tvm", "tirx-kernels", "torch", "apache-tvm-ffi"):
            try:
                out[dist] = version(dist)
            except Exception:   # noqa: BLE001 -- a missing distribution is recorded as absent
                out[dist] = None
    except ImportError:
        pass
    return out


def _print_build_summary(index: dict) -> None:
    mods = index["modules"]
    built = [m for m in mods if m["status"] == "built"]
    funcs = [f for m in built for f in m["functions"]]
    print(f"\n{len(built)}/{len(mods)} modules built, {len(funcs)} functions; "
          f"{sum(1 for f in funcs if 'pre' in f)} printed, {sum(1 for f in funcs if 'lowered' in f)} lowered; "
          f"build wall {index['build_wall_s']} s")
    for m in mods:
        if m["status"] != "built":
            print(f"  {m['module']:<62} {m.get('error', '')[:110]}")
    for m in built:
        for f in m["functions"]:
            if "lowered_error" in f or "pre_error" in f:
                print(f"  {m['module']}/{f['function']}: {(f.get('pre_error') or f.get('lowered_error'))[:110]}")


if __name__ == "__main__":
    sys.exit(main())
