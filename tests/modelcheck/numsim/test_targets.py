"""Launch-limit targets (numsim/targets.py): a target whose limits are not all public is refused with why."""
from __future__ import annotations

import pytest

from ir.errors import UsageError
from modelcheck.numsim import targets


def test_known_targets_resolve():
    assert targets.target("sm_100a").max_shared_per_block == 227 * 1024
    assert targets.target(None).name == targets.DEFAULT_TARGET


@pytest.mark.parametrize("name", ["sm_107", "sm_107a"])
def test_a_target_without_public_residency_limits_is_refused_naming_why(name):
    assert name not in targets.TARGETS
    with pytest.raises(UsageError, match=r"unknown target 'sm_107a?' \(334,848 B of shared memory per block"):
        targets.target(name)


def test_an_unknown_target_lists_the_known_ones():
    with pytest.raises(UsageError, match="known targets: sm_80"):
        targets.target("sm_99z")
