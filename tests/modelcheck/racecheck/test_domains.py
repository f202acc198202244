"""Racecheck's clocks per cluster (racecheck.domains): the same verdicts as clocks over the whole grid, races
between CTAs included, and memory that follows the cluster, not the grid."""
from __future__ import annotations

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

import modelcheck
from modelcheck.numsim.engine import form_clusters
from modelcheck.numsim.trace import ClusterLayout
from modelcheck.racecheck.domains import cross_cluster_access
from tests.manifest import KERNELS, load_manifest, manifest_inputs

RACECHECK = importlib.import_module("modelcheck.racecheck")

# multi-CTA manifest kernels without a strong .gpu/.sys access (split clocks), at small sizes
SPLIT = [("race_flag_cta_scope", {}), ("oob_store_fixed", {}), ("vector_add", {}), ("warp_scan", {}),
         ("cluster_exit_early", {}), ("cluster_exit_early_fixed", {}), ("cluster_init_not_visible", {}),
         ("cluster_init_not_visible_fixed", {}), ("tma_multicast_tx", {}), ("tma_multicast_tx_fixed", {}),
         ("gemm_persistent_early_release", {}), ("gated_act_grid_row_off_by_one", {"TOKENS": 4})]


def _check(name: str, consts: dict, whole: bool | None, monkeypatch):
    entry = load_manifest()["kernels"][name]
    consts = {**entry.get("constants", {}), **consts}
    kernel = modelcheck.load(KERNELS / entry["file"], **consts)
    inputs = manifest_inputs(kernel.func, entry, kernel.constants)
    if whole is not None:
        monkeypatch.setattr(RACECHECK, "cross_cluster_access", (lambda f: object()) if whole else (lambda f: None))
    return RACECHECK.check(kernel.func, inputs)


def test_layout_groups_warps_as_the_engine_forms_clusters():
    grid, cluster, wpc = (4, 6, 2), (2, 3, 1), 3
    ctas = [SimpleNamespace(block_idx=(bx, by, bz)) for bz in range(grid[2]) for by in range(grid[1])
            for bx in range(grid[0])]
    form_clusters(ctas, grid, cluster)
    layout = ClusterLayout.of(grid, cluster, wpc)
    assert layout.size == 6 * wpc and layout.split
    for i, rt in enumerate(ctas):
        for k in range(wpc):
            assert layout.domain[i * wpc + k] == rt.cluster_id
            assert layout.local[i * wpc + k] == rt.cluster_rank * wpc + k
    assert not ClusterLayout.whole(8).split


@pytest.mark.parametrize("name,consts", SPLIT, ids=[n for n, _ in SPLIT])
def test_split_clocks_give_the_whole_grid_verdict(name, consts, monkeypatch):
    split = _check(name, consts, False, monkeypatch)
    whole = _check(name, consts, True, monkeypatch)
    assert split.stats["clock_domain"] == "cluster" and whole.stats["clock_domain"] == "grid"
    assert [f.id for f in split.findings] == [f.id for f in whole.findings]
    assert [f.details.get("occurrences") for f in split.findings] == \
        [f.details.get("occurrences") for f in whole.findings]
    assert split.stats["races"] == whole.stats["races"]


def test_race_between_ctas_found_with_split_clocks(monkeypatch):
    res = _check("gated_act_grid_row_off_by_one", {"TOKENS": 4}, None, monkeypatch)
    assert res.stats["clock_domain"] == "cluster"
    (f,) = res.findings
    assert f.kind == "data_race" and f.details["access_pair"] == "write_write"
    assert f.details["prior"]["warp"] // 16 != f.details["current"]["warp"] // 16      # CTAs 0 and 1


@pytest.mark.parametrize("name", ["race_flag_cta_scope_fixed", "persistent_atomic_pre_no_sync", "warp_reduce_pre"])
def test_census_sends_cross_cta_memory_ordering_to_the_whole_grid(name, monkeypatch):
    entry = load_manifest()["kernels"][name]
    assert cross_cluster_access(modelcheck.load(KERNELS / entry["file"], **entry.get("constants", {})).func)
    assert _check(name, {}, None, monkeypatch).stats["clock_domain"] == "grid"


@pytest.mark.parametrize("name", ["race_flag_cta_scope_fixed", "persistent_atomic_pre_no_sync"])
def test_a_census_miss_reruns_with_the_whole_grid(name, monkeypatch):
    expected = _check(name, {}, None, monkeypatch)
    missed = _check(name, {}, False, monkeypatch)      # the census says split: the analysis finds out and reruns
    assert missed.stats["clock_domain"] == "grid"
    assert [f.id for f in missed.findings] == [f.id for f in expected.findings]


def test_clock_memory_follows_the_cluster():
    """The 1024-CTA x 16-warp launch's clocks: charged by cluster lanes (16 x 32), a small part of the budget."""
    kernel = modelcheck.load(KERNELS / "gated_act_grid.py", TOKENS=1024)
    assert cross_cluster_access(kernel.func) is None
    layout = ClusterLayout.of((1024, 1, 1), (1, 1, 1), 16)
    assert layout.size == 16 and np.array_equal(layout.domain, np.repeat(np.arange(1024), 16))


@pytest.mark.slow
def test_gated_activation_at_1024_ctas():
    """The whole launch (16,384 warps): clean under the default 2 GB budget; the twin's race between CTAs."""
    entry = load_manifest()["kernels"]["gated_act_grid"]
    kernel = modelcheck.load(KERNELS / entry["file"])
    inputs = manifest_inputs(kernel.func, entry, kernel.constants)
    res = RACECHECK.check(kernel.func, inputs)
    assert res.verdict == "clean" and res.stats["numsim"]["warps"] == 16384
    twin = modelcheck.load(KERNELS / "gated_act_grid_row_off_by_one.py")
    res = RACECHECK.check(twin.func, inputs)
    assert [f.kind for f in res.findings] == ["data_race"]
