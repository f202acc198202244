"""The pytest plugin (entry point `pytest11`): check kernels from a project's own test suite.

    def test_my_kernel(modelcheck):
        modelcheck.assert_clean("kernels/my_kernel.py", SEQ_LEN=256)
        modelcheck.assert_finding("kernels/my_bug.py", "data_race")

`assert_clean(kernel, inputs=None, **consts)` runs Synccheck and Racecheck (`modelcheck.check`) and fails with
the report's text unless the verdict is clean; `assert_finding(kernel, kind, ...)` fails unless a finding of
that kind is reported, and returns it.  `kernel` is a file path (constants apply) or an `ir.PrimFunc` / Kernel;
`inputs` a dict or a function of the constants.  The marker `@pytest.mark.modelcheck` tags such tests
(`pytest -m modelcheck` selects them); options: `--modelcheck-max-seconds S` (per check, default 60).
"""
from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("modelcheck")
    group.addoption("--modelcheck-max-seconds", type=float, default=60.0, metavar="S",
                    help="time budget of each modelcheck check (default 60)")


def pytest_configure(config):
    config.addinivalue_line("markers", "modelcheck: a test that model-checks a GPU kernel (modelcheck fixture)")


class Checker:
    """The `modelcheck` fixture: checks whose failures read like the command line's report."""

    def __init__(self, max_seconds: float = 60.0):
        self.max_seconds = max_seconds
        self.reports: list = []

    def check(self, kernel, inputs=None, **consts):
        """The merged Synccheck + Racecheck report (`modelcheck.CheckReport`) of `kernel` at `consts`."""
        import modelcheck
        if isinstance(kernel, (str, bytes)) or hasattr(kernel, "__fspath__"):
            kernel = modelcheck.load(kernel, **consts)
        elif consts:
            raise TypeError("constants apply to a kernel file; pass the path, or a kernel already built with them")
        func = modelcheck.as_func(kernel)
        if callable(inputs):
            inputs = inputs(dict(func.constant_values))
        if inputs is not None:
            from modelcheck import numsim
            inputs = numsim.default_inputs(func, inputs)
        report = modelcheck.check(func, inputs, max_seconds=self.max_seconds)
        self.reports.append(report)
        return report

    def assert_clean(self, kernel, inputs=None, **consts):
        report = self.check(kernel, inputs, **consts)
        if report.verdict != "clean":
            pytest.fail(f"{report.func.name} is not clean: {report.summary()}\n\n{report.format()}", pytrace=False)
        return report

    def assert_finding(self, kernel, kind: str, inputs=None, **consts):
        report = self.check(kernel, inputs, **consts)
        hits = [f for f in report.findings if f.kind == kind]
        if not hits:
            found = ", ".join(sorted({f.kind for f in report.findings})) or "none"
            pytest.fail(f"{report.func.name}: no {kind} finding (found: {found}); {report.summary()}\n\n"
                        f"{report.format()}", pytrace=False)
        return hits[0]


@pytest.fixture
def modelcheck(request):
    """A `Checker`: `modelcheck.assert_clean(kernel, **consts)`, `modelcheck.assert_finding(kernel, kind)`,
    `modelcheck.check(kernel)`."""
    return Checker(request.config.getoption("--modelcheck-max-seconds"))
