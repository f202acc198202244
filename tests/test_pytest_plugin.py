"""The pytest plugin, run in a throwaway project with pytester: the fixture, both helpers (their failure messages
are the report), the marker and the option, loaded through the `pytest11` entry point."""
from __future__ import annotations

from importlib.metadata import entry_points

from tests.manifest import KERNELS

BUGGY = KERNELS / "producer_overtaking.py"
FIXED = KERNELS / "producer_overtaking_fixed.py"


def test_the_entry_point_names_the_plugin():
    eps = [ep for ep in entry_points(group="pytest11") if ep.name == "modelcheck"]
    assert [ep.value for ep in eps] == ["modelcheck.pytest_plugin"]


def test_plugin_in_a_user_suite(pytester):
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.modelcheck
        def test_fixed_is_clean(modelcheck):
            modelcheck.assert_clean({str(FIXED)!r}, ROUNDS=3)

        def test_buggy_has_the_finding(modelcheck):
            f = modelcheck.assert_finding({str(BUGGY)!r}, "mbarrier_arrive_before_consumption")
            assert f.status == "error"

        def test_buggy_is_not_clean(modelcheck):
            modelcheck.assert_clean({str(BUGGY)!r})

        def test_fixed_has_no_race(modelcheck):
            modelcheck.assert_finding({str(FIXED)!r}, "data_race")
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    # the failure messages are the reports
    assert "producer_overtaking is not clean: check ERROR (1 findings)" in out
    assert "1. [ERROR] mbarrier_arrive_before_consumption" in out and "covered:" in out
    assert "producer_overtaking_fixed: no data_race finding (found: none)" in out
    assert "Traceback" not in out


def test_marker_selects_and_option_is_known(pytester):
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.modelcheck
        def test_a(modelcheck):
            assert modelcheck.max_seconds == 5.0
            modelcheck.assert_clean({str(FIXED)!r})

        def test_b():
            pass
    """)
    result = pytester.runpytest("-m", "modelcheck", "--modelcheck-max-seconds", "5", "--strict-markers")
    result.assert_outcomes(passed=1, deselected=1)
