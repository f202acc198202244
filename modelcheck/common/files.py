"""Writing output files (reports, graphs, arrays) safely.

`write_output(path, data, protect=...)` writes exactly `path` (no extension added), never
over one of the `protect`ed files (the kernel, its input arrays), and never through a
symlink: the bytes go to a fresh temporary file beside `path` (created with `O_EXCL` and
`O_NOFOLLOW`) that `os.replace` moves into place, which replaces a symlink at `path`
itself rather than the file it points to.  A half-written file never appears at `path`.
"""
from __future__ import annotations

import os
from pathlib import Path

from ir.errors import UsageError


def check_output(path, protect=()) -> Path:
    """Raise `UsageError` if writing `path` would replace one of the `protect`ed files or a directory (call it
    before the work, so a run does not end in a refusal)."""
    path = Path(path)
    target = os.path.realpath(path)
    for other in protect:
        if other is None:
            continue
        if target == os.path.realpath(other) or (path.exists() and _same(path, other)):
            raise UsageError(f"refusing to write {path}: it is {other}, an input of this run (choose another "
                             f"output path)")
    if path.is_dir() and not path.is_symlink():
        raise UsageError(f"cannot write {path}: it is a directory")
    return path


def write_output(path, data: bytes | str, protect=()) -> Path:
    path = check_output(path, protect)
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = path.parent if str(path.parent) else Path(".")
    tmp = directory / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _same(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
