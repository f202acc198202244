"""NumSim: the concrete SIMT simulator (stage 2 of the pipeline).

Entry point: `run(func, inputs, outputs=None, *, observers=(), **limits)` -> `NumSimResult`
(`Engine(func, **limits).run(...)` is the same with the limits as options).  NumSim
emits sync events and access records to observers (`modelcheck.numsim.trace`) and
knows nothing of the checkers.  `run(..., schedule=Schedule(...))` follows a forced order of
steps instead of the default schedule (`modelcheck.numsim.schedule`).
"""
from . import budget, targets
from .engine import Engine, NumSimResult, run
from .errors import Diagnostic, EngineError, InputError, ResourceLimit, UnsupportedTIRxError
from .inputs import default_inputs
from .ops import unmodeled_operations
from .schedule import Schedule, Step
from .tensormap import TensorMap, TensorMapError
from .trace import AccessRecord, Halt, Observer, Site, SyncEvent, Trace

__all__ = ["budget", "targets", "run", "Engine", "NumSimResult", "Diagnostic", "EngineError", "InputError", "ResourceLimit",
           "UnsupportedTIRxError", "default_inputs", "unmodeled_operations", "AccessRecord", "Halt", "Observer", "Site", "SyncEvent",
           "Trace", "TensorMap", "TensorMapError", "Schedule", "Step"]
