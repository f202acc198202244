"""NumSim's exception families and diagnostics.

User errors (bad kernels or inputs): `UnsupportedTIRxError`, `InputError`.
Run outcomes raised inside the engine and turned into diagnostics: `EngineError`
(a finding such as oob or a protocol violation), `ResourceLimit` (a budget ran out:
incomplete, never a pass).  Internal errors are ordinary exceptions and crash loudly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ir import Span, TIRxError

from ..common.verdict import Verdict


class UnsupportedTIRxError(TIRxError):
    """The kernel uses an operation outside the modeled set (docs/semantics.md#modeled-operations)."""

    def __init__(self, name: str, span: Span | None, why: str = ""):
        self.name = name
        self.span = span
        self.why = why
        where = f"{span}: " if span else ""
        super().__init__(f"{where}unsupported operation {name}" + (f": {why}" if why else ""))


class InputError(TIRxError, ValueError):
    """Inputs do not fit the kernel's parameters."""

    def __init__(self, message: str, missing: tuple[str, ...] = ()):
        self.missing = missing
        super().__init__(message)


class EngineError(Exception):
    """A finding that stops the run (oob, deadlock, protocol violation, ...)."""

    def __init__(self, kind: str, message: str, span: Span | None = None, **details):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.span = span
        self.details = details


class ResourceLimit(Exception):
    def __init__(self, limit: str, message: str, **details):
        super().__init__(message)
        self.limit = limit
        self.message = message
        self.details = details


@dataclass(frozen=True)
class Diagnostic:
    """One outcome of a run: status is error | incomplete | review (given as a Verdict or its string)."""

    kind: str
    status: Verdict
    message: str
    span: Span | None = None
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "status", Verdict(self.status))

    def __str__(self) -> str:
        where = f" at {self.span}" if self.span else ""
        return f"[{self.status.upper()}] {self.kind}: {self.message}{where}"
