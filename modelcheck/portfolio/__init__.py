"""Batch checking of kernel portfolios: many kernels x constants x inputs x checks, locally or on Dask.

Stages (each module's docstring says what it assumes and guarantees):
  plan       a TOML/YAML plan file -> validated `Plan` (PlanError with file:line)
  tasks      Plan -> `Task`s, each with its key (kernel text, constants, inputs recipe, check, version)
  executors  where tasks run: a local process pool or dask.distributed; the retry rule
  sandbox    the task process a task runs in: time budget (kill), crash detection
  worker     inside the task process: memory budget (RLIMIT_AS), peak memory, the check itself
  journal    the JSONL results file (append + fsync, resumable) and each task's details
  outputs    summary table, merged SARIF, HTML index
  driver     `run_batch` (= `modelcheck.batch`) ties them together
  cli        `modelcheck batch PLAN`

This package is imported only by `modelcheck batch` and `modelcheck.batch(...)`; nothing here
is loaded by `import modelcheck`, and dask only when the Dask executor runs.
"""
