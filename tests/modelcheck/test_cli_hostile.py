"""Every CLI subcommand over hostile kernels: a finding or a one-line error with a documented exit
code, never a traceback, within the budgets (tests/fixtures/hostile/*.py say what each one is)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from modelcheck.cli import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "fixtures" / "hostile"
DOCUMENTED = {0, 1, 2, 3, EXIT_USAGE}
SUBCOMMANDS = ("parse", "run", "check", "sync", "race", "states", "graph", "replay", "prove")
FAST = ["--max-steps", "300000", "--max-seconds", "30"]

# kernel -> the exit code every subcommand that runs it must give (parse and prove are listed apart)
EXPECT = {
    "zero_threads": 1, "negative_threads": 1, "million_threads": 1, "shared_300kb": 1,   # hardware limits
    "hundred_million_blocks": 2, "huge_parameter": 2, "four_gb_output": 2,               # memory budget
    "nested_loops": 2, "infinite_loop": 2,                                              # step budget
    "negative_shared": EXIT_USAGE, "huge_shift_constant": EXIT_USAGE, "power_tower_constant": EXIT_USAGE,
    "empty_min_constant": EXIT_USAGE, "binary": EXIT_USAGE, "empty": EXIT_USAGE, "syntax_error": EXIT_USAGE,
    "unreached_unsupported": 0, "cr_line_endings": 0,
}


def _argv(command: str, kernel: Path, tmp_path: Path) -> list[str]:
    argv = [command, str(kernel)]
    if command == "graph":
        argv += ["--out", str(tmp_path / "hb.json")]
    if command == "replay":
        argv += ["--finding", "1"]
    if command == "prove":
        argv += ["--symbolic", "FLAG", "--max-seconds", "30"]
    elif command != "parse":
        argv += FAST
    return argv


@pytest.mark.parametrize("command", SUBCOMMANDS)
@pytest.mark.parametrize("name", sorted(EXPECT))
def test_hostile_kernels_give_documented_exit_codes_and_no_traceback(name, command, tmp_path, capsys):
    kernel = HOSTILE / f"{name}.py"
    rc = main(_argv(command, kernel, tmp_path))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert rc != EXIT_INTERNAL, err
    assert rc in DOCUMENTED, (rc, err)
    expect = EXPECT[name]
    if command == "parse":
        assert rc == (EXIT_USAGE if expect == EXIT_USAGE else 0), err
    elif command == "prove":
        # no such constant (usage), or outside what the prover models (incomplete)
        assert rc in ((EXIT_USAGE,) if expect == EXIT_USAGE else (EXIT_USAGE, 2)), err
    elif command == "replay" and name == "cr_line_endings":
        assert rc == EXIT_USAGE, err          # a clean kernel: nothing to replay
    elif command == "replay" and name == "unreached_unsupported":
        assert rc == 2, err                   # its only finding says what was not covered: no schedule
    elif command == "graph" and expect == 0:
        assert rc == 0
    else:
        assert rc == expect, (rc, out[-2000:], err[-2000:])
    if rc == EXIT_USAGE:
        assert err.strip() and len(err) < 4000


def test_a_megabyte_expression_line_gives_a_short_error(tmp_path, capsys):
    terms = " + ".join(f"undefined_{i}" for i in range(60000))
    text = (HOSTILE / "zero_threads.py").read_text().replace("out[0] = 1", f"out[0] = {terms}")
    kernel = tmp_path / "long_line.py"
    kernel.write_text(text)
    assert len(text) > 1_000_000
    assert main(["parse", str(kernel)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "long_line.py:10:" in err and "undefined_0" in err
    assert len(err) < 2000


def test_cr_line_endings_parse_like_lf(capsys):
    assert b"\r" in (HOSTILE / "cr_line_endings.py").read_bytes()
    assert main(["run", str(HOSTILE / "cr_line_endings.py")]) == 0


def test_unreached_unsupported_operation_is_review_and_strict_fails(capsys):
    kernel = str(HOSTILE / "unreached_unsupported.py")
    assert main(["check", kernel]) == 0
    out = capsys.readouterr().out
    assert "REVIEW" in out and "unsupported_operation_not_reached" in out and "cuda.grid_sync" in out
    assert main(["check", kernel, "--strict"]) == 3
    assert main(["check", kernel, "--const", "FLAG=1"]) == 2     # reached: incomplete


def test_budget_messages_name_the_budget(capsys):
    assert main(["run", str(HOSTILE / "nested_loops.py"), *FAST]) == 2
    assert "step budget" in capsys.readouterr().out
    assert main(["check", str(HOSTILE / "hundred_million_blocks.py")]) == 2
    assert "memory budget" in capsys.readouterr().out
    assert main(["sync", str(HOSTILE / "nested_loops.py"), "--max-seconds", "0.5"]) == 2
    assert "time budget" in capsys.readouterr().out


def test_usage_errors_exit_64_and_version(capsys):
    assert main(["check"]) == EXIT_USAGE
    assert main(["check", str(HOSTILE / "zero_threads.py"), "--bogus"]) == EXIT_USAGE
    assert main(["nonsense"]) == EXIT_USAGE
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("modelcheck ")


def _cli(*args, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "modelcheck", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


def test_a_closed_pipe_exits_quietly(tmp_path):
    # a canonical text larger than a pipe's buffer, read one line by a reader that then goes away (`| head -1`)
    text = (HOSTILE / "zero_threads.py").read_text()
    constants = "".join(f"C{i} = {i}\n" for i in range(8000))    # ~100 KB: past a 64 KB pipe buffer
    kernel = tmp_path / "big.py"
    kernel.write_text(text.replace("from tvm_tirx.script import tirx as T\n",
                                   "from tvm_tirx.script import tirx as T\n" + constants))
    proc = _cli("parse", str(kernel), bufsize=0)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert err == ""


def test_ctrl_c_exits_130_with_one_line():
    proc = _cli("run", str(HOSTILE / "nested_loops.py"), "--max-seconds", "300")
    time.sleep(3.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED
    assert err.decode().strip() == "modelcheck: interrupted"


def test_ctrl_c_during_start_up_still_exits_130():
    # a Ctrl-C that lands before the command installs its own handling (a loaded machine's slow start-up):
    # the supervised child still exits 130 with the one line, not 70 (an internal error)
    code = ("import sys\nfrom modelcheck.cli import supervise\n"
            "def body():\n    raise KeyboardInterrupt\n"
            "sys.exit(supervise.run(body, 0.0))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, proc.stderr
    assert proc.stderr.decode().strip() == "modelcheck: interrupted"


def test_internal_errors_exit_70_with_a_hint(monkeypatch, capsys):
    import modelcheck.cli as cli

    def boom(args, job):
        raise KeyError("a bug")
    monkeypatch.setitem(cli._COMMANDS, "parse", "_boom")
    monkeypatch.setattr(cli, "_boom", boom, raising=False)
    assert main(["parse", str(HOSTILE / "zero_threads.py")]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error" in err and "KeyError" in err and "--debug" in err and "Traceback" not in err
    assert main(["--debug", "parse", str(HOSTILE / "zero_threads.py")]) == EXIT_INTERNAL
    assert "Traceback" in capsys.readouterr().err


def test_outputs_never_overwrite_an_input_and_write_exactly_the_path(tmp_path, capsys):
    kernel = tmp_path / "k.py"
    kernel.write_text((ROOT / "kernels" / "producer_overtaking.py").read_text())
    before = kernel.read_bytes()
    assert main(["check", str(kernel), "--sarif", str(kernel)]) == EXIT_USAGE
    assert kernel.read_bytes() == before
    assert "refusing" in capsys.readouterr().err
    out = tmp_path / "result"
    assert main(["run", str(ROOT / "kernels" / "producer_overtaking_fixed.py"), "--out", str(out)]) == 0
    assert out.is_file() and not (tmp_path / "result.npz").exists()
    import numpy as np
    with np.load(out) as data:
        assert "out" in data.files


def test_sarif_through_a_symlink_replaces_the_link_not_its_target(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "report.sarif"
    os.symlink(victim, link)
    assert main(["check", str(ROOT / "kernels" / "producer_overtaking.py"), "--sarif", str(link)]) == 1
    assert victim.read_text() == "keep me"
    assert not link.is_symlink() and '"version": "2.1.0"' in link.read_text()
