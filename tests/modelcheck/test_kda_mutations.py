"""Mutations of the clean KDA-style kernel are detected (docs/architecture.md#kernels-and-tests: drop a fence, an arrive, a wait;
flip a parity; change an arrival count), on the 2-chunk launch.

Each mutation edits one line of kernels/kda_fwd.py, found by the role it belongs to (`anchor`,
the first line of that role's code after which the edited line is the next match of `old`).
The expected result names the checker and the finding kind that must appear.
"""
from __future__ import annotations

import importlib.util

import pytest

import modelcheck
from modelcheck import numsim
from tests.manifest import INPUT_BUILDERS, KERNELS

PREP = "if warp < 2:"
MMA = "elif warp == 2:"
STATE = "elif warp < 8:"
STORE = "# store: O of chunk c"

# (id, anchor, old line content, new line content or None to drop it (T.evaluate(0)), checker, finding kind)
MUTATIONS = [
    ("prep_no_fence_before_handoff", PREP, "# generic writes of the operand tiles", None, "racecheck", "data_race"),
    ("prep_no_named_barrier", PREP, "T.ptx.bar.sync(PREP_NB, 64)", None, "racecheck", "data_race"),
    ("mma_no_state_ready_wait", MMA, "T.cuda.mbarrier_wait(state_ready", None, "synccheck",
     "mbarrier_arrive_before_consumption"),
    ("mma_flipped_state_ready_parity", MMA, "T.cuda.mbarrier_wait(state_ready.ptr_to([0]), c % 2)",
     "T.cuda.mbarrier_wait(state_ready.ptr_to([0]), 1 - c % 2)", "synccheck", "deadlock"),
    ("state_no_tcgen05_fence_before_p_full", STATE + "@# causal mask", "T.ptx.tcgen05.fence__before_thread_sync()", None,
     "racecheck", "data_race"),
    ("store_no_wait_ld", STORE, "T.ptx.tcgen05.wait__ld.sync.aligned()", None, "racecheck", "data_race"),
    ("state_no_state_ready_arrive", STATE, "T.ptx.mbarrier.arrive.shared.b64(state_ready", None, "synccheck", "deadlock"),
    ("o_empty_count_3", "", "T.ptx.mbarrier.init.shared.b64(o_empty.ptr_to([s]), T.uint32(4))",
     "T.ptx.mbarrier.init.shared.b64(o_empty.ptr_to([s]), T.uint32(3))", "synccheck",
     "mbarrier_arrive_before_consumption"),
]


def mutate(text: str, anchor: str, old: str, new: str | None) -> str:
    """Replace (or drop) the first line containing `old` after the line containing `anchor`
    ("ROLE@MARK": after MARK inside ROLE); a comment `old` selects the statement below it."""
    lines = text.splitlines(keepends=True)
    i = 0
    for mark in (m for m in anchor.split("@") if m):
        i = next(k for k in range(i, len(lines)) if mark in lines[k])
    i = next(k for k in range(i, len(lines)) if old in lines[k])
    if old.startswith("#"):
        i += 1
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = indent + ("T.evaluate(0)" if new is None else new) + "\n"     # a no-op keeps blocks non-empty
    return "".join(lines)


@pytest.fixture(scope="module")
def kda_inputs():
    spec = importlib.util.spec_from_file_location("_inputs_kda", INPUT_BUILDERS / "kda.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kda_fwd


@pytest.mark.parametrize("name,anchor,old,new,checker,kind", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutation_is_detected(name, anchor, old, new, checker, kind, kda_inputs, tmp_path):
    text = (KERNELS / "kda_fwd.py").read_text()
    mutant = mutate(text, anchor, old, new)
    assert mutant != text
    path = tmp_path / "kda_fwd.py"
    path.write_text(mutant)
    kernel = modelcheck.load(path, SEQ_LEN=128)
    report = getattr(modelcheck, checker)(kernel.func, inputs=numsim.default_inputs(kernel.func,
                                                                                  kda_inputs(dict(kernel.constants))))
    assert kind in {f.kind for f in report.findings}, report.format()
