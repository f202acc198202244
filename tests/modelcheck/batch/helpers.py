"""Plans, builders and kernels for the batch tests."""
from __future__ import annotations

import json
from pathlib import Path

from tests.manifest import KERNELS

RING = KERNELS / "ring_arith.py"               # clean for every ROUNDS; a few ms per check
RING_BUG = KERNELS / "ring_missing_guard.py"   # deadlock from ROUNDS=2

# Inputs builders whose behaviour the tests control: each call appends a line to calls.txt (next to
# the module), so a test can count how often tasks really ran.
BUILDERS = '''
import os, time
from pathlib import Path

HERE = Path(__file__).parent


def _count(name, consts):
    with open(HERE / "calls.txt", "a") as fh:
        fh.write(f"{name} {sorted(consts.items())} {os.getpid()} {os.getppid()}\\n")


def plain(consts, seed=0):
    _count("plain", consts)
    return {}


def crash(consts):
    _count("crash", consts)
    os._exit(3)


def raises(consts):
    _count("raises", consts)
    raise RuntimeError("the builder failed on purpose")


def slow(consts):
    _count("slow", consts)
    time.sleep(120)
    return {}


def hog(consts):
    _count("hog", consts)
    import numpy as np
    blocks = [np.ones(64 * 2**20, np.uint8) for _ in range(64)]     # 4 GiB in 64 MiB blocks
    return {}


def sleeper(consts):
    """Sleeps while the marker folder says so, after announcing its process and its parent."""
    _count("sleeper", consts)
    marks = HERE / "marks"
    marks.mkdir(exist_ok=True)
    n = len(list(marks.iterdir()))
    (marks / f"{n}.json").write_text(f'{{"pid": {os.getpid()}, "ppid": {os.getppid()}}}')
    if (HERE / "sleep").exists():
        time.sleep(120)
    return {}
'''


def write_builders(folder: Path) -> Path:
    path = folder / "builders.py"
    path.write_text(BUILDERS)
    return path


def calls(folder: Path) -> list[str]:
    p = folder / "calls.txt"
    return p.read_text().splitlines() if p.exists() else []


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def toml_plan(folder: Path, body: str, name: str = "plan.toml") -> Path:
    path = folder / name
    path.write_text(body)
    return path
