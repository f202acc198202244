"""Closed forms for locals carried across a symbolic loop (PipelineState-style cursors).

A cursor advanced once per iteration (`stage += 1; if stage == D: stage = 0; phase ^= 1`,
or `c += 1`, or a strided ring) has a value at iteration k that is a function of k.
The candidates are fitted on the first iterations computed concretely from the entry
values, then proved for every k with z3 against the body's symbolic one-iteration
effect: closed(0) = entry and effect(closed(k)) = closed(k + 1).  Only then do the
loop's sync commands see the closed form.  Anything else leaves the local opaque (a
sync operand that depends on it is then outside the fragment).
"""
from __future__ import annotations

import numpy as np
import z3

import ir

from . import solving
from .exprs import Opaque, OutsideFragment, Sym, evaluate, free_vars, is_lanes, substitute, to_expr
from .z3expr import Terms

TRIAL = 40


def _c(v: int | np.integer) -> ir.Const:
    return ir.Const(int(v), "int32")


def _b(op, a, b) -> ir.BinOp:
    return ir.BinOp(op, a, b, "int32")


def summarize(x, s: ir.For, env, locals_, tid, mask, carried, start, stop) -> None:
    """Bind each carried local to its closed form in the loop variable, proved for every iteration."""
    k = _b("-", ir.Var(s.var.name, "int32"), to_expr(start))
    entry = {(n, key): v for n in carried for key, v in locals_[n].items()}
    effect = _effect(x, s, env, locals_, tid, mask, carried, entry)
    forms: dict = dict.fromkeys(entry)
    ok = False
    for values in _entry_samples(x, entry):
        trajectory = _trajectory(x, s, env, locals_, tid, mask, values, start)
        partners = [(v, _entry_expr(entry[key], v)) for key, v in values.items() if v is not None]
        for key, v0 in entry.items():
            forms[key] = None
            if isinstance(v0, Opaque) or is_lanes(v0) or effect.get(key) is None:
                continue
            seq = trajectory.get(key) if trajectory else None
            forms[key] = _fit(seq, k, _entry_expr(v0, values[key]), partners)
        # the fits hold together or not at all (a phase form depends on its stage partner)
        ok = _prove(x, s, effect, forms, entry, k, start)
        if ok:
            break
    for (n, key), form in forms.items():
        if form is not None and ok:
            locals_[n][key] = Sym(form)
        elif effect.get((n, key)) is not None and _unchanged(effect[(n, key)], n, key):
            continue
        else:
            locals_[n][key] = Opaque(f"local {n} carried across the loop at line "
                                     f"{getattr(s.span, 'line', '?')} without a closed form", s.span)


def _entry_samples(x, entry: dict):
    """Concrete entry values to fit the trajectories on: the entries themselves when concrete; for entries that
    are terms in the symbolic constants (a cursor entering the next tile's loop), the terms at a few values of
    those constants (the fits are then stated in the entry terms and proved for all values)."""
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in entry.values()):
        yield {key: int(v) for key, v in entry.items()}
        return
    names: set = set()
    for v in entry.values():
        if isinstance(v, Sym):
            names |= free_vars(v.e)
        elif not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            return
    if not names <= set(x.symbolic):
        return
    for value in (2, 3, 1, 4):
        try:
            yield {key: int(evaluate(v.e, dict.fromkeys(names, value))) if isinstance(v, Sym) else int(v)
                   for key, v in entry.items()}
        except (KeyError, TypeError, ValueError):
            return


def _entry_expr(v0, value) -> ir.Expr:
    """The entry as an expression: the constant, or the term in the symbolic constants."""
    return v0.e if isinstance(v0, Sym) else _c(value)


def after_loop(x, s: ir.For, locals_, carried, start, stop) -> None:
    """The carried locals after the loop: their closed forms at k = trip count."""
    var = s.var.name
    for n in carried:
        for key, v in list(locals_[n].items()):
            if isinstance(v, Sym):
                locals_[n][key] = Sym(substitute(v.e, {var: to_expr(stop)}))


# ---------------------------------------------------------------------------------- pieces
def _placeholder(n, key) -> ir.Var:
    return ir.Var(f"{n}@{'_'.join(map(str, key))}", "int32")


