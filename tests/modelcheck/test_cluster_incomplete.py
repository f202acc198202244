"""Issue 17 item 6: a modeled-later construct (a cluster launch, a cluster barrier) gives `incomplete` naming
it and its line from every entry point, through Python and the command line; nothing raises."""
from __future__ import annotations

from pathlib import Path

import pytest

import modelcheck
from modelcheck.cli import main

FIX = Path(__file__).parent.parent / "fixtures" / "ops"
LAUNCH = str(FIX / "cluster_launch.py")
LAUNCH_LINE = 8          # the def line: the launch's span


def _mentions(text: str, line: int) -> bool:
    return "cluster" in text and f"cluster_launch.py:{line}:" in text


@pytest.mark.parametrize("check", [modelcheck.synccheck, modelcheck.racecheck])
def test_checkers_report_the_cluster_launch(check):
    report = check(modelcheck.load(LAUNCH))
    assert report.verdict == "incomplete"
    assert any(_mentions(str(f.message), LAUNCH_LINE) for f in report.findings)


def test_prove_is_incomplete_on_a_cluster_launch_not_proved():
    report = modelcheck.prove(modelcheck.load(LAUNCH), ["N"])
    assert report.verdict == "incomplete"
    assert _mentions(report.reasons[0], LAUNCH_LINE) and "cluster launch 2x1x1" in report.reasons[0]


def test_replay_of_the_incomplete_finding_returns_a_report():
    kernel = modelcheck.load(LAUNCH)
    finding = modelcheck.synccheck(kernel).findings[0]
    assert modelcheck.replay(kernel, None, finding) is not None


@pytest.mark.parametrize("argv", [["check", LAUNCH], ["run", LAUNCH], ["prove", LAUNCH, "--symbolic", "N"]])
def test_cli_exits_incomplete_naming_the_launch(argv, capsys):
    assert main(argv) == 2
    out = capsys.readouterr()
    assert _mentions(out.out + out.err, LAUNCH_LINE)
