"""Racecheck on warp-collective fragment accesses: stmatrix writes and ldmatrix reads shared memory
row by row (16 bytes per address lane), so an unsynchronized ldmatrix of rows another warp
stmatrix-writes is a data race, and the CTA barrier between them makes the pair ordered."""
from __future__ import annotations

import modelcheck
from tests.manifest import KERNELS, inputs_builder

NAME = "real/ldmatrix_mma_pre"


def _race(name: str):
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    return modelcheck.racecheck(kernel.func, inputs=inputs_builder({"inputs_builder": "real:fragments"})({}))


def _line(name: str, statement: str) -> int:
    lines = [i + 1 for i, text in enumerate((KERNELS / f"{name}.py").read_text().splitlines()) if statement in text]
    assert len(lines) == 1, lines
    return lines[0]


def test_stmatrix_then_unsynchronized_ldmatrix_from_another_warp_races():
    name = NAME + "_no_sync"
    rep = _race(name)
    assert rep.verdict == "error"
    races = [f for f in rep.findings if f.kind == "data_race"]
    assert len(races) == 1, rep.format()
    d = races[0].details
    assert d["access_pair"] == "write_read" and d["ordering_failure"] == "missing_inter_actor_sync"
    # the whole A^T tile: 16 rows of 16 halves (32 bytes), written and read 16 bytes per row
    assert d["overlap"]["allocation"] == "buffer_2" and (d["overlap"]["byte_offset"], d["overlap"]["byte_end"]) == (0, 512)
    assert d["prior"]["warp"] == 1 and d["prior"]["access"] == "write"
    assert d["prior"]["span"].line == _line(name, "T.ptx.stmatrix(")
    assert d["current"]["warp"] == 0 and d["current"]["access"] == "read"
    assert d["current"]["span"].line == _line(name, "T.ptx.ldmatrix(buffer_3[0], buffer_3[1], buffer_3[2], "
                                                    "buffer_3[3], T.cuda.cvta_generic_to_shared(T.address_of(buffer_2")


def test_the_barrier_between_stmatrix_and_ldmatrix_makes_it_clean():
    assert _race(NAME).verdict == "clean"
