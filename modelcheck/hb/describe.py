"""How explanations put the graph into words: the `Explanation` record, nodes, paths, warp lists.

Shared by `races` and `waits`; nothing here searches the graph.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..common.ranges import id_ranges


@dataclass(frozen=True)


class Explanation:
    finding_id: str
    kind: str
    ordered: bool | None          # races/operation pairs: is there an ordering path; deadlocks: None
    summary: str
    lines: tuple = ()
    path: tuple = ()              # node ids of the path, in order (for highlighting)
    data: dict = field(default_factory=dict)

    def format(self) -> str:
        return "\n".join([f"explain {self.finding_id}", f"  {self.summary}", *(f"  {ln}" for ln in self.lines)]) + "\n"

    def to_dict(self) -> dict:
        return {"finding": self.finding_id, "kind": self.kind, "ordered": self.ordered, "summary": self.summary,
                "lines": list(self.lines), "path": list(self.path), "data": self.data}


def who(hb, node, lane=None) -> str:
    d = hb.graph.nodes[node]
    lanes = f" lane {lane}" if lane is not None and lane >= 0 else ""
    where = f" at {d['span']}" if d.get("span") else ""
    return f"{d.get('label', node)}{lanes}{where}"


def path_lines(hb, path) -> list[str]:
    out = []
    for node, lane, kind in path:
        prefix = f"--{kind}--> " if kind else ""
        out.append(f"    {prefix}{who(hb, node, lane)}")
    return out


def op_node(hb, op: dict, ops=None):
    g = hb.graph
    for n, d in g.nodes(data=True):
        if d.get("kind") == "sync" and d.get("warp") == op.get("warp") and d.get("site") == op.get("site") \
                and d.get("iters", "") == ",".join(map(str, op.get("iters", []))) and (ops is None or d["op"] in ops):
            return n
    return None


def warps_text(ws) -> str:
    return ", ".join(str(w) for w in ws)


def ranges(ws) -> str:
    return id_ranges(ws, ", ")
