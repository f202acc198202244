"""The analysed LALR grammar, cached per user as plain data.

Analysing `grammars/tirx.lark` costs ~0.15 s, most of a cold start, so the tables are
cached.  Lark's own cache is a pickle, and unpickling a file another local user can
plant runs their code; so this cache is JSON (loading it cannot execute anything) and
lives only in a private per-user directory: `$XDG_CACHE_HOME/modelcheck` or
`~/.cache/modelcheck`, mode 0700, owned by the user, with no group or world write.  A
directory or file that fails those checks is ignored (the grammar is analysed in
memory instead).  Files are opened with `O_NOFOLLOW` and written to a fresh temporary
file that `os.replace` moves into place, so a planted symlink is never followed.

Entry point: `load(grammar, postlex, transformer)` -> a `lark.Lark` LALR parser.  `cache_dir`,
`read_private` and `write_private` are the directory and file rules, shared with `ir/syntax_cache.py`
(which loads without lark: lark is imported here only to build or load the parser).
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path

_OPTIONS = dict(parser="lalr", start="file_input", maybe_placeholders=True)
_FORMAT = 1


def load(grammar: str, postlex, transformer):
    from lark import Lark
    key = _key(grammar)
    directory = cache_dir()
    path = directory / f"tirx-grammar-{key}.json" if directory is not None else None
    if path is not None:
        data = _read(path)
        if data is not None:
            try:
                return Lark._load_from_dict(data["data"], data["memo"], postlex=postlex, transformer=transformer)
            except Exception:   # a stale or damaged entry: analyse afresh and overwrite it
                pass
    parser = Lark(grammar, postlex=postlex, transformer=transformer, **_OPTIONS)
    if path is not None:
        _write(path, parser)
    return parser


def cache_dir() -> Path | None:
    """The private cache directory (created 0700), or None when it is missing and cannot be made safely."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    directory = Path(base) / "modelcheck"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.lstat(directory)
    except OSError:
        return None
    return directory if _private(st, want_dir=True) else None


def _private(st: os.stat_result, want_dir: bool) -> bool:
    kind_ok = stat.S_ISDIR(st.st_mode) if want_dir else stat.S_ISREG(st.st_mode)
    owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return kind_ok and owner_ok and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _key(grammar: str) -> str:
    from lark import __version__ as lark_version
    text = f"{_FORMAT}\n{lark_version}\n{sys.version_info[:2]}\n{sorted(_OPTIONS.items())}\n{grammar}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def read_private(path: Path) -> bytes | None:
    """The bytes of a regular file the user owns that no one else can write (never through a symlink)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not _private(os.fstat(f.fileno()), want_dir=False):
            return None
        try:
            return f.read()
        except OSError:
            return None


def _read(path: Path):
    raw = read_private(path)
    if raw is None:
        return None
    try:
        return _decode(json.loads(raw))
    except (ValueError, TypeError, KeyError, RecursionError):
        return None


def _write(path: Path, parser) -> None:
    from lark.lark import _LOAD_ALLOWED_OPTIONS, Rule, TerminalDef
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    # the transformer and postlexer are objects: they are passed again at load time
    data["options"] = {k: v for k, v in data["options"].items() if k not in _LOAD_ALLOWED_OPTIONS}
    write_private(path, json.dumps(_encode({"data": data, "memo": memo}), separators=(",", ":")).encode())


def write_private(path: Path, payload: bytes) -> None:
    """Write `payload` to `path` (mode 0600) through a fresh temporary file moved into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)   # replaces a symlink at `path` itself, never its target
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


# JSON has no tuples and only string keys; the tables have both, so containers are tagged.

def _encode(o):
    if isinstance(o, dict):
        return ["d", [[_encode(k), _encode(v)] for k, v in o.items()]]
    if isinstance(o, tuple):
        return ["t", [_encode(v) for v in o]]
    if isinstance(o, list):
        return ["l", [_encode(v) for v in o]]
    if o is None or isinstance(o, (bool, int, float, str)):
        return o
    raise TypeError(f"cannot cache a {type(o).__name__} in the grammar tables")


def _decode(o):
    if type(o) is list:
        # scalars (most of the ~50k items) are taken as they are, without a call: this is most of a load
        tag, body = o
        if tag == "d":
            return {(_decode(k) if type(k) is list else k): (_decode(v) if type(v) is list else v) for k, v in body}
        if tag == "t":
            return tuple([_decode(v) if type(v) is list else v for v in body])
        if tag == "l":
            return [_decode(v) if type(v) is list else v for v in body]
        raise ValueError(f"unknown tag {tag!r}")
    return o
