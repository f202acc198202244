"""`modelcheck check package.module:NAME [--config KEY=VALUE]`: a kernel built by the real compiler from an
importable module (issue 14, item 7)."""
from __future__ import annotations

from pathlib import Path

import pytest

from modelcheck.cli import EXIT_USAGE, main

pytest.importorskip("tvm_tirx")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "module_target"


@pytest.fixture(autouse=True)
def _on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))


def test_library_protocol_default_config_finds_the_hang(capsys):
    assert main(["check", "parity_lib:", "-q"]) == 1           # CONFIGS[0]: the one-phase-off kernel
    out = capsys.readouterr().out
    assert "deadlock" in out and "hang_wrong_parity" in out
    assert "hang_wrong_parity.py" in out                        # the finding points at the kernel's own file


def test_config_overrides_the_first_configuration(capsys):
    assert main(["check", "parity_lib:", "--config", "fixed=True", "-q"]) == 0
    assert "CLEAN" in capsys.readouterr().out


def test_named_attribute_is_the_kernel_object(capsys):
    assert main(["sync", "parity_lib:hang_wrong_parity_fixed", "-q"]) == 0


def test_name_picks_one_of_a_factorys_kernels(capsys):
    assert main(["sync", "parity_lib:both", "-q"]) == EXIT_USAGE
    assert "pick one" in capsys.readouterr().err
    assert main(["parse", "parity_lib:both", "--kernel", "hang_wrong_parity", "--summary-only"]) == 0


@pytest.mark.parametrize("argv,message", [
    (["check", "parity_lib:nothing", "-q"], "no kernel named 'nothing'"),
    (["check", "no_such_module_xyz:kernel", "-q"], "cannot import no_such_module_xyz"),
    (["check", "parity_lib:", "--config", "rounds=3", "-q"], "unexpected keyword argument 'rounds'"),
    (["check", "parity_lib:", "--config", "=3", "-q"], "expected KEY=VALUE"),
    (["check", "parity_lib:", "--const", "ROUNDS=3", "-q"], "configure the build with --config"),
])
def test_bad_targets_are_usage_errors(capsys, argv, message):
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_config_on_a_kernel_file_is_a_usage_error(capsys):
    kernel = Path(__file__).resolve().parents[2] / "kernels" / "hang_wrong_parity_fixed.py"
    assert main(["check", str(kernel), "--config", "fixed=True", "-q"]) == EXIT_USAGE
    assert "--config KEY=VALUE configures" in capsys.readouterr().err
