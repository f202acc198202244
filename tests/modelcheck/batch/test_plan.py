"""Plan files: the format, its validation (one line with file:line, no traceback) and task expansion."""
from __future__ import annotations

import sys

import pytest

from modelcheck.portfolio import plan as P
from modelcheck.portfolio.tasks import expand
from modelcheck.portfolio.cli import EXIT_USAGE
from modelcheck import cli

from .helpers import RING, RING_BUG, toml_plan, write_builders


def _expand(tmp_path, body, name="plan.toml"):
    return expand(P.load(toml_plan(tmp_path, body, name)))


def test_grid_is_a_product_and_a_list_of_tables_is_a_union(tmp_path):
    tasks = _expand(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = {{ ROUNDS = [1, 2, 3], STAGES = [2, 4] }}

[[sweep]]
kernels = ["{RING}"]
checks = ["race"]
constants = [{{ ROUNDS = 5, STAGES = 2 }}, {{ ROUNDS = [6, 7], STAGES = 4 }}]
''')
    sync = [t.constants for t in tasks if t.check == "sync"]
    race = [t.constants for t in tasks if t.check == "race"]
    assert sync == [{"ROUNDS": r, "STAGES": s} for r in (1, 2, 3) for s in (2, 4)]
    assert race == [{"ROUNDS": 5, "STAGES": 2}, {"ROUNDS": 6, "STAGES": 4}, {"ROUNDS": 7, "STAGES": 4}]
    assert [t.index for t in tasks] == list(range(len(tasks)))


def test_globs_are_relative_to_the_plan_and_checks_multiply(tmp_path):
    kdir = tmp_path / "k"
    kdir.mkdir()
    for src in (RING, RING_BUG):
        (kdir / src.name).write_text(src.read_text())
    (kdir / "notes.txt").write_text("not a kernel")
    tasks = _expand(tmp_path, '''
[[sweep]]
kernels = ["k/ring_*.py", "k/ring_arith.py"]
checks = ["sync", "race"]
constants = { ROUNDS = [2, 3] }
''')
    assert len(tasks) == 2 * 2 * 2          # kernels (the repeat counted once) x points x checks
    assert {t.kernel_text for t in tasks} == {RING.read_text(), RING_BUG.read_text()}
    assert len({t.key for t in tasks}) == len(tasks)


def test_seeds_reach_the_builder_and_bare_random_inputs(tmp_path):
    write_builders(tmp_path)
    tasks = _expand(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
inputs_builder = "builders.py:plain"
inputs = {{ out = "random" }}
seeds = [0, 7]
''')
    assert [(t.seed, t.inputs) for t in tasks] == [(0, {"out": "random:0"}), (7, {"out": "random:7"})]
    assert tasks[0].builder == "builders.py:plain" and tasks[0].builder_function == "plain"


def test_keys_follow_kernel_text_builder_source_constants_and_check(tmp_path):
    write_builders(tmp_path)
    kernel = tmp_path / "ring.py"
    kernel.write_text(RING.read_text())
    body = '''
[[sweep]]
kernels = ["ring.py"]
checks = ["sync", "race"]
constants = { ROUNDS = [2, 3] }
inputs_builder = "builders.py:plain"
'''
    first = [t.key for t in _expand(tmp_path, body)]
    assert first == [t.key for t in _expand(tmp_path, body)]          # stable
    assert len(set(first)) == 4
    kernel.write_text(RING.read_text() + "\n# an edit\n")
    assert not set(first) & {t.key for t in _expand(tmp_path, body)}
    kernel.write_text(RING.read_text())
    (tmp_path / "builders.py").write_text((tmp_path / "builders.py").read_text() + "\n# edited\n")
    assert not set(first) & {t.key for t in _expand(tmp_path, body)}


