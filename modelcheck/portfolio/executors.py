"""Executors: where the tasks run.  Both hand every task to a `Sandbox` task process, so
budgets, crash detection and the retry rule are the same in both.

`LocalExecutor(jobs)` keeps `jobs` task processes and waits on all of them at once (one
task per process at a time, processes reused).  Not concurrent.futures: its pool cannot kill
one overrunning task, and one dead worker breaks the whole pool, failing the innocent tasks
of every other worker with it; here a kill or a crash touches exactly the task it hit.

`DaskExecutor(scheduler=... | local_workers=N | client=...)` submits each task to a
dask.distributed cluster, where it runs in one of the worker process's sandboxes (one per
thread running a task; started on every worker before the first task, and kept warm for the
next batch on the same cluster).  dask is imported only here and only when this executor runs.
A LocalCluster is started with `allowed-failures = 0`, so a worker that dies fails its tasks
at once (KilledWorker) and the one retry below is the only one; a remote scheduler applies its
own `allowed-failures` first.

The retry rule (`settle`): an outcome `done` is recorded as it is; `timeout` is recorded
incomplete at once (rerunning a task that overran its budget would overrun it again); `crashed`
(the task process or the Dask worker died) is retried once, and if the retry crashes too it is
recorded incomplete with both reasons.  Each task reaches `emit` exactly once.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque

from .sandbox import Outcome, Sandbox, WorkerStartError

RETRIES = 1


class ExecutorError(RuntimeError):
    """The executor cannot run at all (dask missing, scheduler unreachable, workers without modelcheck)."""


def settle(outcome: Outcome, attempt: int) -> bool:
    """True when the task should run again."""
    return outcome.kind == "crashed" and attempt <= RETRIES


class LocalExecutor:
    def __init__(self, jobs: int | None = None):
        if jobs is not None and jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {jobs}")
        self.jobs = jobs or os.cpu_count() or 1

    def describe(self) -> str:
        return f"local process pool, {self.jobs} worker(s)"

    def run(self, tasks: list, emit) -> None:
        from multiprocessing.connection import wait
        if not tasks:
            return
        pool = [Sandbox(f"local-{i + 1}") for i in range(min(self.jobs, len(tasks)))]
        try:
            for sb in pool:
                sb.spawn()
            for sb in pool:
                sb.ready()
            # (task, attempt number, reasons earlier attempts were retried)
            queue: deque[tuple[object, int, list[str | None]]] = deque((t, 1, []) for t in tasks)
            busy: dict = {}
            idle = list(pool)
            done: list = []
            while queue or busy or done:
                while idle and queue:
                    sb = idle.pop()
                    item = queue.popleft()
                    sb.submit(item[0])
                    busy[sb] = item
                for task, outcome, attempt, reasons in done:     # recorded while the workers run the next tasks
                    emit(task, outcome, attempt, reasons)
                done = []
                if not busy:
                    continue
                timeout = max(0.0, min(sb.deadline for sb in busy) - time.monotonic())
                ready = {id(c) for c in wait([sb.conn for sb in busy], timeout=timeout)}
                finished = []
                for sb in list(busy):
                    if id(sb.conn) in ready:
                        finished.append((sb, sb.collect()))
                    elif sb.deadline <= time.monotonic():
                        finished.append((sb, sb.expire()))
                for sb, outcome in finished:
                    task, attempt, reasons = busy.pop(sb)
                    idle.append(sb)
                    if settle(outcome, attempt):
                        queue.appendleft((task, attempt + 1, reasons + [outcome.reason]))
                    else:
                        done.append((task, outcome, attempt, reasons))
        finally:
            for sb in pool:
                sb.close()


# --- Dask ---------------------------------------------------------------------------------------

_free: list = []                 # this Dask worker process's idle sandboxes
_lock = threading.Lock()
_made = [0]


def _label() -> str:
    try:
        from distributed import get_worker
        return f"dask {get_worker().address}"
    except (ImportError, ValueError):
        return "dask"


def run_in_sandbox(task) -> Outcome:
    """The Dask task: run `task` in one of this worker process's sandboxes (one per busy thread)."""
    with _lock:
        sb = _free.pop() if _free else None
        if sb is None:
            _made[0] += 1
    if sb is None:
        sb = Sandbox(_label())
    try:
        return sb.run(task)
    except WorkerStartError as err:
        return Outcome("crashed", reason=str(err), worker=sb.label)
    finally:
        with _lock:
            _free.append(sb)


