"""Start-up: what a user waits for before modelcheck answers (issue 19; target <= 0.3 s CPU, and the KDA T=320
Synccheck end to end <= 0.6 s CPU as a process).

Usage: python benchmarks/startup.py [--repeat 5]
Each command runs as its own process; the figure is that process's CPU time (user + system, from
getrusage of the children), median of --repeat, with the machine's load average next to it (other
workers share the 2 cores).  The grammar tables are cached as JSON in $XDG_CACHE_HOME/modelcheck
(issue 13): the `parse, first run` row uses an empty cache directory, every other row the warm one.
Writes benchmarks/results/startup.json.
"""
from __future__ import annotations

import argparse
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
COMMANDS = {
    "python -c 'pass' (interpreter alone)": [sys.executable, "-c", "pass"],
    "import modelcheck": [sys.executable, "-c", "import modelcheck"],
    "modelcheck --version": CLI + ["--version"],
    f"modelcheck parse {SMALL}": CLI + ["parse", SMALL],
    "KDA T=320 Synccheck (benchmarks/check_kda.py sync 320 1)": [sys.executable, "benchmarks/check_kda.py", "sync",
                                                                 "320", "1"],
}
TARGETS = {"modelcheck --version": 0.3, f"modelcheck parse {SMALL}": 0.3,
           "KDA T=320 Synccheck (benchmarks/check_kda.py sync 320 1)": 0.6}


def cpu_of(argv, env=None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {out.returncode}\n{out.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for name, argv in COMMANDS.items():
        runs = [cpu_of(argv) for _ in range(args.repeat)]
        rows.append({"command": name, "cpu_s_median": statistics.median(runs), "cpu_s_runs": runs,
                     "target_cpu_s": TARGETS.get(name), "loadavg": os.getloadavg()[0]})
    cold = []
    for _ in range(args.repeat):
        tmp = tempfile.mkdtemp()
        try:
            cold.append(cpu_of(CLI + ["parse", SMALL], env=dict(os.environ, XDG_CACHE_HOME=tmp)))
        finally:
            shutil.rmtree(tmp)
    rows.append({"command": f"modelcheck parse {SMALL}, first run (empty grammar cache)",
                 "cpu_s_median": statistics.median(cold), "cpu_s_runs": cold, "target_cpu_s": None,
                 "loadavg": os.getloadavg()[0]})
    for r in rows:
        r["met"] = None if r["target_cpu_s"] is None else r["cpu_s_median"] <= r["target_cpu_s"]
        print(f"{r['command']:<62} {r['cpu_s_median']:6.3f} s CPU  (target {r['target_cpu_s']}, "
              f"{ {True: 'met', False: 'MISSED', None: '-'}[r['met']] }; load {r['loadavg']:.1f})")
    print("wrote", record("startup", {"rows": rows, "repeat": args.repeat, "python": sys.executable,
                                      "note": "CPU of each command's own process (user + system), median; "
                                              "grammar cache warm unless said"}))


if __name__ == "__main__":
    main()
