"""The Dask executor on a LocalCluster of two worker processes on loopback: a worker killed in the
middle of a task, a task process that crashes, the CLI's --scheduler and --dask-local."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import modelcheck  # noqa: E402
from modelcheck import cli  # noqa: E402
from modelcheck.portfolio.executors import DaskExecutor  # noqa: E402

from .helpers import RING, RING_BUG, calls, records, toml_plan, write_builders  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           dashboard_address=":0", memory_limit=0)
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _plan(tmp_path, extra: str, client=None) -> "Path":
    if client is not None:
        client.wait_for_workers(2, timeout=60)     # a worker killed by an earlier test is back
    write_builders(tmp_path)
    return toml_plan(tmp_path, f'''
[budget]
seconds = 120

[[sweep]]
kernels = ["{RING}", "{RING_BUG}"]
checks = ["sync", "race"]
constants = {{ ROUNDS = [1, 2, 3] }}
inputs_builder = "builders.py:plain"
{extra}''')


SLEEPER = f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = {{ ROUNDS = 5 }}
inputs_builder = "builders.py:sleeper"
'''


def _killer(tmp_path, kills: int, before_last=None):
    """Kill the Dask worker that runs the sleeper, each time it starts, `kills` times; return the pids seen."""
    seen: list = []

    def run():
        marks = tmp_path / "marks"
        deadline = time.monotonic() + 240
        while len(seen) < kills and time.monotonic() < deadline:
            mark = marks / f"{len(seen)}.json"
            if mark.exists():
                try:
                    info = json.loads(mark.read_text())
                except ValueError:
                    time.sleep(0.05)
                    continue
                time.sleep(0.3)                       # mid-task: the sleeper is sleeping now
                if len(seen) == kills - 1 and before_last is not None:
                    before_last()
                os.kill(info["ppid"], signal.SIGKILL)  # the Dask worker process, not the task process
                seen.append(info)
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, seen


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _check_exactly_once(tmp_path, n: int) -> list:
    recs = records(tmp_path / "plan.results.jsonl")
    assert len(recs) == n, [r["kernel"] for r in recs]
    assert len({r["key"] for r in recs}) == n
    return recs


def test_killed_worker_task_is_retried_and_recorded_once(client, tmp_path):
    plan = _plan(tmp_path, SLEEPER, client)
    (tmp_path / "sleep").write_text("")
    # the sleeper's retry must not sleep again: the killer removes the flag just before it kills
    thread, seen = _killer(tmp_path, 1, before_last=lambda: (tmp_path / "sleep").unlink())
    res = modelcheck.batch(plan, DaskExecutor(client=client))
    thread.join(5)
    assert len(seen) == 1
    recs = _check_exactly_once(tmp_path, 13)
    sleeper = next(r for r in recs if r["inputs"]["builder"] == "builders.py:sleeper")
    assert sleeper["attempts"] == 2 and sleeper["verdict"] == "clean"
    assert len(sleeper["retries"]) == 1 and "the Dask worker running it was lost: KilledWorker" in sleeper["retries"][0]
    assert _gone(seen[0]["pid"])          # the killed worker's task process did not outlive it
    verdicts = {(r["kernel"].rsplit("/", 1)[-1], r["constants"].get("ROUNDS"), r["check"]): r["verdict"] for r in res}
    assert verdicts[("ring_missing_guard.py", 2, "sync")] == "error"
    assert all(v == "clean" for k, v in verdicts.items() if k[0] == "ring_arith.py")
    assert all(r["worker"].startswith("dask tcp://127.0.0.1:") for r in recs)
    assert [c.split()[0] for c in calls(tmp_path)].count("sleeper") == 2


def test_worker_killed_on_both_attempts_is_recorded_incomplete(client, tmp_path):
    plan = _plan(tmp_path, SLEEPER, client)
    (tmp_path / "sleep").write_text("")
    thread, seen = _killer(tmp_path, 2)
    res = modelcheck.batch(plan, DaskExecutor(client=client))
    thread.join(5)
    assert len(seen) == 2
    recs = _check_exactly_once(tmp_path, 13)
    sleeper = next(r for r in recs if r["inputs"]["builder"] == "builders.py:sleeper")
    assert sleeper["verdict"] == "incomplete" and sleeper["attempts"] == 2 and sleeper["checker_verdict"] is None
    assert sleeper["reason"].startswith("the task crashed on each of 2 attempts: the Dask worker running it was lost: "
                                        "KilledWorker")
    assert [c.split()[0] for c in calls(tmp_path)].count("sleeper") == 2       # never a third attempt
    assert res.verdict == "error" and res.counts() == {"clean": 8, "review": 0, "error": 4, "incomplete": 1}


def test_crashing_task_process_on_dask_is_retried_once(client, tmp_path):
    plan = _plan(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["race"]
inputs_builder = "builders.py:crash"
''', client)
    before = set(client.scheduler_info()["workers"])
    res = modelcheck.batch(plan, client)                # a Client as the executor
    recs = _check_exactly_once(tmp_path, 13)
    crashed = next(r for r in recs if r["inputs"]["builder"] == "builders.py:crash")
    assert crashed["verdict"] == "incomplete" and crashed["attempts"] == 2
    assert "the task process exited with code 3" in crashed["reason"] and "; then " in crashed["reason"]
    assert set(client.scheduler_info()["workers"]) == before     # only the task process died, not the worker
    assert res.exit_code == 1                                     # error (ring_missing_guard) ranks above incomplete


def test_cli_scheduler_and_dask_local(client, tmp_path, capsys):
    plan = _plan(tmp_path, "", client)
    address = client.scheduler.address
    assert cli.main(["batch", str(plan), "--scheduler", address, "--quiet"]) == 1
    first = _check_exactly_once(tmp_path, 12)
    assert "12 task(s) run" in capsys.readouterr().out
    # the same plan on a LocalCluster the command starts: everything is recorded, nothing runs again
    assert cli.main(["batch", str(plan), "--dask-local", "2", "--quiet"]) == 1
    assert "0 task(s) run, 12 already recorded" in capsys.readouterr().out
    (tmp_path / "plan.results.jsonl").unlink()
    assert cli.main(["batch", str(plan), "--dask-local", "2", "--quiet"]) == 1
    again = _check_exactly_once(tmp_path, 12)
    assert sorted((r["key"], r["verdict"]) for r in again) == sorted((r["key"], r["verdict"]) for r in first)
    (tmp_path / "plan.results.jsonl").unlink()
    assert cli.main(["batch", str(plan), "--scheduler", "tcp://127.0.0.1:9", "--quiet"]) == 64
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in capsys.readouterr().err
