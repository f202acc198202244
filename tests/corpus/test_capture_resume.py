"""The capture resumes the launches a test had prepared when it failed on a missing reference
(benchmarks/corpus/capture.py `_resume_launches`)."""
from __future__ import annotations

import sys
import types

from benchmarks.corpus.capture import KernelRecorder, _pending_launches, _resume_launches


def _failing_test(calls: list):
    """Like a library test: compile, bind the launch, then build a reference that is not installed."""
    executable = KernelRecorder("kernel", lambda func, args: calls.append(args))
    data = {"a": [1, 2], "n": 3}

    def launch(*, only_first=False):
        executable(data["a"], data["n"])

    def reference(x):   # needs an argument: never called by the resume
        executable(x)

    raise RuntimeError("reference checkout is unavailable")


def _traceback():
    calls: list = []
    try:
        _failing_test(calls)
    except RuntimeError:
        return sys.exc_info()[2], calls
    raise AssertionError("the test did not fail")


def test_pending_launches_are_argument_free_closures_over_a_compiled_kernel():
    tb, _ = _traceback()
    assert [name for name, _ in _pending_launches(tb)] == ["_failing_test.launch"]


def test_resume_makes_the_prepared_launch_with_the_bound_arguments():
    tb, calls = _traceback()
    snap = types.SimpleNamespace(functions={}, funcs={"kernel": ""})
    assert _resume_launches(tb, snap) == ["_failing_test.launch: returned"]
    assert calls == [([1, 2], 3)]


def test_resume_stops_once_every_function_is_captured():
    tb, calls = _traceback()
    snap = types.SimpleNamespace(functions={"kernel": {}}, funcs={"kernel": ""})
    assert _resume_launches(tb, snap) == [] and calls == []


def test_an_unmatched_kernel_names_the_closest_printed_one_and_the_first_difference():
    from benchmarks.corpus.capture import _closest
    called = types.SimpleNamespace(script=lambda: "a\nb\nc\nd")
    printed = {"main": "a\nb\nX\nd", "other": "z"}
    assert _closest(printed, called) == {"function": "main", "first_differing_line": 3, "called_lines": 4,
                                         "printed_lines": 4}


def test_a_failed_comparison_is_recorded_not_raised():
    from benchmarks.corpus import cpu_env

    def assert_close(actual, expected, **kwargs):
        raise AssertionError("Tensor-likes are not equal!\nMismatched elements: 3 / 4")

    before = len(cpu_env.IGNORED)
    cpu_env._ignored_comparison(assert_close)(1, 2, rtol=0)
    assert cpu_env.IGNORED[before:] == ["AssertionError: Tensor-likes are not equal!"]


def test_a_kernel_differing_only_in_its_function_attributes_matches():
    from benchmarks.corpus.capture import _match
    printed = {"main": 'def f():\n    T.func_attr({"tirx.cuda_arch": "sm_100a"})\n    body()'}
    called = types.SimpleNamespace(script=lambda: 'def f():\n    T.func_attr({"tirx.cuda_arch": "sm_100"})\n    body()')
    other = types.SimpleNamespace(script=lambda: 'def f():\n    T.func_attr({"tirx.cuda_arch": "sm_100a"})\n    other()')
    assert _match(printed, called) == "main" and _match(printed, other) is None
