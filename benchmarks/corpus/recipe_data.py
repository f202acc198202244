"""Index data for launch recipes (benchmarks/corpus/recipes.py): offsets, indices and schedules built the way the
library's host code builds them, in numpy, so that the kernels index inside their buffers as they do on the GPU.

Each builder cites the library function it follows and says where it differs (a random draw made deterministic);
what it keeps is what the kernels rely on: monotone offsets, in-range indices, counts that fit the capacities.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _cdiv(x: int, y: int) -> int:
    return (x + y - 1) // y


def msa_plan(*, batch: int, seqlen_k: int, seqlen_q: int, blk_kv: int, head_kv: int, topk: int,
             qhead_per_kv: int, seqlen_pattern: str, num_sms: int = 148) -> dict[str, Any]:
    """The MSA sparse-attention plan of `tirx_kernels/ported/msa/sparse_prepare_fwd_split_atomic.py: prepare_data`
    (`_seqlens_k`, `_seqlens_q`, `row_coords`, `_select_blocks`, `_work_items`) and
    `sparse_prepare_flat_schedule.py: target_q_per_cta, flat_schedule_capacity`: the key->query CSR per kv head
    (`k2q_row_ptr` [head_kv, total_rows + 1], `k2q_q_indices` [head_kv, total_q * topk], -1 past the edges), the
    work list (`scheduler_metadata` [capacity, 6]: head, row, q_begin, q_count, batch, 0), its length and the
    sizes the launches pass.  Differs from the library in one draw: each query keeps the sink block and its most
    recent visible blocks (the library ranks the visible blocks by a random priority); either way a query keeps
    min(topk, visible) distinct visible blocks, so the CSR is valid and fits `total_q * topk`."""
    if seqlen_pattern == "uniform":
        seqlens_k = [seqlen_k] * batch
    else:   # `_seqlens_k` varlen: 1, 3/4, 1/2, 1/4 of the nominal length, rounded up to whole blocks
        fractions = (1.0, 0.75, 0.5, 0.25)
        seqlens_k = [max(blk_kv, _cdiv(int(seqlen_k * fractions[b % 4]), blk_kv) * blk_kv) for b in range(batch)]
    seqlens_q = [min(seqlen_q, k) for k in seqlens_k]
    rows_in_batch = [_cdiv(k, blk_kv) for k in seqlens_k]
    batch_of_row, level_of_row = [], []          # level-major rows, as `row_coords`
    for level in range(max(rows_in_batch)):
        for b, rows in enumerate(rows_in_batch):
            if rows > level:
                batch_of_row.append(b)
                level_of_row.append(level)
    row_of = {(b, lv): r for r, (b, lv) in enumerate(zip(batch_of_row, level_of_row))}
    total_rows, total_q = len(batch_of_row), sum(seqlens_q)
    nnz_capacity = total_q * topk
    edges: list[tuple[int, int]] = []            # (row, q index within its batch), the same for every head
    for b, (k_len, q_len) in enumerate(zip(seqlens_k, seqlens_q)):
        for q in range(q_len):
            last = min(max(((k_len - q_len) + q) // blk_kv, 0), rows_in_batch[b] - 1)
            keep = min(last + 1, topk)
            blocks = {0, *range(last - keep + 2, last + 1)} if keep > 1 else {0}
            edges.extend((row_of[(b, blk)], q) for blk in blocks)
    edges.sort()                                 # row-major, q ascending within a row
    counts_row = np.bincount([r for r, _ in edges], minlength=total_rows).astype(np.int64)
    row_ptr = np.zeros((head_kv, total_rows + 1), np.int32)
    row_ptr[:, 1:] = np.cumsum(counts_row)
    q_indices = np.full((head_kv, nnz_capacity), -1, np.int32)
    q_indices[:, : len(edges)] = [q for _, q in edges]
    # `target_q_per_cta` and `flat_schedule_capacity`
    per_group = 128 // qhead_per_kv
    groups = _cdiv(max(total_q * topk * head_kv, 1), per_group)
    target = min(max(min(512, max(1, _cdiv(groups, max(num_sms * 2, 1)))) * per_group, per_group),
                 max(per_group, topk * blk_kv * 2))
    target = _cdiv(target, per_group) * per_group
    capacity = max(1, total_rows * max(head_kv, 1) + _cdiv(max(total_q * max(topk, 1) * max(head_kv, 1), 1), target))
    work = [(h, r, begin, min(target, int(c) - begin), batch_of_row[r], 0)     # `_work_items`, row-head order
            for h in range(head_kv) for r, c in enumerate(counts_row) for begin in range(0, int(c), target)]
    if len(work) > capacity:
        raise ValueError(f"msa_plan: {len(work)} work items exceed the capacity {capacity}")
    metadata = np.zeros((capacity, 6), np.int32)
    metadata[: len(work)] = work
    return {"seqlens_k": seqlens_k, "seqlens_q": seqlens_q, "total_rows": total_rows, "total_q": total_q,
            "max_seqlen_q": max(seqlens_q), "nnz": len(edges), "nnz_capacity": nnz_capacity, "target": target,
            "work_capacity": capacity, "work_count": len(work), "num_batches": batch,
            "cu_seqlens_k": np.concatenate([[0], np.cumsum(seqlens_k)]).astype(np.int32),
            "cu_seqlens_q": np.concatenate([[0], np.cumsum(seqlens_q)]).astype(np.int32),
            "k2q_row_ptr": row_ptr, "k2q_q_indices": q_indices, "scheduler_metadata": metadata}
