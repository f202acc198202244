"""Racecheck on the race_* corpus kernels: the finding's text, byte range, access pair,
ordering failure, proxy bridge and the source lines of its two accesses.

The kernels live in kernels/ (with their manifest entries); each buggy kernel's fixed
twin must be clean.  Expected source lines are looked up by the statement's text in the
kernel file, so the tests check that Prior/Current point at the right statement, not at
a hard-coded line number.
"""
from __future__ import annotations

import re

import pytest

import modelcheck
from tests.manifest import KERNELS

MESSAGE = re.compile(r"unordered (?P<pair>\w+/\w+) on (?P<space>smem|gmem|tmem) (?P<alloc>\w+):"
                     r"\[(?P<lo>\d+), (?P<hi>\d+)\) \.\.\. (?P<domain>\w+) ordering failure: (?P<text>.+)")


def race(name: str):
    return modelcheck.racecheck(modelcheck.load(KERNELS / f"{name}.py").func)


def line_of(name: str, statement: str) -> int:
    """The 1-based line of the one line in kernels/<name>.py that contains `statement`."""
    lines = [i + 1 for i, text in enumerate((KERNELS / f"{name}.py").read_text().splitlines())
             if statement in text and not text.lstrip().startswith("#")]
    assert len(lines) == 1, (name, statement, lines)
    return lines[0]


def only(report, kind: str = "data_race", alloc: str | None = None):
    found = [f for f in report.findings if f.kind == kind
             and (alloc is None or f.details.get("overlap", {}).get("allocation") == alloc)]
    assert len(found) == 1, report.format()
    return found[0]


def assert_points_at(operation: dict, name: str, statement: str, **fields):
    assert operation["span"].line == line_of(name, statement), operation
    assert statement in operation["source_text"]
    for key, value in fields.items():
        assert operation[key] == value, (key, operation)


def test_write_write_between_warps():
    rep = race("race_write_write")
    assert rep.verdict == "error"
    f = only(rep)
    assert f.message == ("unordered write/write on smem header:[0, 4) ... execution ordering failure: "
                         "no synchronization edge orders the actors")
    d = f.details
    assert (d["access_pair"], d["ordering_domain"], d["ordering_failure"]) == \
        ("write_write", "execution", "missing_inter_actor_sync")
    assert d["overlap"] == {"allocation": "header", "space": "shared", "byte_offset": 0, "byte_len": 4, "byte_end": 4}
    assert "proxy_bridge" not in d
    assert_points_at(d["prior"], "race_write_write", "header[0] = 7", warp=0, lane=0, access="write")
    assert_points_at(d["current"], "race_write_write", "header[0] = 9", warp=1, lane=0, access="write")
    text = rep.format()
    assert "Access pair: write_write" in text
    assert re.search(r"Prior: warp 0 lane 0, source op #\d+ \[element store shared\]", text)
    assert re.search(r"Current: warp 1 lane 0, source op #\d+ \[element store shared\]", text)
    assert f"race_write_write.py:{line_of('race_write_write', 'header[0] = 9')}:" in text


def test_lane_handoff_inside_a_warp_needs_warp_sync():
    name = "race_lane_broadcast"
    f = only(race(name))
    m = MESSAGE.fullmatch(f.message)
    assert m and m["pair"] == "write/read" and m["alloc"] == "scale"
    # both warps' scale words race (lane 0 writes, lanes 1-31 of the same warp read)
    assert (int(m["lo"]), int(m["hi"])) == (0, 8)
    assert m["domain"] == "execution" and m["text"] == "different lanes in the same warp have no lane-order edge"
    d = f.details
    assert d["ordering_failure"] == "missing_same_warp_lane_order"
    assert d["occurrences"] == 2 * 31          # lane 0 reads its own write in program order
    assert_points_at(d["prior"], name, "scale[warp] = x[warp * 32] + 1", lane=0, access="write")
    assert_points_at(d["current"], name, "out[tx] = x[tx] * scale[warp]", access="read")
    assert d["current"]["warp"] == d["prior"]["warp"] and d["current"]["lane"] != 0
    assert race(name + "_fixed").verdict == "clean"


