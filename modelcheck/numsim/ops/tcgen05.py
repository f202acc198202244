"""tcgen05 / TMEM operations: simulated from issue #4 (until then every tcgen05 op
reports unsupported_operation, so a run that reaches one is incomplete, not clean)."""
from __future__ import annotations

HANDLERS: dict = {}
