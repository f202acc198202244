"""`modelcheck batch` on the local process pool: records, resuming, budgets, crashes, outputs."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

import modelcheck
from modelcheck import cli

from .helpers import KERNELS, RING, RING_BUG, calls, records, toml_plan, write_builders

SARIF_VALIDATOR = jsonschema.Draft4Validator(json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text()))


def _plan(tmp_path, sweeps: str, budget: str = "seconds = 60\nmemory_mb = 1024") -> "Path":
    write_builders(tmp_path)
    return toml_plan(tmp_path, f"[budget]\n{budget}\n\n{sweeps}")


SMALL = f'''
[[sweep]]
kernels = ["{RING}", "{RING_BUG}"]
checks = ["sync", "race"]
constants = {{ ROUNDS = [1, 2, 3] }}
inputs_builder = "builders.py:plain"
'''


def test_records_verdicts_resume_and_exit_code(tmp_path, capsys):
    plan = _plan(tmp_path, SMALL)
    assert cli.main(["batch", str(plan), "--jobs", "2", "--quiet"]) == 1      # ring_missing_guard deadlocks
    out = capsys.readouterr().out
    recs = records(tmp_path / "plan.results.jsonl")
    assert len(recs) == 12 and len({r["key"] for r in recs}) == 12
    by = {(r["kernel"].rsplit("/", 1)[-1], r["constants"]["ROUNDS"], r["check"]): r for r in recs}
    assert all(by[("ring_arith.py", n, c)]["verdict"] == "clean" for n in (1, 2, 3) for c in ("sync", "race"))
    assert by[("ring_missing_guard.py", 1, "sync")]["verdict"] == "clean"
    assert by[("ring_missing_guard.py", 2, "sync")]["verdict"] == "error"
    assert "deadlock" in {f["kind"] for f in by[("ring_missing_guard.py", 2, "sync")]["findings"]}
    for r in recs:
        assert r["attempts"] == 1 and r["worker"].startswith("local-") and r["tool_version"] == modelcheck.__version__
        assert r["seconds"] > 0 and r["peak_rss_mb"] > 10 and "wall_time_s" in r["stats"]
    # the summary: by kernel, with the first failing constants
    line = next(l for l in out.splitlines() if "ring_missing_guard.py" in l)
    assert "sync ROUNDS=2 (error: deadlock)" in line
    assert len(calls(tmp_path)) == 12
    # a rerun finds every task recorded: nothing runs, nothing is appended, the verdicts come back
    assert cli.main(["batch", str(plan), "--jobs", "2", "--quiet"]) == 1
    assert len(calls(tmp_path)) == 12 and len(records(tmp_path / "plan.results.jsonl")) == 12
    assert "0 task(s) run, 12 already recorded" in capsys.readouterr().out


def test_a_torn_last_record_is_cut_off_and_its_task_rerun(tmp_path):
    plan = _plan(tmp_path, SMALL)
    res = tmp_path / "plan.results.jsonl"
    first = modelcheck.batch(plan, jobs=2)
    lines = res.read_text().splitlines(keepends=True)
    last = json.loads(lines[-1])
    res.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])      # a crash in the middle of a write
    again = modelcheck.batch(plan, jobs=2)
    recs = records(res)
    assert len(recs) == 12 and len({r["key"] for r in recs}) == 12
    assert recs[-1]["key"] == last["key"] and again.ran == 1 and again.skipped == 11
    assert [r["verdict"] for r in again] == [r["verdict"] for r in first]


def test_changing_a_kernel_reruns_only_its_tasks(tmp_path):
    kernel = tmp_path / "ring.py"
    kernel.write_text(RING.read_text())
    plan = _plan(tmp_path, '''
[[sweep]]
kernels = ["ring.py", "%s"]
checks = ["sync"]
constants = { ROUNDS = [2, 3] }
inputs_builder = "builders.py:plain"
''' % RING_BUG)
    assert modelcheck.batch(plan, jobs=1).ran == 4
    kernel.write_text(RING.read_text() + "\n# edited\n")
    again = modelcheck.batch(plan, jobs=1)
    assert (again.ran, again.skipped) == (2, 2)


def test_a_crashing_task_is_retried_once_then_incomplete(tmp_path, capsys):
    plan = _plan(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = {{ ROUNDS = [2, 3] }}
inputs_builder = "builders.py:plain"

[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = {{ ROUNDS = 4 }}
inputs_builder = "builders.py:crash"
''')
    assert cli.main(["batch", str(plan), "--jobs", "2", "--quiet"]) == 2
    recs = records(tmp_path / "plan.results.jsonl")
    assert len(recs) == 3 and len({r["key"] for r in recs}) == 3
    crashed = next(r for r in recs if r["inputs"]["builder"] == "builders.py:crash")
    assert crashed["verdict"] == "incomplete" and crashed["attempts"] == 2
    assert crashed["reason"].startswith("the task crashed on each of 2 attempts: the task process exited with code 3")
    assert len(crashed["retries"]) == 1 and "exited with code 3" in crashed["retries"][0]
    assert [c.split()[0] for c in calls(tmp_path)].count("crash") == 2          # run twice, never a third time
    assert all(r["verdict"] == "clean" and r["attempts"] == 1 for r in recs if r is not crashed)
    # recorded, so a rerun does not try it again; --rerun-incomplete does
    assert cli.main(["batch", str(plan), "--quiet"]) == 2
    assert [c.split()[0] for c in calls(tmp_path)].count("crash") == 2
    assert cli.main(["batch", str(plan), "--quiet", "--rerun-incomplete"]) == 2
    assert [c.split()[0] for c in calls(tmp_path)].count("crash") == 4


def test_a_failing_builder_is_incomplete_without_a_retry(tmp_path):
    plan = _plan(tmp_path, f'''
[[sweep]]
kernels = ["{RING_BUG}"]
checks = ["race", "prove"]
inputs_builder = "builders.py:raises"
prove = {{ symbolic = {{ ROUNDS = "1.." }} }}
''')
    race, proof = modelcheck.batch(plan, jobs=1)
    for rec in (race, proof):          # the prover must not take the builder's failure for "no error here"
        assert rec["verdict"] == "incomplete" and rec["attempts"] == 1
        assert rec["reason"] == "inputs_builder builders.py:raises failed: RuntimeError: the builder failed on purpose"
    assert "RuntimeError: the builder failed on purpose" in res_details(plan, race)["text"]


def test_time_budget_kills_the_task(tmp_path):
    plan = _plan(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = {{ ROUNDS = [2, 3] }}
inputs_builder = "builders.py:slow"
budget = {{ seconds = 0.5 }}

[[sweep]]
kernels = ["{RING}"]
checks = ["race"]
inputs_builder = "builders.py:plain"
''')
    t0 = time.monotonic()
    res = modelcheck.batch(plan, jobs=2)
    assert time.monotonic() - t0 < 100                      # the builders would sleep 120 s each
    slow = [r for r in res if r["inputs"]["builder"] == "builders.py:slow"]
    assert len(slow) == 2
    for r in slow:
        assert r["verdict"] == "incomplete" and r["attempts"] == 1 and r["checker_verdict"] is None
        assert r["reason"].startswith("time budget exceeded: killed after 1.") and 1.5 <= r["seconds"] < 30
    assert [r["verdict"] for r in res if r not in slow] == ["clean"]


def test_memory_budget_stops_the_task_and_the_worker_goes_on(tmp_path):
    plan = _plan(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
inputs_builder = "builders.py:hog"
budget = {{ memory_mb = 256 }}

[[sweep]]
kernels = ["{RING}"]
checks = ["sync", "race"]
constants = {{ ROUNDS = [2, 3] }}
inputs_builder = "builders.py:plain"
''')
    res = modelcheck.batch(plan, jobs=1)
    hog = res[0]
    assert hog["verdict"] == "incomplete" and hog["attempts"] == 1
    assert hog["reason"].startswith("memory budget exceeded: an allocation failed at the address-space limit of "
                                    "768 MB above the process's size (budget.memory_mb = 256")
    assert hog["peak_rss_mb"] < 1024
    rest = list(res)[1:]
    assert [r["verdict"] for r in rest] == ["clean"] * 4
    assert {r["worker"] for r in res} == {"local-1"}                   # the same process, not a replacement
    pids = {c.split()[-2] for c in calls(tmp_path)}
    assert len(pids) == 1


def test_the_checkers_own_memory_budget_comes_first(tmp_path):
    """Three 400 MB buffers on a 256 MB budget: NumSim refuses to allocate them (its own accounting) before
    the address-space limit is reached."""
    plan = _plan(tmp_path, f'''
[[sweep]]
kernels = ["{KERNELS / 'vector_add.py'}"]
checks = ["race"]
constants = {{ N = 100_000_000 }}
budget = {{ memory_mb = 256 }}
''')
    (rec,) = modelcheck.batch(plan, jobs=1)
    assert rec["verdict"] == "incomplete" and rec["attempts"] == 1
    assert rec["reason"].startswith("budget: ") and "memory budget of 256 MB" in rec["reason"]
    assert rec["peak_rss_mb"] < 400


def test_a_kernel_that_does_not_parse_is_incomplete(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(RING.read_text().replace("def ring_arith(", "def ring_arith(((", 1))
    plan = _plan(tmp_path, '''
[[sweep]]
kernels = ["broken.py"]
checks = ["sync"]
''')
    (rec,) = modelcheck.batch(plan, jobs=1)
    assert rec["verdict"] == "incomplete" and rec["reason"].startswith("parse error: ")
    assert "broken.py:" in res_details(plan, rec)["text"]


def res_details(plan, rec) -> dict:
    return json.loads((plan.parent / "plan.results.jsonl.details" / f"{rec['key']}.json").read_text())


def test_outputs_sarif_html_and_list(tmp_path, capsys):
    plan = _plan(tmp_path, SMALL + f'''
[[sweep]]
kernels = ["{RING_BUG}"]
checks = ["prove"]
prove = {{ symbolic = {{ ROUNDS = "1.." }} }}
''')
    assert cli.main(["batch", str(plan), "--jobs", "2", "--quiet", "--out", str(tmp_path / "out")]) == 1
    capsys.readouterr()
    recs = {r["key"]: r for r in records(tmp_path / "plan.results.jsonl")}
    failing = [r for r in recs.values() if r["verdict"] != "clean"]
    proof = next(r for r in recs.values() if r["check"] == "prove")
    assert proof["verdict"] == "error" and proof["checker_verdict"] == "refuted"
    assert proof["counterexample"]["sizes"] == {"ROUNDS": 2}
    # SARIF: one run per checker, each finding once per point, tagged with its task
    sarif = json.loads((tmp_path / "out" / "findings.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert [r["properties"]["checker"] for r in sarif["runs"]] == ["synccheck", "racecheck", "prove"]
    assert [r["automationDetails"]["id"] for r in sarif["runs"]] == [
        "modelcheck/batch-synccheck/", "modelcheck/batch-racecheck/", "modelcheck/batch-prove/"]
    errors = list(SARIF_VALIDATOR.iter_errors(sarif))
    assert not errors, errors[0].message
    results = [res for run in sarif["runs"] for res in run["results"]]
    assert {res["properties"]["task"] for res in results} == {r["key"] for r in failing}
    assert sum(len(r["findings"]) for r in failing) == len(results)
    for run in sarif["runs"]:
        assert {res["ruleId"] for res in run["results"]} <= {rule["id"] for rule in run["tool"]["driver"]["rules"]}
        assert len({rule["id"] for rule in run["tool"]["driver"]["rules"]}) == len(run["tool"]["driver"]["rules"])
    prove_run = sarif["runs"][2]
    assert prove_run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "ring_missing_guard.py")
    # HTML: self-contained, every point listed, each failing point linked to its section with the text report
    page = (tmp_path / "out" / "index.html").read_text()
    assert "<script" not in page and "<link" not in page and "src=" not in page and "http" not in page
    assert page.count("<tr class=\"v-") == len(recs)
    for r in failing:
        anchor = f"t-{r['key'][:16]}"
        assert f'href="#{anchor}"' in page and f'<section id="{anchor}">' in page
    assert "prove refuted - ring_missing_guard" in page
    assert (tmp_path / "out" / "summary.txt").read_text().startswith("modelcheck batch: 13 task(s)")
    # --list: the tasks and what is recorded, nothing run
    assert cli.main(["batch", str(plan), "--list"]) == 0
    listing = capsys.readouterr().out
    assert listing.rstrip().endswith("13 task(s), 13 recorded")


def test_api_records_and_dataframe(tmp_path):
    plan = {"sweep": [{"kernels": [str(RING_BUG)], "checks": ["sync"], "constants": {"ROUNDS": [1, 2]}}]}
    res = modelcheck.batch(plan, jobs=1)
    assert res.results_path is None                       # a dict plan without `results` keeps records in memory
    assert [r["verdict"] for r in res] == ["clean", "error"] and res.exit_code == 1 and res.verdict == "error"
    assert "ring_missing_guard" in res.details(res[1]["key"])["text"]
    pd = pytest.importorskip("pandas")
    df = res.to_dataframe()
    assert isinstance(df, pd.DataFrame) and list(df["const.ROUNDS"]) == [1, 2]
    assert list(df["verdict"]) == ["clean", "error"] and "deadlock" in df["findings"][1]


def test_results_file_in_use_is_refused(tmp_path, capsys):
    from modelcheck.portfolio.journal import Journal
    plan = _plan(tmp_path, SMALL)
    with Journal(tmp_path / "plan.results.jsonl"):
        assert cli.main(["batch", str(plan), "--quiet"]) == 64
    assert "is in use by another batch run" in capsys.readouterr().err


def test_import_and_a_local_batch_need_no_dask():
    code = f"""
