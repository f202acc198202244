"""The launch: grid, block and cluster extents, however the kernel spells them.

Assumes the statement builder (`build._Builder`) hands over each launch form it meets:
`T.launch_thread(tag, n)` (with or as a statement), thread-binding loops, and scope ids
(`T.cta_id([a, b, c])`, `T.warp_id([n])`, `T.lane_id([32])`, ...).  Guarantees: every
extent is fixed before any thread runs (literals, module constants, scalar parameters), a tag
gets one extent, scope ids that imply a block size agree with each other and with
`threadIdx.x`, and `make_launch` gives the one `Launch` record of the kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import syntax as sx
from . import typing as ty
from .nodes import BinOp, Cast, Const, ConstRef, Expr, Launch, Select, ThreadIndex, UnaryOp, Unsupported, Var, walk
from .scope import PARAM

_LAUNCH_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
                "clusterCtaIdx.x", "clusterCtaIdx.y", "clusterCtaIdx.z")


@dataclass
class _ScopeId:
    """A gen-1 scope id such as `T.warp_id([n])`: the thread count it implies and its value."""

    threads_per_unit: int | None   # threads per unit of the extent (warp_id: 32), None if it sets no block size
    tag: str


SCOPE_IDS = {
    "thread_id": _ScopeId(1, "threadIdx.x"), "warp_id": _ScopeId(32, "threadIdx.x"),
    "lane_id": _ScopeId(None, "threadIdx.x"), "warpgroup_id": _ScopeId(128, "threadIdx.x"),
    "warp_id_in_wg": _ScopeId(None, "threadIdx.x"), "thread_id_in_wg": _ScopeId(None, "threadIdx.x"),
    "cta_id": _ScopeId(None, "blockIdx.x"), "cluster_id": _ScopeId(None, "blockIdx.x"),
    "cta_id_in_cluster": _ScopeId(None, "clusterCtaIdx.x"),
}


class Launches:
    def __init__(self, builder):
        self.b = builder
        self.launch: dict[str, Expr] = {}                   # tag -> extent
        self.block_hints: list[tuple[int, sx.Node]] = []    # threads per block a scope id implies, where

    def error(self, what, node, hint="", expected=""):
        return self.b.error(what, node, hint=hint, expected=expected)

    def bind_launch(self, tag_node: sx.Node, extent_node: sx.Node, at) -> Expr:
        if isinstance(tag_node, sx.Str) and tag_node.value.startswith("preferredClusterCtaIdx.") \
                and tag_node.value[-1] in "xyz" and len(tag_node.value) == len("preferredClusterCtaIdx.x"):
            return self.preferred_cluster(tag_node, extent_node, at)
        if not isinstance(tag_node, sx.Str) or tag_node.value not in _LAUNCH_TAGS:
            raise self.error("unknown thread tag", tag_node, expected=", ".join(f'"{t}"' for t in _LAUNCH_TAGS),
                             hint='launch threads with T.launch_thread("threadIdx.x", n) and blocks with '
                                  'T.launch_thread("blockIdx.x", n)')
        tag = tag_node.value
        if tag in self.launch:
            raise self.error(f"'{tag}' is launched twice", at, hint="launch each thread dimension once")
        self.launch[tag] = self.launch_extent(extent_node, "a launch extent")
        return ThreadIndex(tag, span=self.b.ex.span(tag_node))

    def preferred_cluster(self, tag_node: sx.Str, extent_node: sx.Node, at) -> Expr:
        """`T.launch_thread("preferredClusterCtaIdx.x", n)`: the preferred cluster shape (the hardware launches it
        or the regular cluster shape).  A preferred extent of 1 changes nothing (index 0); a larger one is a
        cluster launch on that axis when no other cluster extent is given (clusters are reported as not
        modeled), else the index is not modeled."""
        extent = self.launch_extent(extent_node, "a launch extent")
        n = self.b.const_value(extent)
        if n == 1:
            return Const(0, "int32", span=self.b.ex.span(tag_node))
        axis = tag_node.value[-1]
        regular = self.launch.get(f"clusterCtaIdx.{axis}")
        if regular is None or regular == extent:
            self.set_launch(f"clusterCtaIdx.{axis}", extent, at)
            return ThreadIndex(f"clusterCtaIdx.{axis}", span=self.b.ex.span(tag_node))
        return Unsupported(f"preferred cluster extent {n} on {axis} beside the regular cluster extent", (extent,),
                           "int32", span=self.b.ex.span(tag_node))

    def launch_extent(self, node: sx.Node, what: str) -> Expr:
        """Launch extents are fixed before any thread runs: literals, module constants, scalar parameters."""
        e = self.b.ex.int_expr(node, what)
        for sub in walk(e):
            if isinstance(sub, (Const, ConstRef, BinOp, UnaryOp, Cast, Select)):
                continue
            if isinstance(sub, Var) and getattr(self.b.scope.lookup(sub.name), "kind", None) == PARAM:
                continue
            raise self.error(f"{what} must not depend on values computed in the kernel", node,
                             hint="use literals, module constants and scalar parameters")
        return e

    def launch_call(self, call: sx.Call) -> Expr:
        if len(call.args) != 2 or call.kwargs:
            raise self.error("T.launch_thread takes (tag, extent)", call,
                             expected='T.launch_thread("threadIdx.x", 128)')
        return self.bind_launch(call.args[0], call.args[1], call)

    def scope_id(self, name: str, call: sx.Call) -> tuple[Expr, ...]:
        """The values of a scope id, one per extent: `T.cta_id([a, b, c])` is (blockIdx.x, .y, .z) and sets
        their launch extents (`parent="cluster"`: the CTA's place in its cluster); `T.thread_id([x, y])` likewise
        for threads; `T.warp_id([n])`, `T.lane_id([32])`, `T.warpgroup_id([n])` ... take one extent."""
        sid = SCOPE_IDS[name]
        kw = {k.name: k.value for k in call.kwargs}
        parent = kw.pop("parent", None)
        kw.pop("preferred", None)    # a preferred cluster shape (non-uniform clusters): the launch's is what runs
        if kw or len(call.args) != 1 or not isinstance(call.args[0], (sx.ListLit, sx.TupleLit)) \
                or not 1 <= len(call.args[0].elts) <= 3:
            raise self.error(f"T.{name} takes a list of one to three extents", call, expected=f"T.{name}([n])")
        if parent is not None and not isinstance(parent, sx.Str):
            raise self.error("parent= takes a string", parent, expected='parent="cluster" or parent="kernel"')
        extents = [self.launch_extent(e, "a scope extent") for e in call.args[0].elts]
        span = self.b.ex.span(call)
        tag = sid.tag
        if name == "cta_id" and parent is not None and parent.value == "cluster":
            tag = "clusterCtaIdx.x"
        if tag in ("blockIdx.x", "clusterCtaIdx.x") or (name == "thread_id" and len(extents) > 1):
            base = tag.split(".")[0]
            out = []
            for axis, extent in zip("xyz", extents):
                self.set_launch(f"{base}.{axis}", extent, call)
                out.append(ThreadIndex(f"{base}.{axis}", span=span))
            return tuple(out)
        if len(extents) != 1:
            raise self.error(f"T.{name} takes a one-element list of extents", call, expected=f"T.{name}([n])")
        extent = extents[0]
        value = self.b.const_value(extent)
        tx = ThreadIndex("threadIdx.x")
        if sid.threads_per_unit is not None:
            if value is None:
                raise self.error(f"T.{name} needs a constant extent", call.args[0])
            self.block_hints.append((value * sid.threads_per_unit, call))
        c = lambda v: Const(v, "int32")  # noqa: E731
        return ({
            "thread_id": tx,
            "warp_id": ty.binop("//", tx, c(32)),
            "lane_id": ty.binop("%", tx, c(32)),
            "warpgroup_id": ty.binop("//", tx, c(128)),
            "warp_id_in_wg": ty.binop("%", ty.binop("//", tx, c(32)), c(4)),
            "thread_id_in_wg": ty.binop("%", tx, c(128)),
        }[name],)

    def set_launch(self, tag: str, extent: Expr, at) -> None:
        old = self.launch.get(tag)
        if old is not None and old != extent:
            raise self.error(f"'{tag}' is given two different extents", at)
        self.launch[tag] = extent

    def make_launch(self, fn: sx.FunctionDef) -> Launch:
        one = Const(1, "int32")
        if self.block_hints:
            counts = {v for v, _ in self.block_hints}
            if len(counts) > 1:
                raise self.error("scope ids imply different thread counts: " + ", ".join(map(str, sorted(counts))),
                                 self.block_hints[-1][1], hint="make warp_id/thread_id/warpgroup_id extents agree")
            count = counts.pop()
            declared = self.launch.get("threadIdx.x")
            if declared is None:
                self.launch["threadIdx.x"] = Const(count, "int32")
            elif self.b.const_value(declared) not in (None, count):
                raise self.error(f"scope ids imply {count} threads but threadIdx.x is launched with "
                                 f"{self.b.const_value(declared)}", self.block_hints[-1][1])
        if not any(t.startswith("threadIdx") for t in self.launch):
            raise self.error("the kernel launches no threads", fn.header,
                             hint='add `with T.launch_thread("threadIdx.x", n) as tx:` inside `with T.device_entry():`')
        get = lambda t: self.launch.get(t, one)  # noqa: E731
        return Launch((get("blockIdx.x"), get("blockIdx.y"), get("blockIdx.z")),
                      (get("threadIdx.x"), get("threadIdx.y"), get("threadIdx.z")),
                      (get("clusterCtaIdx.x"), get("clusterCtaIdx.y"), get("clusterCtaIdx.z")),
                      span=self.b.ex.span(fn.header))