def _effect(x, s, env, locals_, tid, mask, carried, entry) -> dict:
    """One iteration's effect on the carried locals, as expressions in placeholders and the loop variable."""
    trial = {n: dict(v) for n, v in locals_.items()}
    for (n, key) in entry:
        trial[n][key] = Sym(_placeholder(n, key))
    env2 = dict(env)
    env2[s.var.name] = Sym(ir.Var(s.var.name, "int32"))
    try:
        x.stmts(s.body, env2, trial, tid, mask)
    except OutsideFragment:
        return {}
    out: dict[tuple, ir.Expr | None] = {}
    for (n, key) in entry:
        v = trial[n].get(key)
        if isinstance(v, Sym):
            out[(n, key)] = v.e
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[(n, key)] = _c(v)
        else:
            out[(n, key)] = None
    return out


def _trajectory(x, s, env, locals_, tid, mask, values, start) -> dict | None:
    """The carried values at the entry of the first TRIAL iterations, run concretely from the entry `values`."""
    if isinstance(start, Sym):
        return None
    trial = {n: dict(v) for n, v in locals_.items()}
    for (n, key), v in values.items():
        trial[n][key] = v
    seqs: dict[tuple, list] = {key: [] for key in values}
    env2 = dict(env)
    sites = len(x.sites)
    try:
        for i in range(TRIAL):
            for (n, key) in values:
                seqs[(n, key)].append(trial[n].get(key))
            env2[s.var.name] = int(start) + i
            x.stmts(s.body, env2, trial, tid, mask)
    except OutsideFragment:
        return None
    finally:
        del x.sites[sites:]
    return seqs


def _fit(seq, k, base: ir.Expr, partners: list):
    """A closed form in k matching the concrete sequence, stated from the entry expression `base` (and, for a
    phase bit, its stage partner's entry expression, found among `partners` by its sampled value)."""
    if seq is None or any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in seq):
        return None
    seq = [int(v) for v in seq]
    if all(v == seq[0] for v in seq):
        return base
    step = seq[1] - seq[0]
    if all(seq[i + 1] - seq[i] == step for i in range(len(seq) - 1)):
        return _b("+", base, _b("*", _c(step), k))
    # (v0 + c*k) % D
    for d in range(2, 65):
        for c in range(1, d):
            if all(seq[i] == (seq[0] + c * i) % d for i in range(len(seq))):
                return _b("%", _b("+", base, _b("*", _c(c), k) if c != 1 else k), _c(d))
    # a phase bit flipping when a modular partner wraps: (p0 + (s0 + c*k) // D) % 2
    p0 = seq[0]
    if p0 not in (0, 1):
        return None
    for d in range(1, 65):
        for s0 in range(d):
            for c in range(1, d + 1):
                if all(seq[i] == (p0 + (s0 + c * i) // d) % 2 for i in range(len(seq))):
                    start = next((e for v, e in partners if v == s0 and not isinstance(e, ir.Const)), _c(s0))
                    return _b("%", _b("+", base, _b("//", _b("+", start, _b("*", _c(c), k) if c != 1 else k),
                                                     _c(d))), _c(2))
    return None


def _unchanged(e, n, key) -> bool:
    return isinstance(e, ir.Var) and e.name == _placeholder(n, key).name


def _prove(x, s, effect, forms, entry, k, start) -> bool:
    """z3: closed(0) = entry and effect(closed(k)) = closed(k + 1) for every k >= 0."""
    fitted = {key: f for key, f in forms.items() if f is not None}
    if not fitted:
        return False
    var = s.var.name
    names = {var: z3.Int(var)}
    for sym in x.symbolic:
        names[sym] = z3.Int(sym)
    for (n, key) in entry:
        names[_placeholder(n, key).name] = z3.Int(_placeholder(n, key).name)
    t = Terms(names)
    try:
        start_t = t.int_of(to_expr(start))
        kk = names[var] - start_t
        goals = []
        for key, form in fitted.items():
            eff = effect.get(key)
            if eff is None:
                return False
            v0 = entry[key]
            goals.append(t.int_of(substitute(form, {var: to_expr(start)})) == t.int_of(to_expr(v0)))
        # effect evaluated at the closed forms of iteration k equals the closed forms at k + 1
        subst = {_placeholder(n, key).name: form for (n, key), form in fitted.items()}
        for key, form in fitted.items():
            eff = substitute(effect[key], subst)
            nxt = substitute(form, {var: _b("+", ir.Var(var, "int32"), _c(1))})
            goals.append(t.int_of(eff) == t.int_of(nxt))
        query = t.side + [kk >= 0] + [names[sym] >= 0 for sym in x.symbolic] + [z3.Not(z3.And(*goals))]
        answer = x.ledger.attempts("closed_form", query, solving.BUDGETS["closed_form"])
        return answer.result == z3.unsat
    except (KeyError, ValueError):
        return False
