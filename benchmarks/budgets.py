"""How the default budgets end hostile runs: time to the verdict and peak memory, per kernel.

Each case runs `modelcheck check` (or `parse`) in its own process with the default budgets
(no limit flags) on a kernel of tests/fixtures/hostile/ and records the exit code, the
verdict line, the wall time and the child's peak resident size.  Issue 13's target: nested
loops, infinite loops and huge buffers end `incomplete` (or with the hardware-limit error)
within the default budget -- about a minute and under ~2 GB -- where they used to run for
minutes, swap, or crash.  The module-constant case measures the parser on 20,000 constants.

    python benchmarks/budgets.py [--only NAME ...]
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import record

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"

CASES = [
    # name, subcommand, kernel, what it used to do (issue 13)
    ("nested_loops", "check", "nested_loops.py", "three nested range(1000) loops ran for 10 minutes"),
    ("infinite_loop", "check", "infinite_loop.py", "~2 min and 2.2 GB before incomplete"),
    ("four_gb_output", "check", "four_gb_output.py", "killed at 21 GB without a message"),
    ("huge_parameter", "check", "huge_parameter.py", "a traceback (numpy cannot allocate 4 TiB)"),
    ("hundred_million_blocks", "check", "hundred_million_blocks.py", "never answered"),
    ("million_threads", "check", "million_threads.py", "never answered"),
    ("shared_300kb", "check", "shared_300kb.py", "clean, though it cannot launch"),
    ("power_tower_constant", "parse", "power_tower_constant.py", "10 ** 10 ** 9 never finished"),
    ("constants_20000", "parse", None, "20,000 module constants: 101 s (quadratic)"),
]


def _constants_kernel(directory: Path) -> Path:
    text = (HOSTILE / "zero_threads.py").read_text()
    constants = "".join(f"C{i} = {i} + 1\n" for i in range(20000))
    path = directory / "constants_20000.py"
    path.write_text(text.replace("from tvm_tirx.script import tirx as T\n",
                                 "from tvm_tirx.script import tirx as T\n" + constants))
    return path


def run_case(command: str, kernel: Path) -> dict:
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "modelcheck", command, str(kernel)], capture_output=True,
                          text=True, cwd=ROOT, timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    verdict = next((line for line in lines if " - " in line or "error:" in line or "incomplete:" in line),
                   lines[0] if lines else "")
    return {"exit_code": proc.returncode, "verdict_line": verdict[:200], "wall_s": round(wall, 3),
            "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3),
            # ru_maxrss of children is the largest child so far: each case runs after smaller ones, so a
            # larger value is this case's (Linux reports KB)
            "peak_rss_mb": round(after.ru_maxrss / 1024, 1), "traceback": "Traceback" in proc.stderr}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="case names")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, command, file, before in CASES:
            if args.only and name not in args.only:
                continue
            kernel = HOSTILE / file if file else _constants_kernel(Path(tmp))
            row = {"case": name, "command": command, "before": before, **run_case(command, kernel)}
            rows.append(row)
            print(f"{name:<24} {command:<6} exit {row['exit_code']:>3}  {row['wall_s']:>7.2f} s wall  "
                  f"{row['cpu_s']:>7.2f} s CPU  peak {row['peak_rss_mb']:>7.1f} MB  {row['verdict_line'][:70]}")
    worst = max((r["wall_s"] for r in rows), default=0.0)
    print(f"slowest case: {worst:.1f} s; any traceback: {any(r['traceback'] for r in rows)}")
    if not args.only:
        path = record("budgets", {"cases": rows, "defaults": {"max_steps": 50_000_000, "max_seconds": 60.0,
                                                               "max_memory_mb": 2048}})
        print(f"recorded {path}")


if __name__ == "__main__":
    main()
