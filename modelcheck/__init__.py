"""modelcheck: a static-plus-symbolic model checker for TIRx GPU kernels.

Pipeline: text -> IR (`ir`) -> NumSim trace (`modelcheck.numsim`) -> checkers -> report.
See ARCHITECTURE.md for the stages and their entry points.
"""
from __future__ import annotations

from ir import ParseError, PrimFunc

from .kernel import Kernel, as_func, load, parse

__version__ = "0.1.0"

__all__ = ["Kernel", "ParseError", "PrimFunc", "as_func", "load", "parse", "__version__"]
