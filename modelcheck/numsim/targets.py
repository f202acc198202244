"""Launch limits of the hardware targets a kernel may be checked for.

From the CUDA C++ Programming Guide, "Technical Specifications per Compute Capability":
at most 1024 threads per block, block dimensions up to (1024, 1024, 64), grid dimensions
up to (2^31 - 1, 65535, 65535), and the maximum shared memory per thread block (with the
opt-in attribute): 227 KB on compute capability 9.0 and 10.x, 163 KB on 8.0, 99 KB on 8.6,
8.9 and 12.x.  TMEM (tcgen05) has 512 columns per CTA on sm_100 (PTX ISA, Tensor Memory).
A launch outside them cannot start on the hardware: the engine reports
`launch_exceeds_hardware_limits` before it runs anything.
"""
from __future__ import annotations

from dataclasses import dataclass

from ir.errors import UsageError

KB = 1024


@dataclass(frozen=True)
class Target:
    name: str
    max_shared_per_block: int
    tmem_columns: int = 0
    max_threads_per_block: int = 1024
    max_block: tuple = (1024, 1024, 64)
    max_grid: tuple = ((1 << 31) - 1, 65535, 65535)


TARGETS = {t.name: t for t in (
    Target("sm_80", 163 * KB),
    Target("sm_86", 99 * KB),
    Target("sm_89", 99 * KB),
    Target("sm_90", 227 * KB),
    Target("sm_90a", 227 * KB),
    Target("sm_100", 227 * KB, tmem_columns=512),
    Target("sm_100a", 227 * KB, tmem_columns=512),
    Target("sm_103a", 227 * KB, tmem_columns=512),
    Target("sm_120", 99 * KB),
    Target("sm_120a", 99 * KB),
)}
DEFAULT_TARGET = "sm_100a"


def target(name: str | None) -> Target:
    t = TARGETS.get(name or DEFAULT_TARGET)
    if t is None:
        raise UsageError(f"unknown target {name!r}; known targets: {', '.join(TARGETS)}")
    return t


def violations(t: Target, grid: tuple, block: tuple, shared_bytes: int) -> list[str]:
    """Why this launch cannot start on `t` (empty when it can)."""
    out = []
    for axis, (g, b) in enumerate(zip(grid, block)):
        name = "xyz"[axis]
        if g < 1:
            out.append(f"grid dimension {name} is {g}; a launch needs at least 1 block along every axis")
        elif g > t.max_grid[axis]:
            out.append(f"grid dimension {name} is {g:,}, above the limit of {t.max_grid[axis]:,} on {t.name}")
        if b < 1:
            out.append(f"block dimension {name} is {b}; a block needs at least 1 thread along every axis")
        elif b > t.max_block[axis]:
            out.append(f"block dimension {name} is {b:,}, above the limit of {t.max_block[axis]:,} on {t.name}")
    threads = block[0] * block[1] * block[2]
    if threads > t.max_threads_per_block:
        out.append(f"{threads:,} threads per block, above the limit of {t.max_threads_per_block} on {t.name}")
    if shared_bytes > t.max_shared_per_block:
        out.append(f"{shared_bytes:,} bytes of shared memory per block, above the limit of "
                   f"{t.max_shared_per_block:,} ({t.max_shared_per_block // KB} KB) on {t.name}")
    return out


MAX_CLUSTER = 16     # CTAs per cluster: 8 portable, 16 with the non-portable-size attribute (sm_90+)


def cluster_violations(grid: tuple, cluster: tuple) -> list[str]:
    """Why this cluster shape cannot launch with `grid` (CUDA: cudaErrorClusterDimsInvalid / InvalidValue)."""
    out = []
    for axis, (g, c) in enumerate(zip(grid, cluster)):
        if c < 1:
            out.append(f"cluster dimension {'xyz'[axis]} is {c}; a cluster needs at least 1 CTA along every axis")
        elif g >= 1 and g % c:
            out.append(f"grid dimension {'xyz'[axis]} ({g}) is not a multiple of the cluster dimension ({c})")
    if all(c >= 1 for c in cluster) and cluster[0] * cluster[1] * cluster[2] > MAX_CLUSTER:
        out.append(f"{cluster[0] * cluster[1] * cluster[2]} CTAs per cluster, above the limit of {MAX_CLUSTER}")
    return out
