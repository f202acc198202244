"""Finding ids (docs/architecture.md#reports): `<checker>:<kind>:<16 hex>` over the details without source
locations -- the same across runs and file moves, different for different bugs."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import modelcheck
from modelcheck.common import findings as F
from tests.manifest import KERNELS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REPORT = FIXTURES / "report"
RING = FIXTURES / "explorer" / "ring.py"
PHASE_B_DEADLOCK = {"STAGES": 3, "ROUNDS": 2, "EMPTY_COUNT": 2, "PRODUCER_START": 0, "CONSUMER_START": 1,
                    "EMPTY_WAIT": 0}
CASES = [(KERNELS / "producer_overtaking.py", {}), (REPORT / "unordered_rearm.py", {}),
         (REPORT / "blocked_ranges.py", {}), (KERNELS / "hang_wrong_parity.py", {}), (RING, PHASE_B_DEADLOCK),
         (REPORT / "scalar_param.py", {})]
ID = re.compile(r"synccheck:[a-z_]+:[0-9a-f]{16}")


def ids(path, **consts) -> list[str]:
    return [f.id for f in modelcheck.synccheck(modelcheck.load(path, **consts)).findings]


def spans(path, **consts) -> list:
    out = []
    for f in modelcheck.synccheck(modelcheck.load(path, **consts)).findings:
        d = f.to_dict()["details"]
        ops = [d.get("operation")] + [b.get("operation") for b in d.get("blocked", [])]
        out.extend(op["span"] for op in ops if isinstance(op, dict) and "span" in op)
    return out


def test_id_shape():
    for path, consts in CASES:
        got = ids(path, **consts)
        assert got
        for i, f in zip(got, modelcheck.synccheck(modelcheck.load(path, **consts)).findings):
            assert ID.fullmatch(i) and i.startswith(f"synccheck:{f.kind}:")


def test_ids_are_stable_across_runs():
    for path, consts in CASES:
        assert ids(path, **consts) == ids(path, **consts)


def test_ids_survive_a_file_move(tmp_path):
    for path, consts in CASES:
        moved = tmp_path / "other" / "dir" / path.parent.name / path.name
        moved.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, moved)
        before, after = spans(path, **consts), spans(moved, **consts)
        if before:
            assert before != after                       # the spans did move ...
            assert all(s["file"] == str(moved) for s in after)
        assert ids(moved, **consts) == ids(path, **consts)   # ... the ids did not


def test_ids_survive_lines_shifting_in_the_file(tmp_path):
    """A comment added above the kernel moves every span down a line; the ids stay."""
    path = KERNELS / "producer_overtaking.py"
    shifted = tmp_path / "producer_overtaking.py"
    shifted.write_text("# one more line\n" + path.read_text())
    assert spans(shifted)[0]["line"] == spans(path)[0]["line"] + 1
    assert ids(shifted) == ids(path)


def test_ids_differ_between_bugs():
    every = [i for path, consts in CASES for i in ids(path, **consts)]
    assert len(every) == len(set(every))
    # the same kernel with the bug elsewhere: the producer re-arms full[0] too early in round 1 (one
    # stage) vs in round 2 (two stages) -- and the same bug reached with one more consumer keeps its id
    one, two = ids(RING, EMPTY_WAIT=0, STAGES=1, ROUNDS=2), ids(RING, EMPTY_WAIT=0, STAGES=2, ROUNDS=3)
    assert len(one) == len(two) == 1 and one != two
    assert one == ids(RING, EMPTY_WAIT=0, STAGES=1, ROUNDS=2, CONSUMERS=2, EMPTY_COUNT=2)


def test_id_ignores_location_fields_only():
    op = {"warp": 1, "site": 4, "iters": [2], "op": "mbarrier.arrive", "source_text": "full.arrive(0)",
          "span": {"file": "/a/k.py", "line": 3, "col": 5, "end_line": 3, "end_col": 9}}
    moved = dict(op, source_text="  full.arrive(0)  # moved",
                 span={"file": "/b/c/k.py", "line": 30, "col": 7, "end_line": 30, "end_col": 11})
    a = F.make("synccheck", "deadlock", "m", {"operation": op})
    assert a.id == F.make("synccheck", "deadlock", "another message", {"operation": moved}).id
    assert a.id != F.make("synccheck", "deadlock", "m", {"operation": dict(op, warp=2)}).id
    assert a.id != F.make("synccheck", "deadlock", "m", {"operation": dict(op, iters=[3])}).id
    assert a.id != F.make("synccheck", "oob", "m", {"operation": op}).id.replace(":oob:", ":deadlock:")
