"""A proof's verdict and z3's rlimit count are the same on a loaded machine as on an idle one.

The proof runs in a fresh interpreter (z3's counts depend on the history of its context, so
each run starts from none), pinned to one CPU: once alone, once sharing that CPU with busy
loops, so it gets a fraction of the time slices and its wall time grows several-fold.  The
solver's budgets are rlimit counts, so nothing it decides may change.  A second case runs
every query out of its first budget at once (QUICK = 1), so the budget is exhausted mid-search
and every query is split by residues: the same counts again.  A run with another hash seed
checks that no set's iteration order reaches the queries.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.manifest import ROOT

BURNERS = 3
PROOF = """
import json, sys, time
sys.path.insert(0, {root!r})
import modelcheck
from modelcheck.prover import prove, solving
if {quick!r} is not None:
    solving.QUICK = {quick!r}
func = modelcheck.load({root!r} + "/kernels/kda_ring_m_o.py").func
c0, t0 = time.process_time(), time.perf_counter()
report = prove(func, symbolic=["NC"], ranges={{"NC": (1, None)}}, max_seconds=600)
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
print(json.dumps({{"verdict": report.verdict, "rlimit": report.stats["z3_rlimit"],
                  "by_kind": report.stats["z3_rlimit_by_kind"], "checks": report.stats["z3_checks"],
                  "splits": report.stats.get("z3_split_queries", 0), "cpu": cpu, "wall": wall}}))
"""
BUSY = "import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"


def _prove(cpu: int, quick=None, hash_seed: str = "0") -> dict:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    out = subprocess.run([sys.executable, "-c", PROOF.format(root=str(ROOT), quick=quick)], env=env,
                         capture_output=True, text=True, timeout=600,
                         preexec_fn=lambda: os.sched_setaffinity(0, {cpu}), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _loaded(cpu: int, quick=None) -> dict:
    burners = [subprocess.Popen([sys.executable, "-c", BUSY.format(cpu=cpu)]) for _ in range(BURNERS)]
    try:
        return _prove(cpu, quick)
    finally:
        for b in burners:
            b.kill()
            b.wait()


def _decided(run: dict) -> tuple:
    return run["verdict"], run["rlimit"], run["checks"], run["by_kind"], run["splits"]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU pinning (Linux)")
# the split case burns a CPU for as long again: the slow step runs it
@pytest.mark.parametrize("quick", [None, pytest.param(1, marks=pytest.mark.slow)], ids=["budgets", "every-query-split"])
def test_same_verdict_and_rlimit_count_under_cpu_load(quick):
    cpu = min(os.sched_getaffinity(0))
    idle = _prove(cpu, quick)
    loaded = _loaded(cpu, quick)
    assert idle["verdict"] == "proved" and idle["rlimit"] > 0
    assert _decided(loaded) == _decided(idle)
    # the load was real: the loaded proof got a fraction of its CPU's time
    assert loaded["wall"] > 1.5 * loaded["cpu"], loaded
    if quick is None:
        assert _decided(_prove(cpu, hash_seed="12345")) == _decided(idle)
    else:
        assert idle["splits"] > 0          # budgets ran out, queries were split
