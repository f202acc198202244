"""Issue 17: clusters are modeled in NumSim and the checkers (a cluster launch runs and is checked); the
prover's fragment is one CTA's barrier protocols, so `prove` stays `incomplete` naming a cluster launch or a
cluster barrier and its line, through Python and the command line; nothing raises."""
from __future__ import annotations

from pathlib import Path

import pytest

import modelcheck
from modelcheck.cli import main

FIX = Path(__file__).parent.parent / "fixtures" / "ops"
LAUNCH = str(FIX / "cluster_launch.py")
LAUNCH_LINE = 8          # the def line: the launch's span
BARRIER = str(FIX / "cluster_barrier_one_cta.py")
BARRIER_LINE = 17        # T.cuda.cluster_sync()


def _mentions(text: str, name: str, line: int) -> bool:
    return "cluster" in text and f"{name}:{line}:" in text


@pytest.mark.parametrize("path", [LAUNCH, BARRIER])
@pytest.mark.parametrize("check", [modelcheck.synccheck, modelcheck.racecheck])
def test_checkers_model_the_cluster(check, path):
    assert check(modelcheck.load(path)).verdict == "clean"


def test_prove_is_incomplete_on_a_cluster_launch_not_proved():
    report = modelcheck.prove(modelcheck.load(LAUNCH), ["N"])
    assert report.verdict == "incomplete"
    assert _mentions(report.reasons[0], "cluster_launch.py", LAUNCH_LINE) and "cluster launch 2x1x1" in \
        report.reasons[0]


def test_prove_is_incomplete_on_a_cluster_barrier_naming_it():
    report = modelcheck.prove(modelcheck.load(BARRIER), ["N"])
    assert report.verdict == "incomplete"
    assert any("cluster barrier cuda.cluster_sync" in r and _mentions(r, "cluster_barrier_one_cta.py", BARRIER_LINE)
               for r in report.reasons), report.reasons


@pytest.mark.parametrize("argv,code", [(["check", LAUNCH], 0), (["run", LAUNCH], 0),
                                       (["prove", LAUNCH, "--symbolic", "N"], 2),
                                       (["prove", BARRIER, "--symbolic", "N"], 2)])
def test_cli_exit_codes(argv, code, capsys):
    assert main(argv) == code
    out = capsys.readouterr()
    if code == 2:
        assert "cluster" in out.out + out.err


CLC = str(FIX / "clc_rounds.py")
CLC_LINE = 23            # the try_cancel


def test_prove_names_a_try_cancel_in_a_one_cta_kernel():
    """Without a cluster launch the rest is in the fragment, but try_cancel's answer and its 16 tx bytes are
    not: the proof is incomplete naming it (it used to be left out, and the ring refuted for missing bytes)."""
    report = modelcheck.prove(modelcheck.load(CLC), ["ROUNDS"], ranges={"ROUNDS": (1, 4)})
    assert report.verdict == "incomplete"
    assert any("clusterlaunchcontrol.try_cancel" in r and f"clc_rounds.py:{CLC_LINE}:" in r
               for r in report.reasons), report.reasons


@pytest.mark.parametrize("name,symbolic,shape", [("gemm_2cta_clc", "K_TILES", "4x1x1"),
                                                 ("cluster_exit_early_fixed", "CLUSTERS", "2x1x1"),
                                                 ("tma_multicast_tx_fixed", "GY", "2x1x1")])
def test_prove_on_the_cluster_kernels_names_the_cluster_launch(name, symbolic, shape):
    """The corpus's cluster kernels (cluster barriers, remote arrivals, multicast, 2-CTA MMA, CLC): `prove`
    stops at the cluster launch, naming it and its line, rather than proving a one-CTA view of them."""
    from tests.manifest import KERNELS
    report = modelcheck.prove(modelcheck.load(KERNELS / f"{name}.py"), [symbolic])
    assert report.verdict == "incomplete"
    assert f"cluster launch {shape}" in report.reasons[0] and f"{name}.py:" in report.reasons[0], report.reasons
