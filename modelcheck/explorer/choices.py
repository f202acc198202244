"""Data choice points: the answers of cluster launch control requests (Synccheck's outer loop).

A `clusterlaunchcontrol.try_cancel` that lands while a cluster is pending may answer "a cluster was cancelled" or
"none remain" on hardware; the answer decides the kernel's control flow (the persistent loop continues or
exits), so the fixed sync programs of one run cannot cover both.  NumSim exposes the choice (`Engine(...,
clc_answers=...)` forces the first choice points' answers and `stats["clc"]["choices"]` records every one);
this module decides which answer sequences to run: a depth-first enumeration of the binary tree of answers,
one run per leaf, each run replaying a forced prefix and taking the default answer ("cancel") after it.
Every leaf is run once: a run's choice points past its forced prefix are new branches.

The tree has at most 2^(pending clusters) leaves; `max_paths` bounds the runs, and a search that stops at the
bound says so (`truncated`), so the checker reports the answers it did not explore as `incomplete`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

DEFAULT_MAX_PATHS = 64


@dataclass
class ChoiceSearch:
    """The answer sequences run so far and what the search left."""

    paths: list = field(default_factory=list)     # (forced prefix, the run's full answer sequence) per run
    truncated: bool = False                       # some answer sequence was left unexplored at the bound
    stopped: tuple | None = None                  # the prefix whose run the callback stopped the search on
    max_paths: int = DEFAULT_MAX_PATHS

    @property
    def choice_points(self) -> int:
        """The most choice points one run met."""
        return max((len(full) for _, full in self.paths), default=0)


def explore(run: Callable[[tuple], tuple[list, bool]], *, first: list | None = None,
            max_paths: int = DEFAULT_MAX_PATHS) -> ChoiceSearch:
    """Run every answer sequence, depth first.  `run(prefix)` runs the kernel with those answers forced and
    returns (the run's full answer sequence, whether to stop: a failing run ends the search).  `first`: the
    answers of the default run, when the caller has already run it (prefix ())."""
    out = ChoiceSearch(max_paths=max_paths)
    stack: list[tuple] = []

    def branch(prefix: tuple, full: list) -> None:
        # the choice points past the forced prefix took the default; each is a branch the other way round,
        # the earliest pushed last: the next run deviates as early as it can (a request failing early)
        for k in range(len(full) - 1, len(prefix) - 1, -1):
            stack.append(tuple(full[:k]) + (not full[k],))

    if first is not None:
        out.paths.append(((), list(first)))
        branch((), list(first))
    else:
        stack.append(())
    while stack:
        if len(out.paths) >= max_paths:
            out.truncated = True
            break
        prefix = stack.pop()
        full, stop = run(prefix)
        out.paths.append((prefix, list(full)))
        if stop:
            out.stopped = prefix
            break
        branch(prefix, list(full))
    return out
