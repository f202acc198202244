"""The enumeration of CLC answer sequences (explorer/choices.py) on synthetic answer trees."""
from __future__ import annotations

import itertools

from modelcheck.explorer import choices


def _tree(depth: int):
    """A run meets `depth` choice points whatever it answers (defaults: True); records every full sequence."""
    seen = []

    def run(prefix):
        full = list(prefix) + [True] * (depth - len(prefix))
        seen.append(tuple(full))
        return full, False
    return run, seen


def test_every_leaf_runs_once():
    run, seen = _tree(3)
    out = choices.explore(run)
    assert sorted(seen) == sorted(itertools.product([False, True], repeat=3))
    assert len(out.paths) == 8 and not out.truncated and out.choice_points == 3


def test_a_failing_answer_ends_the_tree_early():
    """A 'none remain' answer ends the persistent loop: no choice point after it."""
    def run(prefix):
        full = []
        for k in range(3):
            take = prefix[k] if k < len(prefix) else True
            full.append(take)
            if not take:
                break
        return full, False
    out = choices.explore(run)
    assert sorted(tuple(f) for _, f in out.paths) == [(False,), (True, False), (True, True, False), (True, True, True)]


def test_the_first_run_can_be_given_and_the_first_alternative_fails_early():
    run, seen = _tree(2)
    out = choices.explore(run, first=[True, True])
    assert seen[0] == (False, True)          # the earliest deviation first
    assert len(out.paths) == 4 and len(seen) == 3


def test_a_stop_ends_the_search_with_its_prefix():
    def run(prefix):
        full = list(prefix) + [True] * (2 - len(prefix))
        return full, full == [True, False]
    out = choices.explore(run)
    assert out.stopped == (True, False) and not out.truncated


def test_the_bound_truncates_and_says_so():
    run, seen = _tree(4)
    out = choices.explore(run, max_paths=5)
    assert len(seen) == 5 and out.truncated
