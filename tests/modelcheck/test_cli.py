"""The command line: parse prints canonical text + summary; exit codes per docs/architecture.md#verdicts-and-exit-codes."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import ir
from modelcheck.cli import _PENDING, EXIT_USAGE, main
from tests.manifest import KERNELS

BUGGY = str(KERNELS / "producer_overtaking.py")
FIXED = str(KERNELS / "producer_overtaking_fixed.py")


def test_parse_prints_canonical_text_and_summary(capsys):
    assert main(["parse", FIXED]) == 0
    out = capsys.readouterr().out
    text, _, summary = out.partition("kernel producer_overtaking_fixed")
    assert ir.parse(text, "printed") == ir.parse_file(FIXED)
    assert "constants: ROUNDS=4" in summary
    assert "out: int32[4] (global)" in summary
    assert "block 64x1x1 = 64 thread(s), 2 warp(s)" in summary
    assert "shared (20 B): full uint64[1], empty uint64[1], slot int32[1]" in summary
    assert "mbarrier: 6 (cuda.mbarrier_wait 2, mbarrier.arrive 2, mbarrier.init 2)" in summary
    assert "named_barrier: 1 (cuda.cta_sync 1)" in summary
    assert "unsupported" not in summary


def test_const_override_changes_the_kernel(capsys):
    assert main(["parse", BUGGY, "--const", "ROUNDS=8", "--summary-only"]) == 0
    out = capsys.readouterr().out
    assert "constants: ROUNDS=8" in out and "out: int32[8]" in out


@pytest.mark.parametrize("arg,message", [("NOPE=3", "unknown constant(s) NOPE"), ("ROUNDS", "NAME=VALUE"),
                                         ("ROUNDS=abc", "is not a number")])
def test_bad_const_is_a_usage_error(capsys, arg, message):
    assert main(["parse", BUGGY, "--const", arg]) == EXIT_USAGE
    assert message in capsys.readouterr().err


def test_parse_error_reports_location(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text(open(FIXED).read().replace("T.uint64, scope", "T.uint65, scope", 1))
    assert main(["parse", str(bad)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{bad}:18:" in err and "unknown dtype 'uint65'" in err and "^" in err
    assert "Traceback" not in err


def test_missing_file_is_a_usage_error(capsys):
    assert main(["parse", "/nonexistent/kernel.py"]) == EXIT_USAGE
    assert "No such file" in capsys.readouterr().err


@pytest.mark.parametrize("command,what", sorted(_PENDING.items()))
def test_pending_subcommands_say_which_issue_brings_them(capsys, command, what):
    assert main([command, BUGGY]) == EXIT_USAGE
    assert what in capsys.readouterr().err


def test_no_command_prints_help(capsys):
    assert main([]) == EXIT_USAGE
    assert "parse" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("modelcheck") is None, reason="console script not installed")
def test_console_script_entry_point():
    proc = subprocess.run(["modelcheck", "parse", FIXED, "--summary-only"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "kernel producer_overtaking_fixed" in proc.stdout


def test_run_prints_outputs_and_stats(capsys):
    assert main(["run", FIXED]) == 0
    out = capsys.readouterr().out
    assert "numsim CLEAN - producer_overtaking_fixed (completed)" in out
    assert "[ 7 17 27 37]" in out
    assert "1 CTA(s), 2 warp(s)" in out


def test_run_reports_deadlock_with_exit_code_1(capsys):
    assert main(["run", BUGGY]) == 1
    out = capsys.readouterr().out
    assert "deadlock" in out and "blocked warps 1" in out and "full[0]; phase 0" in out


def test_run_saves_outputs(tmp_path, capsys):
    path = tmp_path / "out.npz"
    assert main(["run", FIXED, "--const", "ROUNDS=6", "--out", str(path)]) == 0
    import numpy as np
    with np.load(path) as data:
        assert list(data["out"]) == [7, 17, 27, 37, 47, 57]


def test_run_rejects_unknown_inputs(capsys):
    assert main(["run", FIXED, "--input", "nope=ones"]) == EXIT_USAGE
    assert "'nope' is not a parameter" in capsys.readouterr().err


def test_explain_prints_the_kind_page(capsys):
    from modelcheck.report import kinds
    assert main(["explain", "data_race"]) == 0
    out = capsys.readouterr().out
    assert out == kinds.page("data_race") and out.startswith("# data_race\n") and "## Fix" in out


def test_explain_of_an_unknown_kind_lists_the_kinds(capsys):
    assert main(["explain", "no_such_kind"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "unknown finding kind 'no_such_kind'" in err and "data_race" in err and "deadlock" not in err.split()[0]


def test_several_kernels_exit_with_the_worst_verdict(capsys):
    assert main(["sync", FIXED, FIXED]) == 0
    assert main(["sync", FIXED, BUGGY, FIXED]) == 1
    out = capsys.readouterr().out
    assert out.count("\n== /") + out.startswith("== /") == 5 and "synccheck ERROR" in out
    assert main(["sync", FIXED, "/nonexistent/kernel.py", BUGGY]) == EXIT_USAGE   # a usage error is the worst
    assert "synccheck ERROR" in capsys.readouterr().out                          # the others still ran


def test_graph_svg_is_laid_out_by_graphviz(tmp_path, capsys):
    from modelcheck.report import layout
    out = tmp_path / "hb.svg"
    assert main(["graph", BUGGY, "--out", str(out)]) == 0
    svg = out.read_text()
    assert svg.startswith("<svg")
    if layout.dot_available():
        assert "Generated by graphviz" in svg or 'class="graph"' in svg
        width = int(re.search(r'width="(\d+)pt"', svg)[1])
        assert width < 3000                     # not the hand-laid 14,000 px strip


def test_module_constants_build_the_kernel_once_and_scalars_still_bind(monkeypatch, capsys):
    """`--const` naming only module constants builds the kernel once (a second build was a tenth of a small
    check's CPU); a scalar parameter among them still goes to the launch, not to the build."""
    from modelcheck.cli import commands
    builds = []
    real = commands.load
    monkeypatch.setattr(commands, "load", lambda *a, **k: builds.append(k) or real(*a, **k))
    assert main(["sync", FIXED, "--const", "ROUNDS=6", "--quiet"]) == 0
    assert builds == [{"kernel_name": None, "ROUNDS": 6}]
    assert "ROUNDS=6" in capsys.readouterr().out
    builds.clear()
    assert main(["check", str(KERNELS / "negative_extent.py"), "--const", "n=4", "--quiet"]) == 0
    assert builds == [{"kernel_name": None, "n": 4}, {"kernel_name": None}]
