"""`T.cuda.wait_until` (apache-tvm 0.27): a spin on a global word that counts as a wait -- it ends when a write
makes the condition hold, a spin nothing can end is a deadlock, and its closing ld.acquire orders what the
writer released."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import ir
import modelcheck
from ir import ops
from modelcheck import numsim

FIX = Path(__file__).parents[3] / "fixtures" / "ops2"


def _inputs(n_data=1):
    return {"flag": np.zeros(1, np.int32), "data": np.zeros(n_data, np.int32), "out": np.zeros(2, np.int32)}


def test_classified_with_tvm_operand_order():
    info = ops.classify("cuda.wait_until", ("int32", "handle", "bool", "string", "string", "string", "int32"))
    assert info.supported and [o.name for o in info.operands][:3] == ["dst", "ptr", "condition"]


def test_wait_ends_when_the_flag_is_written_and_keeps_the_accepted_value():
    kernel = modelcheck.load(FIX / "wait_until_flag.py")
    res = numsim.run(kernel.func, _inputs())
    assert res.termination == "completed"
    assert res.outputs["out"].tolist() == [1, 42]
    assert modelcheck.synccheck(kernel, _inputs()).verdict == "clean"
    assert modelcheck.racecheck(kernel, _inputs()).verdict == "clean"
    assert ir.parse(ir.print_func(kernel.func)) == kernel.func


def test_a_spin_nothing_ends_is_a_deadlock_naming_the_wait():
    kernel = modelcheck.load(FIX / "wait_until_flag.py", TARGET=2)
    rep = modelcheck.synccheck(kernel, _inputs())
    assert [f.kind for f in rep.findings] == ["deadlock"]
    assert "cuda.wait_until on flag[0]" in rep.findings[0].message and "the word is 1" in rep.findings[0].message


def test_relaxed_publication_races():
    kernel = modelcheck.load(FIX / "wait_until_flag.py", RELAXED=1)
    rep = modelcheck.racecheck(kernel, _inputs())
    assert [f.kind for f in rep.findings] == ["data_race"]


def test_release_sequence_runs_through_rmws():
    kernel = modelcheck.load(FIX / "rmw_chain_handoff.py")
    res = numsim.run(kernel.func, _inputs(2))
    assert res.outputs["out"].tolist() == [43, 42]
    assert modelcheck.racecheck(kernel, _inputs(2)).verdict == "clean"
    unfenced = modelcheck.load(FIX / "rmw_chain_handoff.py", FENCE=0)
    assert "data_race" in [f.kind for f in modelcheck.racecheck(unfenced, _inputs(2)).findings]
