"""Surface syntax trees of kernel files, cached per user as plain data.

Parsing a kernel costs importing lark, loading the grammar's tables and the LALR parse itself
(~0.15 s CPU for the KDA kernel, the largest part of its check's start-up); decoding its cached
tree costs ~0.015 s.  An entry is keyed by a hash of the text and of everything the tree depends
on: the grammar, the source of the parser, its Transformer and the nodes (`ir/syntax_parser.py`,
`ir/syntax_transformer.py`, `ir/syntax.py`) and lark's version, so an edit of any of them misses.
Only trees of files that exist are cached (not text handed over as a string: tests generate
thousands), at most `KEEP` of them, the least recently used dropped.  The files follow the grammar
cache's rules (`ir/grammar_cache.py`): JSON only (decoding builds nothing but `ir.syntax` nodes,
tuples and scalars), in the private per-user directory, never through a symlink; a damaged or
foreign entry is a miss.

Entry points: `lookup(text, file)` -> `Module | None`; `store(text, file, module)`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
from importlib import resources
from pathlib import Path

from . import grammar_cache

_FORMAT = 1
KEEP = 64
_PREFIX = "tirx-syntax-"
_fingerprint: str | None = None
_classes: dict | None = None


def lookup(text: str, file: str):
    """The cached tree of `text` read from `file`, or None."""
    path, key = _entry(text, file)
    if path is None:
        return None
    raw = grammar_cache.read_private(path)
    if raw is None:
        return None
    try:
        tag, fmt, stored_key, tree = json.loads(raw, object_hook=_no_objects)
        if tag != "tirx-syntax" or fmt != _FORMAT or stored_key != key:
            return None
        module = _decode(tree, _node_classes())
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return None
    from .syntax import Module
    if type(module) is not Module:
        return None
    try:
        os.utime(path)          # recently used: kept when older entries are dropped
    except OSError:
        pass
    return module


def store(text: str, file: str, module) -> None:
    path, key = _entry(text, file)
    if path is None:
        return
    try:
        payload = json.dumps(["tirx-syntax", _FORMAT, key, _encode(module)], separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return
    grammar_cache.write_private(path, payload.encode())
    _prune(path.parent)


def _entry(text: str, file: str) -> tuple[Path | None, str]:
    if file.startswith("<") or not os.path.isfile(file):
        return None, ""
    directory = grammar_cache.cache_dir()
    if directory is None:
        return None, ""
    fingerprint = _parser_fingerprint()
    if not fingerprint:
        return None, ""
    key = hashlib.sha256(f"{_FORMAT}\n{fingerprint}\n{text}".encode()).hexdigest()
    return directory / f"{_PREFIX}{key[:24]}.json", key


def _parser_fingerprint() -> str:
    """A hash of what the tree of a text depends on besides the text (computed once a process); empty when
    a part cannot be read (an install without the parser's sources): then nothing is cached."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256()
        try:
            h.update(resources.files("grammars").joinpath("tirx.lark").read_bytes())
            here = Path(__file__).parent
            for name in ("syntax.py", "syntax_parser.py", "syntax_transformer.py"):
                h.update((here / name).read_bytes())
            spec = importlib.util.find_spec("lark")      # lark's own __init__ (its version) without importing it
            if spec is None or not spec.origin:
                raise ImportError("lark")
            h.update(Path(spec.origin).read_bytes())
            _fingerprint = h.hexdigest()
        except (OSError, ImportError, ValueError):
            _fingerprint = ""
    return _fingerprint


def _prune(directory: Path) -> None:
    try:
        entries = [(e.stat(follow_symlinks=False).st_mtime_ns, e.path) for e in os.scandir(directory)
                   if e.name.startswith(_PREFIX) and e.name.endswith(".json")]
    except OSError:
        return
    if len(entries) <= KEEP:
        return
    entries.sort()
    for _, path in entries[:len(entries) - KEEP]:
        try:
            os.unlink(path)
        except OSError:
            pass


def _node_classes() -> dict:
    global _classes
    if _classes is None:
        from . import syntax
        _classes = {c.__name__: c for c in vars(syntax).values()
                    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == syntax.__name__}
    return _classes


# A node is a list [class name, field values...] in field order; a tuple is ["t", items...]; JSON
# scalars stand for themselves (a tree holds no other lists, dicts or objects).

def _encode(o, names: dict | None = None):
    """`names`: node class -> its field names (made on the first call)."""
    if names is None:
        names = {c: [f.name for f in dataclasses.fields(c)] for c in _node_classes().values()}
    cls = type(o)
    if cls is tuple:
        return ["t", *[_encode(v, names) for v in o]]
    if o is None or cls in (bool, int, float, str):
        return o
    fields = names.get(cls)
    if fields is None:
        raise TypeError(f"a {cls.__name__} in a syntax tree")
    return [cls.__name__, *[_encode(getattr(o, f), names) for f in fields]]


def _no_objects(pairs):
    raise TypeError("a JSON object in a syntax tree")


def _decode(o, classes: dict):
    if type(o) is not list:
        return o
    tag = o[0]
    if tag == "t":
        return tuple([_decode(v, classes) if type(v) is list else v for v in o[1:]])
    return classes[tag](*[_decode(v, classes) if type(v) is list else v for v in o[1:]])
