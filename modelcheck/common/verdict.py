"""Verdicts: the one type every checker, NumSim, the prover and batch report in, and the exit
codes the command line maps them to.

A leaf module (it imports nothing of modelcheck), so NumSim may use it too.  The members are
`str`-valued: `Verdict.CLEAN == "clean"`, and JSON, SARIF and text show the same strings they
always did.

- `Verdict`: the outcome of a check, worst first: error > incomplete > review > clean.  A
  finding's status is one of error, incomplete, review.
- `Proof`: a proof's outcome (proved, refuted, incomplete), with the `Verdict` it counts as.
"""
from __future__ import annotations

import enum
from collections.abc import Iterable


class Verdict(str, enum.Enum):
    CLEAN = "clean"              # everything was analysed and nothing was found
    REVIEW = "review"            # advisories only: something a person should look at, not an error
    INCOMPLETE = "incomplete"    # something was not analysed (a budget, an unmodeled operation, a missing input)
    ERROR = "error"              # at least one error was found

    __str__ = str.__str__        # "clean", not "Verdict.CLEAN", in f-strings and str()

    def __format__(self, spec: str) -> str:     # the value, not the member name, in f-strings
        return str.__format__(self, spec)

    @property
    def rank(self) -> int:
        """Badness: clean 0 < review 1 < incomplete 2 < error 3."""
        return _RANK[self]

    @classmethod
    def worst(cls, verdicts: Iterable[str]) -> Verdict:
        """The worst of `verdicts` (finding statuses or verdicts, as members or strings); clean if none."""
        out = cls.CLEAN
        for v in verdicts:
            v = cls(v)
            if _RANK[v] > _RANK[out]:
                out = v
        return out

    def exit_code(self, strict: bool = False) -> int:
        """The command line's exit status: 0 clean, 0 review (3 with --strict), 1 error, 2 incomplete."""
        if self is Verdict.REVIEW and strict:
            return EXIT_REVIEW_STRICT
        return _EXIT[self]


_RANK = {Verdict.CLEAN: 0, Verdict.REVIEW: 1, Verdict.INCOMPLETE: 2, Verdict.ERROR: 3}
_EXIT = {Verdict.CLEAN: 0, Verdict.REVIEW: 0, Verdict.ERROR: 1, Verdict.INCOMPLETE: 2}
EXIT_REVIEW_STRICT = 3

# the statuses a finding can have, most severe first (a finding is never "clean")
STATUSES = (Verdict.ERROR, Verdict.INCOMPLETE, Verdict.REVIEW)


def verdict_of(findings) -> Verdict:
    """The verdict of a list of findings (anything with a `.status`): the worst status, clean if none."""
    return Verdict.worst(f.status for f in findings)


class Proof(str, enum.Enum):
    PROVED = "proved"            # holds for every value in the symbolic ranges
    REFUTED = "refuted"          # fails at a size Synccheck confirms
    INCOMPLETE = "incomplete"    # neither shown: outside the fragment, a budget, an unconfirmed failure

    __str__ = str.__str__

    def __format__(self, spec: str) -> str:     # the value, not the member name, in f-strings
        return str.__format__(self, spec)

    @property
    def verdict(self) -> Verdict:
        """What the proof counts as in a check: proved is clean, refuted an error."""
        return _PROOF_VERDICT[self]


_PROOF_VERDICT = {Proof.PROVED: Verdict.CLEAN, Proof.REFUTED: Verdict.ERROR, Proof.INCOMPLETE: Verdict.INCOMPLETE}

__all__ = ["Verdict", "Proof", "STATUSES", "EXIT_REVIEW_STRICT", "verdict_of"]
