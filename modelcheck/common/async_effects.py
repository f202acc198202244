"""Async work still outstanding when its thread exits (checker-semantics §5.5: `effect_commit_unobserved`).

A bulk store (`cp.async.bulk` / tensor shared→global) and a classic `cp.async` are tracked
only through their thread's async groups: the thread learns that the copy is done (or,
for a bulk store, that its source was read) from a `wait_group` that covers the copy's
group.  A copy no such wait covers before the thread exits may still be reading shared
memory that the exiting CTA gives up, or still landing — neither checker can say what
its effect was, so the run is `incomplete`, not `clean`.  Which operations a wait covers
does not depend on the schedule: it is the thread's own commit/wait order.  Classic
`cp.async` work handed to an mbarrier (`cp.async.mbarrier.arrive`) is tracked by that
barrier instead and is not counted here.  A `wgmma.mma_async` is tracked the same way through its warp's
`wgmma.commit_group` / `wgmma.wait_group` (keyed by the warp's lane 0, the operation's witness lane).
"""
from __future__ import annotations

from ..numsim import Observer
from . import findings as F
from .ordering import GROUP_FAMILY

# async op kinds whose group is their warp's (not a lane's): wgmma.commit_group / wait_group
_OWN_GROUPS = {"wgmma.mma_async": "wgmma"}


class UnobservedEffects(Observer):
    wants_accesses = False

    def __init__(self, checker: str):
        self.checker = checker
        self.sites = ()
        # (warp, family, lane) -> ops not yet in a group / committed groups not yet covered by a wait
        self.uncommitted: dict = {}
        self.committed: dict = {}
        self.issue_event: dict = {}      # op id -> its async.issue event

    def on_start(self, run):
        self.sites = run.sites

    def on_sync(self, ev):
        kind = ev.kind
        if kind == "async.issue":
            fam = GROUP_FAMILY.get(ev.details.get("kind")) or _OWN_GROUPS.get(ev.details.get("kind"))
            if fam is not None:
                op = ev.details["op"]
                self.issue_event[op] = ev
                self.uncommitted.setdefault((ev.warp, fam, ev.details.get("lane", 0)), []).append(op)
            elif ev.details.get("kind") == "cp.async.mbarrier.arrive":
                # the barrier tracks every earlier cp.async of the thread from here on
                self._forget(self.uncommitted.pop((ev.warp, "cp.async", ev.details.get("lane", 0)), None))
            return
        family, _, what = kind.rpartition(".")
        if family not in ("bulk", "cp.async", "wgmma"):
            return
        if what == "commit_group":
            for lane in ev.lane_list():
                ops = self.uncommitted.pop((ev.warp, family, lane), [])
                self.committed.setdefault((ev.warp, family, lane), []).append(ops)
        elif what == "wait_group":
            for lane in ev.lane_list():
                key = (ev.warp, family, lane)
                if self.sites[ev.site].op == "cp.async.wait_all":     # commits the open group, then waits
                    self._forget(self.uncommitted.pop(key, None))
                groups = self.committed.get(key, [])
                # wait_group N: all but the newest N committed groups are complete (read, for .read)
                cut = max(len(groups) - ev.count, 0) if ev.count > 0 else len(groups)
                for ops in groups[:cut]:
                    self._forget(ops)
                self.committed[key] = groups[cut:]

    def _forget(self, ops) -> None:
        """Ops no longer outstanding: their issue events are not needed for `findings` (a run of millions of
        per-lane cp.async would otherwise keep every issue event)."""
        for op in ops or ():
            self.issue_event.pop(op, None)

    def findings(self) -> list:
        """One incomplete finding per issuing site whose copies some thread left unobserved at exit."""
        by_site: dict = {}
        for store in (self.uncommitted, self.committed):
            for (warp, family, lane), entries in store.items():
                ops = entries if store is self.uncommitted else [op for group in entries for op in group]
                for op in ops:
                    ev = self.issue_event[op]
                    by_site.setdefault(ev.site, []).append((warp, lane, family, store is self.uncommitted, ev))
        out = []
        for _site, cases in sorted(by_site.items()):
            warp, lane, family, never_committed, ev = min(cases, key=lambda c: (c[0], c[1]))
            name = {"bulk": "cp.async.bulk", "wgmma": "wgmma"}.get(family, "cp.async")
            noun = "wgmma.mma_async" if family == "wgmma" else "async copy"
            why = (f"no {name}.commit_group put it in a group" if never_committed else
                   f"no {name}.wait_group covering its group ran")
            warps = sorted({c[0] for c in cases})
            out.append(F.make(self.checker, "effect_commit_unobserved",
                              f"{noun} issued by warp {warp} lane {lane} was still outstanding when its thread "
                              f"exited ({why}; {len(cases)} {'operation' if family == 'wgmma' else 'copy'}(ies) in "
                              f"warp(s) "
                              f"{', '.join(map(str, warps))}): its effect cannot be checked",
                              {"operation": F.event_operation(self.sites, ev, {"lane": lane}),
                               "family": family, "outstanding": len(cases)}))
        return out
