"""Mutations of a kernel's sync lines, shared by the prover's soundness test and benchmarks/prove_mutations.py.

Every line holding a sync call is mutated in turn: dropped (replaced by a no-op so its block stays
non-empty), doubled (arrivals and commits), its wait parity flipped (`1 - (p)`), its barrier's
arrival count raised or lowered.  `SYNC_KINDS` are the Synccheck finding kinds that mean the sync
protocol broke (not data findings such as an out-of-bounds read).
"""
from __future__ import annotations

import re

SYNC_CALL = re.compile(r"T\.(cuda\.mbarrier_wait|ptx\.mbarrier\.arrive|ptx\.tcgen05\.commit|ptx\.bar\.(sync|arrive)|"
                       r"ptx\.mbarrier\.init|ptx\[\"cp\.async\.bulk\.tensor[^\"]*mbarrier)")
# Synccheck kinds that mean the sync protocol broke (not data findings such as out-of-bounds reads)
SYNC_KINDS = {"deadlock", "mbarrier_arrive_before_consumption", "mbarrier_prior_generation_not_consumed",
              "mbarrier_prior_generation_consumption_not_happens_before", "mbarrier_arrival_overflow",
              "mbarrier_transaction_over_delivery", "mbarrier_invalid_phase", "named_barrier_arrival_overflow",
              "named_barrier_contract_mismatch", "aligned_sync_contract_mismatch", "fixed_sync_protocol_error",
              "fixed_sync_nonconfluent"}


def mutants(text: str):
    """(name, mutated text) for every sync line."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if not SYNC_CALL.search(line) or line.lstrip().startswith("#"):
            continue
        indent = line[:len(line) - len(line.lstrip())]
        body = line.strip()
        where = f"line {i + 1}"
        if "mbarrier.init" not in body:
            yield f"{where} dropped", _replace(lines, i, indent + "T.evaluate(0)\n")
            if "arrive" in body or "commit" in body or "bar." in body:
                yield f"{where} doubled", _replace(lines, i, line + line)
        if "mbarrier_wait" in body:
            call = _split_last_arg(body)
            if call:
                head, arg = call
                yield f"{where} parity flipped", _replace(lines, i, f"{indent}{head}1 - ({arg}))\n")
        m = re.search(r"T\.uint32\((\d+)\)", body)
        if "mbarrier.init" in body and m:
            n = int(m.group(1))
            for new in (n + 1, n - 1):
                if new >= 1:
                    yield f"{where} count {n}->{new}", _replace(lines, i, line.replace(m.group(0), f"T.uint32({new})"))


def _replace(lines, i, new):
    return "".join(lines[:i] + [new] + lines[i + 1:])


def _split_last_arg(body: str):
    """('T.cuda.mbarrier_wait(bar, ', 'parity') for a one-line call, or None."""
    if not body.endswith(")"):
        return None
    depth = 0
    for k in range(len(body) - 2, -1, -1):
        ch = body[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                return None
            depth -= 1
        elif ch == "," and depth == 0:
            return body[:k + 2], body[k + 1:-1].strip()
    return None
