"""Start-up: what a user waits for before modelcheck answers (issue 19; target <= 0.3 s CPU, and the KDA T=320
Synccheck end to end <= 0.6 s CPU as a process).

Usage: python benchmarks/startup.py [--repeat 5]
Each command runs as its own process; the figure is that process's CPU time (user + system, from
getrusage of the children), median of --repeat, with the machine's load average next to it (other
workers share the 2 cores).  The grammar tables are cached as JSON in $XDG_CACHE_HOME/modelcheck
(issue 13), and so is each kernel file's syntax tree (ir/syntax_cache.py): the `parse, first run`
row uses an empty cache directory, the `first check after an edit` row one that holds only the
grammar (the kernel's tree is parsed and cached again, as after an edit), every other row the warm one.
Bytecode is cached too, as an installed package has it: each command runs once untimed first, with
PYTHONDONTWRITEBYTECODE unset and PYTHONPYCACHEPREFIX a temporary directory (the source tree stays
clean); the `no bytecode cache` row compiles every module in every run (what PYTHONDONTWRITEBYTECODE=1
on a source checkout costs).  The KDA check is measured both ways users run it: the benchmark script
(the Python API: `modelcheck.load`, the inputs module, `modelcheck.synccheck`) and the command line
(`modelcheck sync ... --inputs kernels/inputs/kda.py:kda_fwd`).
Writes benchmarks/results/startup.json.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402

CLI = [sys.executable, "-m", "modelcheck"]
SMALL = "kernels/producer_overtaking.py"
KDA_SCRIPT = "KDA T=320 Synccheck (benchmarks/check_kda.py sync 320 1)"
KDA_CLI = "KDA T=320 Synccheck (modelcheck sync kernels/kda_fwd.py --const SEQ_LEN=320 --inputs ...:kda_fwd)"
COMMANDS = {
    "python -c 'pass' (interpreter alone)": [sys.executable, "-c", "pass"],
    "import modelcheck": [sys.executable, "-c", "import modelcheck"],
    "modelcheck --version": CLI + ["--version"],
    f"modelcheck parse {SMALL}": CLI + ["parse", SMALL],
    KDA_SCRIPT: [sys.executable, "benchmarks/check_kda.py", "sync", "320", "1"],
    KDA_CLI: CLI + ["sync", "kernels/kda_fwd.py", "--const", "SEQ_LEN=320", "--inputs",
                    "kernels/inputs/kda.py:kda_fwd", "--quiet"],
}
TARGETS = {"modelcheck --version": 0.3, f"modelcheck parse {SMALL}": 0.3, KDA_SCRIPT: 0.6, KDA_CLI: 0.6}


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def cpu_of(argv, env=None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {out.returncode}\n{out.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _temp_dirs(n: int):
    """n fresh temporary directories, each removed once the run that used it is over."""
    for _ in range(n):
        tmp = tempfile.mkdtemp()
        try:
            yield tmp
        finally:
            shutil.rmtree(tmp)


def _cache_with_grammar_only(tmp: str) -> str:
    """A cache home in `tmp` holding a copy of the user's grammar tables and no syntax trees."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = Path(tmp) / "modelcheck"
    directory.mkdir(mode=0o700)
    for entry in (Path(home) / "modelcheck").glob("tirx-grammar-*.json"):
        shutil.copyfile(entry, directory / entry.name)
        (directory / entry.name).chmod(0o600)
    return tmp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    pycache = tempfile.mkdtemp(prefix="startup-pycache-")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = dict(base, PYTHONPYCACHEPREFIX=pycache)
    rows = []
    try:
        for name, argv in COMMANDS.items():
            cpu_of(argv, env)         # untimed: fills the bytecode cache
            runs = [cpu_of(argv, env) for _ in range(args.repeat)]
            rows.append({"command": name, "cpu_s_median": statistics.median(runs), "cpu_s_runs": runs,
                         "target_cpu_s": TARGETS.get(name), "loadavg": os.getloadavg()[0]})
        plain = {k: v for k, v in base.items() if k != "PYTHONPYCACHEPREFIX"}
        nobc = [cpu_of(COMMANDS[KDA_SCRIPT], dict(plain, PYTHONDONTWRITEBYTECODE="1")) for _ in range(args.repeat)]
        rows.append({"command": f"{KDA_SCRIPT}, no bytecode cache", "cpu_s_median": statistics.median(nobc),
                     "cpu_s_runs": nobc, "target_cpu_s": None, "loadavg": os.getloadavg()[0]})
        edited = [cpu_of(COMMANDS[KDA_SCRIPT], env=dict(env, XDG_CACHE_HOME=_cache_with_grammar_only(tmp)))
                  for tmp in _temp_dirs(args.repeat)]
        rows.append({"command": f"{KDA_SCRIPT}, first check after an edit (syntax cache empty)",
                     "cpu_s_median": statistics.median(edited), "cpu_s_runs": edited, "target_cpu_s": None,
                     "loadavg": os.getloadavg()[0]})
        cold = [cpu_of(CLI + ["parse", SMALL], env=dict(env, XDG_CACHE_HOME=tmp)) for tmp in _temp_dirs(args.repeat)]
        rows.append({"command": f"modelcheck parse {SMALL}, first run (empty grammar and syntax caches)",
                     "cpu_s_median": statistics.median(cold), "cpu_s_runs": cold, "target_cpu_s": None,
                     "loadavg": os.getloadavg()[0]})
    finally:
        shutil.rmtree(pycache, ignore_errors=True)
    for r in rows:
        r["met"] = None if r["target_cpu_s"] is None else r["cpu_s_median"] <= r["target_cpu_s"]
        print(f"{r['command']:<70} {r['cpu_s_median']:6.3f} s CPU  (target {r['target_cpu_s']}, "
              f"{ {True: 'met', False: 'MISSED', None: '-'}[r['met']] }; load {r['loadavg']:.1f})")
    versions = {d: _version(d) for d in ("numpy", "ml_dtypes", "lark")}
    print("wrote", record("startup", {"rows": rows, "repeat": args.repeat, "python": sys.executable,
                                      "versions": versions,
                                      "note": "CPU of each command's own process (user + system), median; "
                                              "grammar and bytecode caches warm unless said"}))


if __name__ == "__main__":
    main()