def test_the_same_point_twice_is_one_task(tmp_path):
    tasks = _expand(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = [{{ ROUNDS = 2 }}, {{ ROUNDS = [2, 3] }}]
[[sweep]]
kernels = ["{RING}"]
checks = ["sync"]
constants = {{ ROUNDS = 3 }}
''')
    assert [t.constants for t in tasks] == [{"ROUNDS": 2}, {"ROUNDS": 3}]


def test_prove_tasks_leave_their_symbolic_constants_out_of_the_point(tmp_path):
    tasks = _expand(tmp_path, f'''
[[sweep]]
kernels = ["{RING}"]
checks = ["prove"]
constants = {{ ROUNDS = [2, 3], STAGES = [2] }}
prove = {{ symbolic = {{ ROUNDS = "1.." }} }}
''')
    assert len(tasks) == 1
    assert tasks[0].constants == {"STAGES": 2} and tasks[0].symbolic == {"ROUNDS": (1, None)}
    assert P._range("2..64", "", "") == (2, 64) and P._range([3], "", "") == (3, None)


@pytest.mark.parametrize("body,line,message", [
    ('[[sweep]]\nkernels = ["{ring}"]\nchecks = ["sync"]\nconstant = {{ ROUNDS = 2 }}\n', 4, "unknown key 'constant'"),
    ('[[sweep]]\nkernels = ["{ring}"]\n\n[[sweep]]\nkernels = ["{ring}"]\nchecks = ["sync", "lint"]\n', 6,
     "unknown check 'lint'"),
    ('[[sweep]]\nkernels = ["nothing_*.py"]\n', 2, "matches no file"),
    ('[[sweep]]\nkernels = ["{ring}"]\nconstants = {{ ROUNDS = "two" }}\n', 3, "must be a number"),
    ('[[sweep]]\nkernels = ["{ring}"]\nconstants = {{ ROUNDZ = 2 }}\n', 3, "ROUNDZ: not a module constant"),
    ('[[sweep]]\nkernels = ["{ring}"]\nchecks = ["prove"]\n', 3, "needs prove.symbolic"),
    ('[[sweep]]\nkernels = ["{ring}"]\nchecks = ["prove"]\nprove = {{ symbolic = {{ N = "1.." }} }}\n', 4,
     "prove.symbolic N: not a module constant"),
    ('[[sweep]]\nkernels = ["{ring}"]\nchecks = ["prove"]\nprove = {{ symbolic = {{ ROUNDS = "5..2" }} }}\n', 4,
     "empty or non-positive range"),
    ('[budget]\nseconds = -1\n[[sweep]]\nkernels = ["{ring}"]\n', 2, "budget.seconds must be a positive number"),
    ('[[sweep]]\nkernels = ["{ring}"]\ninputs = {{ out = "twos" }}\n', 3, "expected zeros, ones, random"),
    ('[[sweep]]\nkernels = ["{ring}"]\nseeds = [1, 2]\n', 3, "nothing uses them"),
    ('[[sweep]]\nkernels = ["{ring}"]\ninputs_builder = "builders.py:absent"\n', 3, "has no function 'absent'"),
    ('[[sweep]]\nkernels = ["{ring}"]\ninputs_builder = "builders.py:crash"\nseeds = [1]\n', 3,
     "takes no seed parameter"),
    ('[[sweep]]\nkernels = ["{ring}"\n', 2, "invalid TOML"),
    ('results = "r.jsonl"\n', None, "has no sweep"),
])
def test_plan_errors_name_the_file_and_line(tmp_path, body, line, message):
    write_builders(tmp_path)
    path = toml_plan(tmp_path, body.format(ring=RING))
    with pytest.raises(P.PlanError) as err:
        expand(P.load(path))
    text = str(err.value)
    assert message in text
    assert "\n" not in text
    prefix = f"{path}:{line}:" if line else f"{path}:"
    assert text.startswith(prefix), text


def test_yaml_plans_locate_errors_too(tmp_path):
    pytest.importorskip("yaml")
    good = tmp_path / "plan.yaml"
    good.write_text(f"sweep:\n  - kernels: [{RING}]\n    checks: [sync]\n    constants: {{ROUNDS: [2, 3]}}\n")
    assert [t.constants for t in expand(P.load(good))] == [{"ROUNDS": 2}, {"ROUNDS": 3}]
    bad = tmp_path / "bad.yml"
    bad.write_text(f"sweep:\n  - kernels: [{RING}]\n    checks: [sync]\n    constants: {{ROUNDS: [x]}}\n")
    with pytest.raises(P.PlanError, match=rf"^{bad}:4: sweep 1: constant ROUNDS must be a number"):
        P.load(bad)
    broken = tmp_path / "broken.yaml"
    broken.write_text("sweep:\n  - kernels: [a\n  b: c\n")
    with pytest.raises(P.PlanError, match=rf"^{broken}:\d+:\d+: invalid YAML"):
        P.load(broken)


def test_yaml_without_pyyaml_says_to_use_toml(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)
    path = tmp_path / "plan.yaml"
    path.write_text("sweep: []\n")
    with pytest.raises(P.PlanError, match="YAML plans need PyYAML .pip install pyyaml.; or write the plan as TOML"):
        P.load(path)


def test_cli_plan_error_is_one_line_and_exit_64(tmp_path, capsys):
    path = toml_plan(tmp_path, f'[[sweep]]\nkernels = ["{RING}"]\nconstants = {{ ROUNDZ = 2 }}\n')
    assert cli.main(["batch", str(path), "--quiet"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:3: constant ROUNDZ") and err.count("\n") == 1 and "Traceback" not in err
    assert cli.main(["batch", str(tmp_path / "absent.toml")]) == EXIT_USAGE
    assert "cannot read the plan" in capsys.readouterr().err
    other = tmp_path / "plan.json"
    other.write_text("{}")
    assert cli.main(["batch", str(other)]) == EXIT_USAGE
    assert "a plan is a .toml file" in capsys.readouterr().err


def test_default_budget_is_the_checkers_own_default():
    """A batch with no budget judges each point as `modelcheck check` does."""
    from modelcheck.numsim import budget
    assert (P.Budget().seconds, P.Budget().memory_mb) == (budget.DEFAULT_MAX_SECONDS, budget.DEFAULT_MAX_MEMORY_MB)
    assert P.Budget(seconds=0.5).kill_after == 1.5 and P.Budget(seconds=600).kill_after == 630
    assert P.Budget(memory_mb=256).address_space_mb == 768 and P.Budget(memory_mb=0).address_space_mb == 0
