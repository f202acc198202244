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
    work list (`scheduler_metadata` [capacity, 6]: head, row, q_begin, q_count, batch, 0), its length, the sizes
    the launches pass, the split slots of `sparse_atten_fwd.py: _frozen_qsplit` (`k2q_qsplit_indices`) and the
    degrees per (query, kv head) the combine reads as `split_counts` (`sparse_atten_fwd_combine.py: prepare_data`).
    Differs from the library in one draw: each query keeps the sink block and its most
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
    # `sparse_atten_fwd.py: _frozen_qsplit`: each edge's split slot is its rank, in CSR order, among the edges of
    # its absolute query (`q + cu_seqlens_q[batch of its row]`), packed above the query index at bit 24
    q_start = np.concatenate([[0], np.cumsum(seqlens_q)])
    degrees = np.zeros(total_q, np.int64)
    qsplit = np.full((head_kv, nnz_capacity), -1, np.int32)
    for e, (r, q) in enumerate(edges):
        q_abs = int(q_start[batch_of_row[r]]) + q
        qsplit[:, e] = q | (int(degrees[q_abs]) << 24)
        degrees[q_abs] += 1
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
            "k2q_row_ptr": row_ptr, "k2q_q_indices": q_indices, "scheduler_metadata": metadata,
            "k2q_qsplit_indices": qsplit, "split_counts": np.repeat(degrees[:, None], head_kv, axis=1).astype(np.int32)}


def fast_divmod(divisor: int) -> tuple[int, int, int]:
    """CUTLASS FastDivmod's (multiplier, shift_1, shift_2) for `divisor`, as the MSA combine's host passes them
    (`tirx_kernels/ported/msa/sparse_atten_fwd_combine.py: fast_divmod`): quot = (((i - hi) >> s1) + hi) >> s2
    with hi = mulhi(i, multiplier)."""
    if divisor == 1:
        return 1, 0, 0
    shift = max(divisor - 1, 1).bit_length()
    return ((1 << (32 + shift)) + divisor - 1) // divisor - (1 << 32), 1, shift - 1