def test_elected_arrive_releases_only_the_arriving_lane():
    name = "race_elect_arrive_unjoined"
    f = only(race(name))
    d = f.details
    # lane 0's own element is published by its arrive; lanes 1-31's are not
    assert (d["overlap"]["byte_offset"], d["overlap"]["byte_end"]) == (4, 128)
    assert f.message.startswith("unordered write/read on smem tile:[4, 128) ... execution ordering failure: ")
    assert (d["access_pair"], d["ordering_failure"]) == ("write_read", "missing_inter_actor_sync")
    assert_points_at(d["prior"], name, "tile[lane] = src[lane] * T.float32(0.5)", warp=0)
    assert_points_at(d["current"], name, "out[lane] = tile[lane]", warp=1)
    assert d["prior"]["lane"] != 0
    assert race(name + "_fixed").verdict == "clean"


BULK_STORE = 'T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]'


@pytest.mark.parametrize("name", ["race_bulk_store_no_fence", "race_bulk_store_wrong_fence"])
def test_bulk_store_of_generic_writes_needs_a_shared_cta_proxy_fence(name):
    f = only(race(name))
    assert f.message == ("unordered write/read on smem tile:[0, 512) ... memory ordering failure: "
                         "no generic->async proxy bridge from shared::cta to shared::cta orders the accesses")
    d = f.details
    assert (d["access_pair"], d["ordering_domain"], d["ordering_failure"]) == \
        ("write_read", "memory", "missing_proxy_bridge")
    assert d["proxy_bridge"] == {"prior_proxy": "generic", "current_proxy": "async",
                                 "prior_domain": "shared::cta", "current_domain": "shared::cta"}
    assert d["occurrences"] == 128              # every writer thread's element
    assert_points_at(d["prior"], name, "tile[tx] = x[tx] * T.float32(2.0) + T.float32(1.0)", access="write")
    assert_points_at(d["current"], name, BULK_STORE, warp=0, lane=0, op="bulk.s2g", async_op=True, access="read")
    assert race(name + "_fixed").verdict == "clean"


def test_bulk_reload_after_generic_reads_needs_the_readers_fence():
    name = "race_bulk_reload_no_fence"
    f = only(race(name))
    d = f.details
    assert f.message == ("unordered read/write on smem buf:[0, 128) ... memory ordering failure: "
                         "no generic->async proxy bridge from shared::cta to shared::cta orders the accesses")
    assert (d["access_pair"], d["ordering_failure"]) == ("read_write", "missing_proxy_bridge")
    assert d["proxy_bridge"] == {"prior_proxy": "generic", "current_proxy": "async",
                                 "prior_domain": "shared::cta", "current_domain": "shared::cta"}
    # the consumer's round-r read against the producer's round r + 1 copy into the same slot
    assert_points_at(d["prior"], name, "out[r * TILE + lane] = buf[lane] + T.float32(1.0)", warp=1, access="read")
    assert_points_at(d["current"], name, 'T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]',
                     warp=0, op="bulk.g2s", async_op=True, access="write")
    assert d["current"]["iters"] == [d["prior"]["iters"][0] + 1]
    assert race(name + "_fixed").verdict == "clean"


def test_atomic_against_plain_update_is_a_release_acquire_failure():
    name = "race_atomic_vs_plain"
    f = only(race(name))
    d = f.details
    assert f.message == ("unordered write/write on smem count:[0, 4) ... memory ordering failure: "
                         "no release/acquire edge orders the accesses")
    assert (d["ordering_domain"], d["ordering_failure"]) == ("memory", "missing_release_acquire")
    sides = {d["prior"]["warp"]: d["prior"], d["current"]["warp"]: d["current"]}
    assert_points_at(sides[0], name, "T.ptx.atom.shared.add.u32(old, count.ptr_to([0]), T.uint32(1))",
                     access="rmw", order="relaxed")
    assert_points_at(sides[1], name, 'count[0] = count[0] + T.Cast("uint32", n)', access="write", order="weak")
    # all-atomic updates (strong, same proxy, covering scopes) do not race
    assert race(name + "_fixed").verdict == "clean"


