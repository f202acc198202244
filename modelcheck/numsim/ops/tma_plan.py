"""Tile-mode TMA boxes, planned once per (tensor map, box phase) and moved as 8-byte words.

`box_plan` (numsim/tensormap.py) is the definition: where every element of a box goes.  A box that lies wholly
inside the tensor is a translate of one template: its global offsets are the template's plus
sum(c_i * stride_i), and its shared addresses the template's plus the 1024-byte-aligned part of the destination
(the swizzle XOR only reads and writes address bits 4-9, so it commutes with adding a multiple of 1024).  Boxes
that leave the tensor are planned element by element as before.  When every 8 / esz consecutive elements of the
template are one aligned 8-byte word on both sides (the usual case: swizzling moves 16-byte chunks), the copy,
and the written-bytes marks, move words instead of elements: the same bytes land at the same addresses.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..descriptors import byte_runs
from ..memory import SHARED_BASE
from ..tensormap import BoxPlan, TensorMapFields, box_plan

_PHASE = 1024           # the swizzle period: every mode's XOR stays inside address bits 4-9
_WORD = 8
_LIMIT = 64             # templates kept per process (one per map and destination phase in practice)


@dataclass
class _Template:
    goff: np.ndarray
    smem: np.ndarray
    inb: np.ndarray
    bounds: tuple           # (lo goff, hi goff, lo smem, hi smem)
    words: tuple | None     # (global, shared) word indices of the template
    esz: int
    runs: tuple | None = None   # ((starts, lengths) global, (starts, lengths) shared), made when first asked


class TilePlan:
    """A box wholly inside its tensor: BoxPlan's fields (built only when read: the word copy needs none of them),
    its address bounds and, when the box moves as aligned 8-byte words, the word indices (global: from the map's
    globalAddress; shared: into the pool)."""

    __slots__ = ("_t", "origin", "base", "esz", "lo_goff", "hi_goff", "lo_smem", "hi_smem", "words")

    def __init__(self, t: _Template, origin: int, base: int, esz: int):
        self._t, self.origin, self.base, self.esz = t, origin, base, esz
        lo_g, hi_g, lo_s, hi_s = t.bounds
        self.lo_goff, self.hi_goff, self.lo_smem, self.hi_smem = lo_g + origin, hi_g + origin, lo_s + base, hi_s + base
        self.words: tuple | None = None       # (global, shared) word indices
        if t.words is not None and origin % _WORD == 0 and (base - SHARED_BASE) % _WORD == 0:
            self.words = (t.words[0] + origin // _WORD, t.words[1] + (base - SHARED_BASE) // _WORD)

    @property
    def global_off(self) -> np.ndarray:
        return self._t.goff + self.origin

    @property
    def inb(self) -> np.ndarray:
        return self._t.inb

    @property
    def smem_addr(self) -> np.ndarray:
        return self._t.smem + self.base

    def _runs(self) -> tuple:
        t = self._t
        if t.runs is None:
            t.runs = (byte_runs(t.goff, t.esz), byte_runs(t.smem, t.esz))
        return t.runs

    def global_runs(self, base_off: int) -> tuple:
        """`byte_runs(base_off + global_off, esz)` from the template's (kept with it; adding a constant to the
        offsets adds it to the starts)."""
        starts, lengths = self._runs()[0]
        return starts + (base_off + self.origin), lengths

    def smem_runs(self, alloc_base: int) -> tuple:
        """`byte_runs(smem_addr - alloc_base, esz)` from the template's."""
        starts, lengths = self._runs()[1]
        return starts + (self.base - alloc_base), lengths


_templates: dict = {}


def _template(f: TensorMapFields, phase: int) -> _Template:
    key = (f, phase)
    t = _templates.get(key)
    if t is not None:
        return t
    p = box_plan(f, (0,) * f.rank, phase)
    goff, smem, esz = p.global_off, p.smem_addr, p.esz
    pair = None
    k = _WORD // esz if esz <= _WORD and _WORD % esz == 0 else 0
    if k and goff.size % k == 0:
        g, s = goff.reshape(-1, k), smem.reshape(-1, k)
        step = np.arange(k, dtype=np.int64) * esz
        if ((g == g[:, :1] + step).all() and (s == s[:, :1] + step).all() and not (g[:, 0] % _WORD).any()
                and not (s[:, 0] % _WORD).any()):
            pair = (g[:, 0] // _WORD, s[:, 0] // _WORD)
    inb = np.ones(goff.size, dtype=np.bool_)
    inb.flags.writeable = False
    t = _Template(goff, smem, inb, (int(goff.min()), int(goff.max()), int(smem.min()), int(smem.max())),
                  pair, esz)
    if len(_templates) >= _LIMIT:
        _templates.clear()
    _templates[key] = t
    return t


_tiles: dict = {}          # (id(map fields), coordinates, destination) -> (the fields, their TilePlan)


def plan_box(f: TensorMapFields, coords, dst: int) -> BoxPlan | TilePlan:
    """`box_plan(f, coords, dst)`, from the cached template when the box lies inside the tensor (a TilePlan).
    TilePlans are kept per (map, coordinates, destination): CTAs sharing an operand tile load the same box into
    the same stage (a plan is never changed once made; the entry holds its fields, so their id is not reused)."""
    key = (id(f), tuple(coords), dst)
    hit = _tiles.get(key)
    if hit is not None and hit[0] is f:
        return hit[1]
    plan = _plan_box(f, coords, dst)
    if isinstance(plan, TilePlan):
        if len(_tiles) >= _TILE_LIMIT:
            _tiles.clear()
        _tiles[key] = (f, plan)
    return plan


_TILE_LIMIT = 4096


def _plan_box(f: TensorMapFields, coords, dst: int) -> BoxPlan | TilePlan:
    given = coords
    coords = tuple(int(c) for c in coords)
    if f.packed > 1:       # dim 0 of a packed map is stored in bytes (as in box_plan)
        coords = (coords[0] // f.packed,) + coords[1:]
    counts = f.box_counts
    origin = 0
    for i in range(f.rank):
        es = 1 if i == 0 else f.element_strides[i]
        c = coords[i]
        if c < 0 or c + (counts[i] - 1) * es >= f.global_shape[i]:
            return box_plan(f, given, dst)
        origin += c * (f.esz if i == 0 else f.global_strides[i - 1])
    dst = int(dst)
    phase = dst % _PHASE
    return TilePlan(_template(f, phase), origin, dst - phase, f.esz)


def words(data: np.ndarray) -> np.ndarray:
    """`data`'s bytes as 8-byte words (a view; a tail shorter than a word is left out)."""
    return data[: data.size - data.size % _WORD].view(np.uint64)
