"""Batch throughput (issue 20): 200 tasks from the manifest (kernels x sizes, Synccheck and Racecheck),
run with 1 and 2 local worker processes and on a 2-worker Dask LocalCluster.

Targets on the 2-core machine: >= 1.7x the 1-worker throughput with 2 workers, and the Dask path within
15 % of the 2-worker process pool.  Each configuration starts from an empty results file and cold task
processes (their start-up is included); the LocalCluster is started before the clock (its start-up is
reported separately).  The verdicts of the three runs must agree.  The load average before and after each
run is recorded: other jobs on the machine bias every figure, the scaling one most.

Usage: python benchmarks/batch_throughput.py [--tasks 200] [--repeat 1] [--skip-dask]
Writes benchmarks/results/batch_throughput.json.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks._common import record  # noqa: E402

# (manifest entry, constant, sizes): the larger kernels first, so the run does not end on a long task; the
# buggy twins stop at their first error, the fixed kernels run to the end
_RING_SIZES = [512, 1024, 2048]
SWEEPS = [
    ("kda_fwd", "SEQ_LEN", [256, 384, 512]),
    ("kda_fwd_single_m_o", "SEQ_LEN", [256, 384, 512]),
    ("kda_fwd_dvec_early", "SEQ_LEN", [256, 384, 512]),
    ("gemm_persistent", "TILES_PER_CTA", [3, 4, 6, 8]),
    ("gemm_persistent_acc_reuse", "TILES_PER_CTA", [3, 4, 6, 8]),
    ("gemm_persistent_early_release", "TILES_PER_CTA", [3, 4, 6, 8]),
    ("fa4_fwd", "NKV", [4, 6, 8, 10]),
    ("fa4_fwd_p_overwrite", "NKV", [4, 6, 8, 10]),
    ("gemm_ws", "K", [512, 768, 1024, 1536, 2048]),
    ("gdn_prefill", "NUM_CHUNKS", [6, 9, 12, 16]),
    ("gdn_prefill_sinp_parity", "NUM_CHUNKS", [6, 9, 12, 16]),
    ("gdn_prefill_sinp_no_acquire", "NUM_CHUNKS", [6, 9, 12, 16]),
    ("bulk_ring", "ROUNDS", [256, 512, 1024, 2048]),
    ("ring_pipeline", "ROUNDS", _RING_SIZES),
    ("ring_arith", "ROUNDS", _RING_SIZES),
    ("ring_guarded", "ROUNDS", _RING_SIZES),
    ("ring_short_arrival_fixed", "ROUNDS", _RING_SIZES),
    ("producer_overtaking_fixed", "ROUNDS", _RING_SIZES),
    ("mbar_depth_two_pipeline", "ROUNDS", _RING_SIZES),
    ("drain_tail", "ROUNDS", _RING_SIZES),
    ("late_wait_gates_next", "ROUNDS", [64, 128, 256, 512, 1024]),
    ("kda_ring_m_o", "NC", [16, 32, 64]),
    ("kda_ring_dvec", "NC", [16, 32, 64]),
    ("kda_ring_m_o_single", "NC", [16, 32, 64]),
    ("ring_missing_guard", "ROUNDS", _RING_SIZES),
    ("ring_consumer_parity", "ROUNDS", _RING_SIZES),
    ("ring_producer_phase0", "ROUNDS", _RING_SIZES),
    ("ring_short_arrival", "ROUNDS", _RING_SIZES),
    ("producer_overtaking", "ROUNDS", _RING_SIZES),
]


def plan(n_tasks: int) -> dict:
    """The first `n_tasks` (entry, size, check) points as a plan: one sweep per entry and check."""
    from tests.manifest import INPUT_BUILDERS, KERNELS, load_manifest
    manifest = load_manifest()["kernels"]
    points = [(name, const, size, check) for name, const, sizes in SWEEPS for size in sizes
              for check in ("sync", "race")]
    if len(points) < n_tasks:
        raise SystemExit(f"only {len(points)} points listed; add sizes to SWEEPS for {n_tasks} tasks")
    sweeps: dict = {}
    for name, const, size, check in points[:n_tasks]:
        entry = manifest[name]
        sweep = sweeps.setdefault((name, check), {"kernels": [str(KERNELS / entry["file"])], "checks": [check],
                                                  "constants": []})
        sweep["constants"].append({**entry["constants"], const: size})
        if entry["inputs"]:
            sweep["inputs"] = dict(entry["inputs"])
        if entry.get("inputs_builder"):
            module, _, function = entry["inputs_builder"].partition(":")
            sweep["inputs_builder"] = f"{INPUT_BUILDERS / (module + '.py')}:{function}"
    return {"budget": {"seconds": 300}, "sweep": list(sweeps.values())}


def measure(label: str, the_plan: dict, executor, folder: Path, n_tasks: int) -> dict:
    import modelcheck
    results = folder / f"{label}.jsonl"
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    res = modelcheck.batch({**the_plan, "results": str(results)}, executor)
    wall = time.perf_counter() - t0
    load_after = os.getloadavg()
    assert len(res) == n_tasks and res.ran == n_tasks, (len(res), res.ran)
    assert all(r["attempts"] == 1 for r in res), "a task was retried"
    row = {"label": label, "wall_s": round(wall, 2), "tasks_per_s": round(n_tasks / wall, 3),
           "task_seconds_sum": round(sum(r["seconds"] for r in res), 2),
           "task_seconds_median": round(statistics.median(r["seconds"] for r in res), 4),
           "peak_rss_mb_max": max(r["peak_rss_mb"] or 0 for r in res),
           "verdicts": res.counts(), "load_before": [round(x, 2) for x in load_before],
           "load_after": [round(x, 2) for x in load_after]}
    print(f"{label:>8}: {wall:7.1f} s, {n_tasks / wall:6.2f} tasks/s (sum of task times {row['task_seconds_sum']} s; "
          f"load {load_before[0]:.2f} -> {load_after[0]:.2f})", flush=True)
    return row, sorted((r["key"], r["verdict"]) for r in res)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=1, help="run each configuration this many times (best kept)")
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()
    from modelcheck.portfolio.executors import DaskExecutor, LocalExecutor
    the_plan = plan(args.tasks)
    runs, verdicts, cluster_start = [], {}, None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        client = cluster = None
        if not args.skip_dask:
            import dask
            import distributed
            t0 = time.perf_counter()
            with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                   host="127.0.0.1", dashboard_address=":0", memory_limit=0)
                client = distributed.Client(cluster)
            cluster_start = round(time.perf_counter() - t0, 2)
        configs = [("local-1", lambda: LocalExecutor(1)), ("local-2", lambda: LocalExecutor(2))]
        if client is not None:
            configs.append(("dask-2", lambda: DaskExecutor(client=client)))
        try:
            for k in range(args.repeat):
                for label, make in configs:
                    row, v = measure(f"{label}" if args.repeat == 1 else f"{label}", the_plan, make(),
                                     folder / f"r{k}", args.tasks)
                    runs.append(row)
                    verdicts.setdefault(label, v)
                    assert v == verdicts[label]
        finally:
            if client is not None:
                client.close()
                cluster.close()
    assert len({tuple(v) for v in verdicts.values()}) == 1, "the executors disagree on verdicts"
    best = {label: max((r for r in runs if r["label"] == label), key=lambda r: r["tasks_per_s"])
            for label, _ in configs}
    t1, t2 = best["local-1"]["tasks_per_s"], best["local-2"]["tasks_per_s"]
    summary = {"speedup_2_over_1": round(t2 / t1, 3), "scaling_efficiency": round(t2 / (2 * t1), 3)}
    if "dask-2" in best:
        summary["dask_over_pool"] = round(best["dask-2"]["tasks_per_s"] / t2, 3)
    print(f"speedup 2 workers / 1: {summary['speedup_2_over_1']:.2f}x (efficiency {summary['scaling_efficiency']:.0%})"
          + (f"; Dask / pool: {summary['dask_over_pool']:.2f}" if "dask_over_pool" in summary else ""))
    path = record("batch_throughput", {
        "tasks": args.tasks, "checks": ["sync", "race"], "sweeps": [list(s[:2]) + [s[2]] for s in SWEEPS],
        "runs": runs, "best": best, "dask_cluster_start_s": cluster_start, **summary,
        "targets": {"speedup_2_over_1": ">= 1.7", "dask_over_pool": ">= 0.85"},
        "note": "throughput = tasks / wall time of modelcheck.batch from an empty results file (task processes "
                "start cold); the load average (1, 5, 15 min) before and after each run shows what else the "
                "machine was doing"})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