def kda_schedule(num_chains: int, num_ctas: int) -> dict[str, Any]:
    """The per-CTA chain table of the fused KDA backward (`tirx_kernels/kda/kda_backward_packed.py:
    build_schedule` with classes "legacy", which `setup` picks unless the tuned 152-CTA / 768-chain pair, and
    `build_schedule_tensor`): CTA c owns pass-2 chains c, c + num_ctas, ... (the first `extra` CTAs one more) and
    runs pass 1 for its first chain only when it is one of those `extra`; every other CTA takes its share of the
    heavy CTAs' later chains first, then its own.  Rows [n_p2, n_p1, p2 chains (maxp2), p1 chains (maxp1)], -1
    padded; every chain appears once in each pass (the library asserts it, and so does this)."""
    base, extra = divmod(num_chains, num_ctas)
    p2 = [[c + r * num_ctas for r in range(base + (1 if c < extra else 0))] for c in range(num_ctas)]
    light, heavy = num_ctas - extra, [(t % max(extra, 1)) + (t // max(extra, 1) + 1) * num_ctas
                                      for t in range(extra * base)]
    p1 = [[c] if c < extra else heavy[c - extra: extra * base: light] + [c + r * num_ctas for r in range(base)]
          for c in range(num_ctas)]
    for passes in (p2, p1):
        if sorted(x for row in passes for x in row) != list(range(num_chains)):
            raise ValueError(f"kda_schedule: {num_chains} chains over {num_ctas} CTAs do not cover each chain once")
    maxp2, maxp1 = max(1, max(map(len, p2))), max(1, max(map(len, p1)))
    table = np.full((num_ctas, 2 + maxp2 + maxp1), -1, np.int32)
    for c in range(num_ctas):
        table[c, :2] = len(p2[c]), len(p1[c])
        table[c, 2: 2 + len(p2[c])] = p2[c]
        table[c, 2 + maxp2: 2 + maxp2 + len(p1[c])] = p1[c]
    return {"table": table.reshape(-1), "maxp2": maxp2, "maxp1": maxp1}


def mqa_ks_ke(seq_len: int, seq_len_kv: int, disable_cp: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the first and one-past-last visible key (`ks`, `ke`) of `tirx_kernels/ported/deepgemm/
    mqa_logits_fp8.py: _generate_ks_ke`: causal over the last `seq_len` keys, or with context parallelism the
    two half-chunks of rank `cp_size // 3` of `cp_size = seq_len_kv // seq_len`."""
    ks = np.zeros(seq_len, np.int32)
    if disable_cp:
        return ks, (np.arange(seq_len) + (seq_len_kv - seq_len)).astype(np.int32)
    chunk, cp_size = seq_len // 2, seq_len_kv // seq_len
    cp_id = cp_size // 3
    ke = np.zeros(seq_len, np.int32)
    ke[:chunk] = cp_id * chunk + np.arange(chunk)
    ke[chunk: 2 * chunk] = (cp_size * 2 - 1 - cp_id) * chunk + np.arange(chunk)
    return ks, ke


def paged_block_table(batch: int, max_num_pages: int, num_pages: int) -> np.ndarray:
    """`tirx_kernels/ported/deepgemm/paged_mqa_logits_fp8.py: _make_block_table`: batch b's pages are the page
    ids rolled to start at b * max_num_pages (mod num_pages), the first max_num_pages of them."""
    return np.stack([(b * max_num_pages + np.arange(max_num_pages)) % num_pages
                     for b in range(batch)]).astype(np.int32)


def paged_mqa_metadata(context_lens, split_kv: int, num_sms: int) -> np.ndarray:
    """The work split DeepGEMM's `get_paged_mqa_logits_metadata` gives the paged MQA logits kernels (the library
    calls the CUDA-only package; its format is what the library checks): [num_sms + 1, 2] rows of (q atom,
    split) where SM i starts -- the sequences' `split_kv`-token segments dealt out evenly, the first
    `segments % num_sms` SMs one more -- and a last row (number of q atoms, 0) that ends the schedule."""
    lens = [int(x) for x in np.asarray(context_lens).reshape(-1)]
    segs = [_cdiv(x, split_kv) for x in lens]
    starts = np.concatenate([[0], np.cumsum(segs)])
    per, extra = divmod(int(starts[-1]), num_sms)
    meta = np.zeros((num_sms + 1, 2), np.int32)
    for sm in range(num_sms):
        first = sm * per + min(sm, extra)
        q = int(np.searchsorted(starts, first, side="right") - 1)
        meta[sm] = (q, first - starts[q]) if q < len(lens) else (len(lens), 0)
    meta[num_sms] = (len(lens), 0)
    return meta


def bsa_k2q(*, batch: int, heads: int, q_blocks: int, kv_blocks: int, maximum: int, bucket: int,
            mode: str = "fixed") -> dict[str, Any]:
    """The key->query block CSR the cuDNN block-sparse attention backward kernels read (`bucketed_offsets`
    [batch * heads, groups, kv_blocks + 1], `bucketed_indices` [batch * heads, edge_stride]), inverted from the
    query->key block index of `tirx_kernels/ported/cudnn/bsa/_block_sparse_attention_backward_sm100_blk64/data.py:
    _make_metadata` (row r keeps blocks (7r + slot) % kv_blocks, the last block forced in).  The library builds
    the inverse with cuDNN's CUDA-only `_build_bucketed_k2q_csr`; here it follows the kernels' reading
    (kernel.py: `offsets_base = ((b * heads + h) * groups + group) * (tasks + 1)`, `begin + edge` indexes the
    (b, h) row of indices): per group of `bucket` query blocks, per key block its query blocks in ascending
    order, offsets running on along the row; `edge_stride` the longest row.  Only the `fixed` block-count mode
    (every query block keeps `maximum` blocks)."""
    if mode != "fixed":
        raise ValueError(f"bsa_k2q: block_count_mode {mode!r} is not built (only 'fixed')")
    rows = batch * heads * q_blocks
    index = (np.arange(rows)[:, None] * 7 + np.arange(maximum)[None, :]) % kv_blocks
    if 0 < maximum < kv_blocks:
        index[~(index == kv_blocks - 1).any(axis=1), -1] = kv_blocks - 1
    if q_blocks == 3 and maximum == 3 and kv_blocks == 4:
        index[:] = (0, 1, 2)
    index = index.reshape(batch * heads, q_blocks, maximum)
    groups = _cdiv(q_blocks, bucket)
    offsets = np.zeros((batch * heads, groups, kv_blocks + 1), np.int32)
    edges: list[list[int]] = []
    for bh in range(batch * heads):
        row: list[int] = []
        for g in range(groups):
            blocks = range(g * bucket, min((g + 1) * bucket, q_blocks))
            for t in range(kv_blocks):
                offsets[bh, g, t] = len(row)
                row.extend(qb for qb in blocks if t in index[bh, qb])
            offsets[bh, g, kv_blocks] = len(row)
        edges.append(row)
    stride = max(1, max(len(r) for r in edges))
    indices = np.zeros((batch * heads, stride), np.int32)
    for bh, row in enumerate(edges):
        indices[bh, : len(row)] = row
    return {"offsets": offsets, "indices": indices, "edge_stride": stride, "groups": groups}


def bsa_block_sizes(batch: int, seqlen_kv: int, block: int) -> np.ndarray:
    """Tokens per key block (`data.py: prepare_data` of the blk64 backward): `block` each, the tail the rest."""
    blocks = _cdiv(seqlen_kv, block)
    sizes = np.full((batch, blocks), block, np.int32)
    sizes[:, -1] = seqlen_kv - (blocks - 1) * block
    return sizes


def flex_full_plan(*, rows: int, kv_blocks: int, capacity: int) -> dict[str, np.ndarray]:
    """A cuDNN flex-attention mask plan for the `full` mask pattern, in the layout the library's flex kernels read
    (`tirx_kernels/ported/cudnn/flex_attention/forward_sm103.py`, `load_tile_metadata` / `sparse_id`: per plan row
    the counts of full and partial key blocks, their offsets into the index arrays and the block ids).  The
    library gets it from cuDNN's CUDA-only `create_mask_plan`; with a full mask every row sees all `kv_blocks`
    blocks as full blocks and none partial, which is what is built here (index arrays padded to `capacity`)."""
    full_index = np.zeros(capacity, np.int32)
    full_index[: rows * kv_blocks] = np.tile(np.arange(kv_blocks), rows)
    return {"full_count": np.full(rows, kv_blocks, np.int32),
            "full_offset": (np.arange(rows + 1) * kv_blocks).astype(np.int32), "full_index": full_index,
            "partial_count": np.zeros(rows, np.int32), "partial_offset": np.zeros(rows + 1, np.int32),
            "partial_index": np.zeros(capacity, np.int32)}


def flex_work(*, batch: int, heads: int, q_blocks: int) -> np.ndarray:
    """The forward work queue (`fwd_work_desc`, four ints a record: q block, head, batch, unused) with one record
    per (batch, head, q block) -- every tile once, as `load_work_descriptor` reads them."""
    return np.array([(q, h, b, 0) for b in range(batch) for h in range(heads) for q in range(q_blocks)],
                    np.int32).reshape(-1)


def flex_causal_plan(*, lengths, heads: int, tile: int = 128) -> dict[str, np.ndarray]:
    """A cuDNN flex-attention plan of the causal mask (queries and keys of each sequence aligned), cta_group 1,
    one mask shared by the heads, in the layout `tirx_kernels/ported/cudnn/flex_attention/forward_hd256_sm100.py`
    reads (`load_work_metadata`, the partial-then-full block walk, the per-row 128-bit keep masks of
    `mask_payload`): per q tile m, key block m is partial (its keep bits: column <= row, column < length) and the
    blocks before it full.  `sequence_desc` (8 ints a sequence: q and k begin, lengths, first plan row) and the
    work queue (q tile, head, sequence, valid rows) list every tile once.  The library gets the plan from cuDNN's
    CUDA-only `create_mask_plan`."""
    rows = [(b, m) for b, n in enumerate(lengths) for m in range(_cdiv(n, tile))]
    cnt_p, cnt_f, idx_p, idx_f, payload = [], [], [], [], []
    for b, m in rows:
        n = lengths[b]
        cnt_p.append(1)
        idx_p.append(m)
        cnt_f.append(m)
        idx_f.extend(range(m))
        r = m * tile + np.arange(tile)[:, None]
        c = m * tile + np.arange(tile)[None, :]
        keep = (c <= r) & (c < n)
        words = (keep.reshape(tile, tile // 32, 32) * (1 << np.arange(32, dtype=np.uint64))).sum(axis=2)
        payload.append(words.astype(np.uint32))
    off = np.concatenate([[0], np.cumsum(cnt_p)]).astype(np.int32)
    off_f = np.concatenate([[0], np.cumsum(cnt_f)]).astype(np.int32)
    seq, start = [], 0
    for n in lengths:
        seq.append((0, 0, n, n, start, 0, 0, 0))
        start += _cdiv(n, tile)
    work = [(m, h, b, min(tile, lengths[b] - m * tile)) for h in range(heads) for b, m in rows]
    return {"mask_block_cnt": np.array(cnt_p, np.int32), "mask_block_offset": off,
            "mask_block_idx": np.array(idx_p, np.int32), "full_block_cnt": np.array(cnt_f, np.int32),
            "full_block_offset": off_f, "full_block_idx": np.array(idx_f or [0], np.int32),
            "mask_payload": np.concatenate(payload).reshape(-1), "sequence_desc": np.array(seq, np.int32).reshape(-1),
            "fwd_work_desc": np.array(work, np.int32).reshape(-1)}


def flex_bwd_causal_plan(*, q_len: int, k_len: int, rows: int) -> dict[str, np.ndarray]:
    """The key->query block plan the cuDNN flex-attention backward kernel reads for the `causal` mask of unequal
    lengths (`tirx_kernels/ported/cudnn/flex_attention/_flex_attention_backward_sm100/data.py: _sample_endpoints`:
    query q keeps keys [0, min(q + 1, k_len))), laid out as that kernel reads it (kernel.py, main kernel: per plan
    row -- one a 128-key block -- `partial_count/offset` and `full_count/offset` into the q-block lists
    `partial_index` / `full_index`, and per partial entry 512 mask words, two a compute thread: bit j of thread
    ctid keeps score (key row ctid % 128, query column (ctid // 128) * 32 + (j // 32) * 64 + j % 32), the order
    the thread loads its S columns from TMEM).  A block is full when every pair of its 128 x 128 tile is kept
    (tails included, "full entries are complete tiles by construction"), partial when some are, and absent
    otherwise; q blocks in ascending order.  `rows` repeats the plan (batches x mask heads of equal lengths).
    The library gets the plan from cuDNN's CUDA-only `create_mask_plan`."""
    ctid = np.arange(256)[:, None]
    j = np.arange(64)[None, :]
    key_row, q_col = ctid % 128, (ctid // 128) * 32 + (j // 32) * 64 + j % 32
    cnt_p, cnt_f, idx_p, idx_f, words = [], [], [], [], []
    for t in range(_cdiv(k_len, 128)):
        part, full = [], []
        for m in range(_cdiv(q_len, 128)):
            q = m * 128 + np.arange(128)[:, None]
            k = t * 128 + np.arange(128)[None, :]
            tile = (q < q_len) & (k < k_len) & (k <= q)
            if tile.all():
                full.append(m)
            elif tile.any():
                part.append(m)
                q, k = m * 128 + q_col, t * 128 + key_row
                keep = ((q < q_len) & (k < k_len) & (k <= q)).astype(np.uint64)
                bits = (keep.reshape(256, 2, 32) << np.arange(32, dtype=np.uint64)).sum(axis=2)
                words.append(bits.astype(np.uint32).reshape(-1))
        cnt_p.append(len(part))
        cnt_f.append(len(full))
        idx_p += part
        idx_f += full
    cnt_p, cnt_f, idx_p, idx_f, words = cnt_p * rows, cnt_f * rows, idx_p * rows, idx_f * rows, words * rows
    return {"partial_count": np.array(cnt_p, np.int32), "full_count": np.array(cnt_f, np.int32),
            "partial_offset": np.concatenate([[0], np.cumsum(cnt_p)[:-1]]).astype(np.int32),
            "full_offset": np.concatenate([[0], np.cumsum(cnt_f)[:-1]]).astype(np.int32),
            "partial_index": np.array(idx_p or [0], np.int32), "full_index": np.array(idx_f or [0], np.int32),
            "packed_mask": np.concatenate(words) if words else np.zeros(512, np.uint32)}
