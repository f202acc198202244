"""Launch limits of the hardware targets a kernel may be checked for.

From the CUDA C++ Programming Guide, "Technical Specifications per Compute Capability":
at most 1024 threads per block, block dimensions up to (1024, 1024, 64), grid dimensions
up to (2^31 - 1, 65535, 65535), and the maximum shared memory per thread block (with the
opt-in attribute): 227 KB on compute capability 9.0 and 10.x, 163 KB on 8.0, 99 KB on 8.6,
8.9 and 12.x.  TMEM (tcgen05) has 512 columns per CTA on sm_100 (PTX ISA, Tensor Memory).
A launch outside them cannot start on the hardware: the engine reports
`launch_exceeds_hardware_limits` before it runs anything.

Residency (how many CTAs run at once, `resident_ctas`), from the same table: resident blocks per SM
32 (8.0, 9.0, 10.x, 12.x), 16 (8.6), 24 (8.9); resident warps per SM 64 (8.0, 9.0, 10.x), 48 (8.6,
8.9, 12.x); shared memory per SM 164 KB (8.0), 228 KB (9.0, 10.x), 100 KB (8.6, 8.9, 12.x), of
which the driver reserves 1 KB per resident block.  The SM count is a property of the part, not
of the capability: A100 108, A40 84, L40S 142, H100 SXM 132, B200 148, RTX 5090 170 (the part
named per target; `Engine(resident_ctas=N)` models another).  Registers are not counted (the
compiler's per-thread count is not in the kernel text), so the residency is an upper bound.

Not a target (`NOT_MODELED`, each with why): sm_107 / sm_107a (compute capability 10.7, Rubin).  What is public:
334,848 bytes (327 KB) of shared memory per block (CUTLASS `include/cutlass/arch/arch.h`,
`sm107_smem_capacity_bytes`; 328 KB per SM, "larger shared memory allocations (328KB)" in the CUTLASS 4.8.0dev
release notes) and 576 TMEM columns ("extended TMEM size from 512 COL to 576 COL", same notes); cuBLASDx 0.8.0's
release notes say SM107 uses the SM103 instruction set.  Not found: the resident blocks and warps per SM and the SM
count of a named part (the Programming Guide's capability table and the CUDA 13.x release notes we could search
list no 10.7 column).  NumSim's tcgen05 model is sm_100's (512 columns, sm_100 instruction-descriptor fields,
no `tcgen05.alloc.exclusive`), so an sm_107a kernel checked with it gets findings of sm_100's rules.
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
    sms: int = 148                       # streaming multiprocessors of the part named in the table
    max_blocks_per_sm: int = 32
    max_warps_per_sm: int = 64
    shared_per_sm: int = 228 * KB
    reserved_shared_per_block: int = 1 * KB


TARGETS = {t.name: t for t in (
    Target("sm_80", 163 * KB, sms=108, shared_per_sm=164 * KB),                          # A100
    Target("sm_86", 99 * KB, sms=84, max_blocks_per_sm=16, max_warps_per_sm=48, shared_per_sm=100 * KB),  # A40
    Target("sm_89", 99 * KB, sms=142, max_blocks_per_sm=24, max_warps_per_sm=48, shared_per_sm=100 * KB),  # L40S
    Target("sm_90", 227 * KB, sms=132),                                                  # H100 SXM
    Target("sm_90a", 227 * KB, sms=132),
    Target("sm_100", 227 * KB, tmem_columns=512),                                        # B200
    Target("sm_100a", 227 * KB, tmem_columns=512),
    Target("sm_103a", 227 * KB, tmem_columns=512),
    Target("sm_120", 99 * KB, sms=170, max_warps_per_sm=48, shared_per_sm=100 * KB),     # RTX 5090
    Target("sm_120a", 99 * KB, sms=170, max_warps_per_sm=48, shared_per_sm=100 * KB),
)}
DEFAULT_TARGET = "sm_100a"
# targets a kernel may name whose limits are not (all) public: why each is not checked (see the module docstring)
NOT_MODELED = {name: ("334,848 B of shared memory per block and 576 TMEM columns are public (CUTLASS), but its "
                      "resident blocks/warps per SM and SM count are not, and NumSim's tcgen05 model is sm_100's "
                      "(512 TMEM columns, no exclusive allocation)") for name in ("sm_107", "sm_107a")}


def target(name: str | None) -> Target:
    t = TARGETS.get(name or DEFAULT_TARGET)
    if t is None:
        why = f" ({NOT_MODELED[name]})" if name in NOT_MODELED else ""
        raise UsageError(f"unknown target {name!r}{why}; known targets: {', '.join(TARGETS)}")
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


def resident_ctas(t: Target, warps_per_cta: int, shared_bytes: int) -> int:
    """At most how many CTAs of this launch are resident on `t` at once (a launch within its limits: >= 1 per
    SM): blocks, warps and shared memory per SM, times the SMs."""
    per_sm = min(t.max_blocks_per_sm, t.max_warps_per_sm // max(warps_per_cta, 1),
                 t.shared_per_sm // (shared_bytes + t.reserved_shared_per_block))
    return max(per_sm, 1) * t.sms


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
