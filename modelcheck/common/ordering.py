"""Facts of the PTX memory and async model that Racecheck judges by and the happens-before graph draws
(so the graph orders exactly what Racecheck orders), and that the exit check of async work uses."""
from __future__ import annotations

SCOPE_LEVEL = {"cta": 1, "cluster": 2, "gpu": 3, "sys": 4}
# load orders that acquire through memory (a relaxed or volatile read acquires with a later fence or as a
# morally strong flag read), and store orders that release
ACQUIRING_ORDERS = ("acquire", "acq_rel", "relaxed", "volatile")
RELEASING_ORDERS = ("release", "acq_rel", "relaxed", "volatile")
# async op kind -> the async-group family that tracks its completion (commit_group / wait_group)
GROUP_FAMILY = {"bulk.s2g": "bulk", "tma.s2g": "bulk", "cp.async": "cp.async"}
# PTX §9.7.16.6.2: an operation of the key kind runs after the thread's earlier operations of these kinds
PIPELINED_AFTER = {"tcgen05.mma": ("tcgen05.mma", "tcgen05.cp", "tcgen05.shift"), "tcgen05.cp": ("tcgen05.shift",),
                   "tcgen05.shift": ("tcgen05.mma",)}


def strength(rec) -> int:
    """0 for weak/plain accesses, else the scope level of a strong (relaxed and stronger) access.  An async op's
    accesses are weak, except its `rmw` records: cp.reduce.async.bulk's element reductions are individually
    .relaxed.gpu (PTX ISA 9.7.9.25.5.3)."""
    if rec.order == "weak" or (rec.actor >= 0 and rec.kind != "rmw"):
        return 0
    if rec.order == "volatile":
        return SCOPE_LEVEL["sys"]
    return SCOPE_LEVEL.get(rec.scope, 3)