import sys
import modelcheck
assert "modelcheck.portfolio" not in sys.modules, "import modelcheck loads the batch machinery"
sys.modules["dask"] = sys.modules["distributed"] = None      # any import of them fails from here on
res = modelcheck.batch({{"sweep": [{{"kernels": [{str(RING)!r}], "checks": ["sync"]}}]}}, jobs=1)
assert [r["verdict"] for r in res] == ["clean"], list(res)
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_dask_executor_without_dask_says_how_to_install(tmp_path, capsys, monkeypatch):
    plan = _plan(tmp_path, SMALL)
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert cli.main(["batch", str(plan), "--dask-local", "2", "--quiet"]) == 64
    assert "the Dask executor needs dask.distributed: pip install 'modelcheck[dask]'" in capsys.readouterr().err


def test_progress_bar_shows_count_and_eta():
    from modelcheck.portfolio.driver import Progress
    stream = io.StringIO()
    bar = Progress(3, True, stream)
    for verdict in ("clean", "error", "clean"):
        bar.advance(verdict)
        time.sleep(0.21)
    bar.close()
    text = stream.getvalue()
    assert "\r[" in text and "3/3 100%" in text and "1 failing" in text and "ETA 0m00s" in text
    assert text.endswith("\n")
    quiet = io.StringIO()
    off = Progress(3, False, quiet)
    off.advance("clean")
    off.close()
    assert quiet.getvalue() == ""
