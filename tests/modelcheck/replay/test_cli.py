"""`modelcheck replay KERNEL.py --finding N|ID`: exit codes per docs/architecture.md#verdicts-and-exit-codes (1: the forced schedule shows the
error, 0: it changes nothing, 2: it cannot be followed, 64: usage)."""
from __future__ import annotations

import json

import modelcheck
from modelcheck.cli import EXIT_USAGE, main
from tests.manifest import KERNELS

BUGGY = str(KERNELS / "producer_overtaking.py")
FIXED = str(KERNELS / "producer_overtaking_fixed.py")


def test_replay_by_number_shows_the_wrong_round_read(capsys):
    assert main(["replay", BUGGY, "--finding", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("replay REPRODUCED - producer_overtaking: mbarrier_arrive_before_consumption")
    assert "out[0]: default 0, replayed 17" in out
    assert "a value from iteration 1, read in iteration 0" in out
    # the witness order, each step taken
    order = [line.split(".", 1)[1].strip() for line in out.splitlines() if line.strip().startswith("[x]")]
    assert order[0].startswith("warp 0 reaches the re-arm") and order[1].startswith("warp 1: mbarrier.wait")


def test_replay_by_id_prefix_and_json(capsys):
    k = modelcheck.load(BUGGY)
    fid = modelcheck.racecheck(k.func).findings[0].id
    assert main(["replay", BUGGY, "--finding", fid[:-4], "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    # Racecheck's id is an alias of the one merged finding: it selects Synccheck's entry for the same bug
    assert d["finding"]["id"] == modelcheck.synccheck(k.func).findings[0].id and d["outcome"] == "reproduced"
    assert {"output": "out", "index": [0], "default": 0, "replayed": 17} in d["differences"]


def test_const_changes_the_replayed_kernel(capsys):
    assert main(["replay", BUGGY, "--finding", "1", "--const", "ROUNDS=2"]) == 1
    out = capsys.readouterr().out
    assert "out[0]: default 0, replayed 17" in out and "out[2]" not in out


def test_finding_out_of_range_lists_the_findings(capsys):
    assert main(["replay", BUGGY, "--finding", "9"]) == EXIT_USAGE
    err = capsys.readouterr().err
    # one bug, one entry: the racecheck repeat of the synccheck finding is merged into it
    assert "--finding 9 is not between 1 and 1" in err and "1. [error] mbarrier_arrive_before_consumption" in err
    assert "racecheck:" not in err


def test_unknown_id_and_clean_kernel_are_usage_errors(capsys):
    assert main(["replay", BUGGY, "--finding", "synccheck:nope"]) == EXIT_USAGE
    assert "matches no finding" in capsys.readouterr().err
    assert main(["replay", FIXED, "--finding", "1"]) == EXIT_USAGE
    assert "has no findings" in capsys.readouterr().err


def test_race_that_cannot_be_reversed_exits_incomplete(capsys):
    assert main(["replay", str(KERNELS / "race_flag_relaxed_store.py"), "--finding", "1"]) == 2
    assert "SCHEDULE NOT FOLLOWED" in capsys.readouterr().out
