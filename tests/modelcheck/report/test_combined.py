"""`modelcheck check` lists each bug once (issue 16 item 3): a Synccheck finding that Racecheck repeats is merged
into it, ids stay stable, and `replay --finding N` counts the merged list."""
from __future__ import annotations

import pytest

import modelcheck
from modelcheck.cli import main
from modelcheck.report.combined import merge_key
from tests.manifest import KERNELS


def _where(f):
    op = f.details.get("operation") or f.details.get("current") or {}
    span = op.get("span")
    return (f.kind, op.get("warp"), tuple(op.get("iters") or ()), getattr(span, "line", None))


@pytest.mark.parametrize("name", ["producer_overtaking", "hang_wrong_parity", "oob_store", "mbar_init_race",
                                  "race_write_write"])
def test_check_lists_each_bug_once(name):
    kernel = modelcheck.load(KERNELS / f"{name}.py")
    report = modelcheck.check(kernel)
    sync, race = report.reports
    assert len({_where(f) for f in report.findings}) == len(report.findings), [f.id for f in report.findings]
    # every racecheck finding is in the list, itself or as an alias of the synccheck one
    listed = {f.id for f in report.findings} | {a for al in report.aliases.values() for _, a in al}
    assert {f.id for f in race.findings} <= listed and {f.id for f in sync.findings} <= listed
    repeated = [f for f in race.findings if f.details.get("domain") == "synchronization"]
    for f in repeated:
        assert any(merge_key(s) == merge_key(f) for s in sync.findings)
        assert report.select(f.id).id.startswith("synccheck:")
    # ids are stable: a second check gives the same list
    assert [f.id for f in modelcheck.check(kernel).findings] == [f.id for f in report.findings]


def test_producer_overtaking_is_one_finding_reported_by_both(capsys):
    assert main(["check", str(KERNELS / "producer_overtaking.py")]) == 1
    out = capsys.readouterr().out
    assert out.count("] mbarrier_arrive_before_consumption:") == 1
    assert "1. [ERROR] mbarrier_arrive_before_consumption" in out and "reported by synccheck and racecheck" in out
    assert out.startswith("synccheck ERROR")     # the line CI looks for


def test_replay_numbers_follow_the_check_list(capsys):
    path = str(KERNELS / "hang_wrong_parity.py")
    report = modelcheck.check(modelcheck.load(path))
    assert len(report.findings) >= 2
    for n, f in enumerate(report.findings, 1):
        main(["replay", path, "--finding", str(n), "--json"])
        out, err = capsys.readouterr()
        assert f.id in out + err or f.kind in err, (n, f.id)
