"""NumSim: the concrete SIMT simulator (stage 2 of the pipeline).

Entry point: `run(func, inputs, outputs=None, *, observers=(), **limits)` -> `NumSimResult`
(`Engine(func, **limits).run(...)` is the same with the limits as options).  NumSim
emits sync events and access records to observers (`modelcheck.numsim.trace`) and
knows nothing of the checkers.  `run(..., schedule=Schedule(...))` follows a forced order of
steps instead of the default schedule (`modelcheck.numsim.schedule`).

The budgets, targets and error types load with the package; the simulator (and numpy with
it) on first use of a name that needs it, so a command that never simulates starts fast.
"""
from importlib import import_module as _import

from . import budget, targets
from .errors import Diagnostic, EngineError, InputError, ResourceLimit, UnsupportedTIRxError

_LAZY = {"Engine": "engine", "NumSimResult": "engine", "run": "engine", "default_inputs": "inputs",
         "unmodeled_operations": "ops", "Schedule": "schedule", "Step": "schedule", "TensorMap": "tensormap",
         "TensorMapError": "tensormap", "with_maps": "tensormap", "AccessRecord": "trace", "Halt": "trace",
         "Observer": "trace", "Site": "trace", "CHECK_COHORT": "cohort",
         "SyncEvent": "trace", "Trace": "trace"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = ["budget", "targets", "run", "Engine", "NumSimResult", "Diagnostic", "EngineError", "InputError",
           "ResourceLimit", "UnsupportedTIRxError", "default_inputs", "unmodeled_operations", "AccessRecord", "Halt",
           "Observer", "Site", "SyncEvent", "Trace", "CHECK_COHORT", "TensorMap", "TensorMapError", "with_maps",
           "Schedule", "Step"]