def test_cta_scoped_release_acquire_across_ctas():
    name = "race_flag_cta_scope"
    rep = race(name)
    mismatch = only(rep, "scope_mismatch")
    assert mismatch.message == ("memory accesses use scopes .cta and .cta, which do not mutually cover "
                                "different-CTA actors")
    assert mismatch.details["ordering_failure"] == "scope_mismatch"
    assert_points_at(mismatch.details["prior"], name, "T.ptx.st.release.cta.global_.b32", order="release")
    assert_points_at(mismatch.details["current"], name, "T.ptx.ld.acquire.cta.global_.b32", order="acquire")
    row = only(rep, alloc="row")
    assert row.message.startswith("unordered write/read on gmem row:[0, 128) ... execution ordering failure: ")
    assert_points_at(row.details["prior"], name, "row[tx] = x[tx] * 5", warp=0)
    assert_points_at(row.details["current"], name, "out[tx] = row[31 - tx]", warp=1)
    # lane 31 reads row[0], which CTA 0's lane 0 wrote
    assert (row.details["prior"]["lane"], row.details["current"]["lane"]) == (0, 31)
    assert race(name + "_fixed").verdict == "clean"


@pytest.mark.parametrize("name,alloc,writer,reader", [
    ("race_relaxed_try_wait", "params", "params[0] = x[0] + 3", "out[lane] = x[lane] * params[0] + params[1]"),
    ("race_flag_relaxed_store", "row", "row[lane] = x[lane] * 5", "out[lane] = row[31 - lane]"),
    ("race_fence_acq_rel_not_sc", "mailbox", "mailbox[0] = 42", "out[0] = mailbox[0]"),
    ("race_fence_sc_no_flag", "mailbox", "mailbox[0] = 42", "out[0] = mailbox[0]"),
    ("race_ring_write_before_wait", "slot", "slot[0] = r * 10 + 7", "out[r] = slot[0]"),
])
def test_handoffs_that_publish_nothing(name, alloc, writer, reader):
    """A relaxed poll, a relaxed flag store, a store-buffering handshake with fence.acq_rel, fence.sc
    without a flag, a store before the back-pressure wait: the data accesses stay unordered across warps; the fixed twin is clean."""
    rep = race(name)
    found = [f for f in rep.findings if f.kind == "data_race" and f.details["overlap"]["allocation"] == alloc
             and f.details["overlap"]["byte_offset"] == 0]
    assert len(found) == 1, rep.format()
    f = found[0]
    assert f.details["ordering_failure"] == "missing_inter_actor_sync"
    assert f.details["prior"]["warp"] != f.details["current"]["warp"]
    lines = {f.details["prior"]["span"].line, f.details["current"]["span"].line}
    assert lines == {line_of(name, writer), line_of(name, reader)}
    assert {x.kind for x in rep.findings} == {"data_race"}
    assert race(name + "_fixed").verdict == "clean"


def test_leftover_named_barrier_arrival_is_a_synccheck_error_not_a_race(capsys):
    """named_barrier_leftover (docs/reference-differences.md, row 2): three workers bar.arrive on a 64-thread
    barrier.  No two accesses conflict (each thread writes its own out element), so Racecheck has no race to
    report; the schedule-dependent leftover generation is Synccheck's fixed_sync_nonconfluent, and
    `modelcheck check` (both checkers) exits 1 on it."""
    from modelcheck.cli import main
    name = "named_barrier_leftover"
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    rep = modelcheck.racecheck(kernel.func)
    assert rep.verdict == "clean" and rep.stats["races"] == 0 and rep.stats["accesses"] == 3
    assert [f.kind for f in modelcheck.synccheck(kernel.func).findings] == ["fixed_sync_nonconfluent"]
    assert main(["check", str(KERNELS / f"{name}.py")]) == 1
    assert "fixed_sync_nonconfluent" in capsys.readouterr().out
