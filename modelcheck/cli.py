"""The `modelcheck` command line (DESIGN §2.2).

Exit codes: 0 clean (and review unless --strict), 1 error, 2 incomplete,
3 review under --strict, 64 usage or parse error.
"""
from __future__ import annotations

import argparse
import sys

import ir

from .kernel import load
from .summary import summarize

EXIT_USAGE = 64

# Subcommands whose machinery lands with later issues; each says which.
_PENDING = {
    "check": "Synccheck and Racecheck (issues #5 and #6)",
    "sync": "Synccheck (issue #5)",
    "race": "Racecheck (issue #6)",
    "run": "the NumSim simulator (issue #3)",
    "prove": "the z3 prover (issue #7)",
    "replay": "counterexample replay (issue #7)",
    "graph": "the happens-before graph (issue #7)",
    "states": "the Synccheck explorer (issues #5 and #7)",
}


def _consts(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise ValueError(f"--const expects NAME=VALUE, got {pair!r}")
        try:
            out[name] = int(value, 0)
        except ValueError:
            try:
                out[name] = float(value)
            except ValueError:
                raise ValueError(f"--const {name}: {value!r} is not a number") from None
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="modelcheck", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    parse = sub.add_parser("parse", help="print the canonical text and an IR summary")
    parse.add_argument("kernel")
    parse.add_argument("--const", action="append", default=[], metavar="N=V", help="override a module constant")
    parse.add_argument("--summary-only", action="store_true", help="print only the summary")
    for name, what in _PENDING.items():
        sp = sub.add_parser(name, help=f"(arrives with {what})")
        sp.add_argument("args", nargs=argparse.REMAINDER)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command in _PENDING:
        print(f"modelcheck {args.command}: not available yet; it arrives with {_PENDING[args.command]}.\n"
              f"Available now: modelcheck parse KERNEL.py [--const N=V]", file=sys.stderr)
        return EXIT_USAGE
    try:
        consts = _consts(args.const)
        kernel = load(args.kernel, **consts)
    except ir.ParseError as err:
        print(err, file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError) as err:
        print(f"modelcheck: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "parse":
        if not args.summary_only:
            print(kernel.script())
        print(summarize(kernel.func).format())
        return 0
    return EXIT_USAGE
