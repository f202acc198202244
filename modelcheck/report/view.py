"""The report objects of proofs and replays: a data-only result (from prover/ or replay/) with the
rendering of report/ on top; every attribute the report does not define is the result's."""
from __future__ import annotations


class ResultView:
    checker = ""

    def __init__(self, result):
        self.result = result

    def __getattr__(self, name):
        if name == "result":                 # not yet set (while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.result, name)
