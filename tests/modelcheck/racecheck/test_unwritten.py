"""Racecheck drops plain reads of inputs nothing can write (racecheck/unwritten.py): every verdict and finding is
what the analysis gives with them kept, the run's counts still include them, and a write record to such an
input stops the analysis instead of judging without the reads it dropped."""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from modelcheck import numsim
from modelcheck.common.findings import json_safe
from modelcheck.numsim import Trace
from modelcheck.numsim.errors import ResourceLimit
from modelcheck.racecheck import unwritten
from tests.manifest import KERNELS, entries, manifest_inputs

_ENTRIES = dict(entries())
# every other kernel of the race corpus (buggy and fixed twins alternate, so both kinds stay): the whole corpus
# twice costs more than the filter it checks
NAMES = sorted(n for n, e in _ENTRIES.items()
               if (e["expect"].get("racecheck") or {}).get("verdict") in ("error", "review", "clean")
               and n.startswith(("race_", "kda", "gemm", "fa4", "gdn", "cp_async", "bulk")))[::2]


def _report(name):
    entry = _ENTRIES[name]
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    report = modelcheck.racecheck(kernel.func, inputs=manifest_inputs(kernel.func, entry, kernel.constants))
    return report.verdict, [json_safe((f.id, f.kind, f.message, f.details)) for f in report.findings], report.stats


def _keep_all(self, chunk):
    return chunk, 0, 0


@pytest.mark.parametrize("name", NAMES)
def test_findings_do_not_depend_on_dropping_unwritten_reads(name, monkeypatch):
    dropped = _report(name)
    monkeypatch.setattr(unwritten.UnwrittenReads, "split", _keep_all)
    kept = _report(name)
    assert dropped[:2] == kept[:2]
    assert dropped[2]["lane_accesses"] == kept[2]["lane_accesses"]
    assert kept[2]["unwritten_read_lanes"] == 0


@pytest.mark.parametrize("name", ["kda_fwd", "gdn_prefill", "race_read_before_wait", "race_tcgen05_mma_smem_reuse"])
def test_the_kernels_read_inputs_nothing_writes(name):
    """The filter is exercised: these kernels read inputs (weights, activations) they never write."""
    assert _report(name)[2]["unwritten_read_lanes"] > 0


def test_a_read_only_input_is_named_unwritten():
    """NumSim names the inputs it binds read-only; a buffer the kernel stores to is not one of them."""
    entry = _ENTRIES["race_bulk_store_read_wait_dest"]
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    seen = {}

    class Start(numsim.Observer):
        wants_accesses = False

        def on_start(self, run):
            seen["run"] = run
    numsim.run(kernel.func, manifest_inputs(kernel.func, entry, kernel.constants), observers=[Start()])
    run = seen["run"]
    assert run.unwritten        # x: only read


def test_a_write_to_an_unwritten_input_stops_the_filter():
    """If a write record ever reached an input NumSim bound read-only, the reads dropped before could have paired
    with it: the analysis stops (incomplete) rather than judge without them."""
    entry = _ENTRIES["race_bulk_store_read_wait_dest"]
    kernel = modelcheck.load(KERNELS / entry["file"], **entry["constants"])
    trace = Trace()
    numsim.run(kernel.func, manifest_inputs(kernel.func, entry, kernel.constants), observers=[trace])
    chunk = next(c for c in trace.chunks if c.n)
    written = {a.id for a, k in zip([chunk.allocs[i] for i in chunk.alloc.tolist()], chunk.kind.tolist()) if k != 0
               and a.space == "global"}
    with pytest.raises(ResourceLimit, match="internal: a write to"):
        unwritten.UnwrittenReads(frozenset(written)).split(chunk)
    read_only = {a.id for a in chunk.allocs if a.space == "global"} - written
    kept, records, lanes = unwritten.UnwrittenReads(frozenset(read_only)).split(chunk)
    assert records > 0 and lanes > 0 and kept.n == chunk.n - records
    assert int(np.diff(kept.lane_start).sum()) == kept.lane.size == int(np.diff(chunk.lane_start).sum()) - lanes