def _prepare_worker(dask_worker=None) -> str:
    """Run on each Dask worker (client.run passes it as `dask_worker`) before the tasks: start a warm
    sandbox per worker thread, in parallel as the local pool does, and say which modelcheck the worker has."""
    nthreads = getattr(getattr(dask_worker, "state", None), "nthreads", 1)
    label = f"dask {dask_worker.address}" if dask_worker is not None else "dask"
    with _lock:
        missing = max(0, nthreads - _made[0])
        _made[0] += missing
    fresh = [Sandbox(label) for _ in range(missing)]
    for sb in fresh:
        sb.spawn()
    import modelcheck               # the worker unpickles tasks with it; meanwhile the sandboxes start
    for sb in fresh:
        sb.ready()
    with _lock:
        _free.extend(fresh)
    return modelcheck.__version__


class DaskExecutor:
    def __init__(self, scheduler: str | None = None, local_workers: int | None = None, client=None):
        if sum(x is not None for x in (scheduler, local_workers, client)) != 1:
            raise ValueError("DaskExecutor takes exactly one of scheduler=, local_workers= or client=")
        if local_workers is not None and local_workers < 1:
            raise ValueError(f"--dask-local must be at least 1, got {local_workers}")
        self.scheduler = scheduler
        self.local_workers = local_workers
        self.client = client

    def describe(self) -> str:
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        if self.local_workers:
            return f"Dask LocalCluster, {self.local_workers} worker(s)"
        return f"Dask client {getattr(self.client, 'scheduler', None) and self.client.scheduler.address}"

    def _connect(self):
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorError("the Dask executor needs dask.distributed: pip install 'modelcheck[dask]'") from None
        if self.client is not None:
            return self.client, None, None
        if self.scheduler:
            try:
                client = Client(self.scheduler, timeout=10)
                return client, None, client
            except (OSError, TimeoutError) as err:
                raise ExecutorError(f"cannot reach the Dask scheduler at {self.scheduler}: {err}") from None
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            cluster = LocalCluster(n_workers=self.local_workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=":0", memory_limit=0)
            client = Client(cluster)
        return client, cluster, client

    def run(self, tasks: list, emit) -> None:
        if not tasks:
            return
        import uuid

        client, cluster, own = self._connect()
        from distributed import as_completed
        pending: dict = {}       # Dask key -> (future, task, attempt, crash reasons of earlier attempts)
        try:
            try:
                versions = client.run(_prepare_worker)
            except Exception as err:     # noqa: BLE001 -- whatever the workers raise, they cannot run tasks
                raise ExecutorError(f"the Dask workers cannot import modelcheck: {type(err).__name__}: {err}") \
                    from None
            import modelcheck
            other = sorted({v for v in versions.values() if v != modelcheck.__version__})
            if other:
                raise ExecutorError(f"the Dask workers run modelcheck {', '.join(other)}, this is "
                                    f"{modelcheck.__version__}: install the same version on the workers")
            run_id = uuid.uuid4().hex[:8]
            ac = as_completed()

            def submit(task, attempt, reasons):
                fut = client.submit(run_in_sandbox, task, key=f"modelcheck-{run_id}-{task.key[:16]}-{attempt}",
                                    pure=False)
                pending[fut.key] = (fut, task, attempt, reasons)
                ac.add(fut)

            for t in tasks:
                submit(t, 1, [])
            for fut in ac:
                _, task, attempt, reasons = pending.pop(fut.key)
                try:
                    outcome = fut.result()
                except Exception as err:     # noqa: BLE001 -- the worker running it died, or the scheduler lost it
                    outcome = Outcome("crashed", reason=f"the Dask worker running it was lost: "
                                                        f"{type(err).__name__}: {err}", worker="dask")
                fut.release()
                if settle(outcome, attempt):
                    submit(task, attempt + 1, reasons + [outcome.reason])
                else:
                    emit(task, outcome, attempt, reasons)
        finally:
            if pending:                  # interrupted: the cluster may be the caller's, so leave it no work
                client.cancel([fut for fut, *_ in pending.values()])
            if own is not None:
                own.close()
            if cluster is not None:
                cluster.close()


def make(executor=None, jobs: int | None = None):
    """An executor from the API's `executor=` argument: None or "local" (a process pool of `jobs`), a
    scheduler address "tcp://HOST:PORT", a dask.distributed Client, or a LocalExecutor/DaskExecutor."""
    if executor is None or executor == "local":
        return LocalExecutor(jobs)
    if isinstance(executor, (LocalExecutor, DaskExecutor)):
        return executor
    if isinstance(executor, str) and executor.startswith(("tcp://", "tls://", "ws://", "wss://", "inproc://")):
        return DaskExecutor(scheduler=executor)
    if type(executor).__name__ == "Client" and hasattr(executor, "submit"):
        return DaskExecutor(client=executor)
    raise ValueError(f"executor must be \"local\", a scheduler address (tcp://HOST:PORT), a LocalExecutor, a "
                     f"DaskExecutor or a dask.distributed Client, not {executor!r}")
