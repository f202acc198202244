"""The results file: one JSON record per line, appended as tasks finish, read back on a rerun.

Each record is written with one `write` of a whole line and fsync'd before the next task's;
a crash can leave at most a torn last line, which `Journal` cuts off when it opens the file
(and never a torn record in the middle).  The file is locked (flock) for the run, so two
batch runs never append to one file.  When one key has several records (a task rerun with
`--rerun-incomplete`), the last one counts.

A task's text report and SARIF runs go beside the file, in `<results>.details/<key>.json`,
written to a temporary name and renamed before its record is appended: a recorded task's
details are whole or (written by an interrupted run) absent, and the HTML page says so.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO


class JournalError(RuntimeError):
    """The results file cannot be used (locked by another run, not writable)."""


def _parse(data: bytes) -> tuple[dict, int]:
    records, unreadable = {}, 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            unreadable += 1
            continue
        if isinstance(rec, dict) and isinstance(rec.get("key"), str):
            records[rec["key"]] = rec
        else:
            unreadable += 1
    return records, unreadable


def read_records(path) -> dict:
    """The complete records of a results file (key -> last record), read without locking or repairing it."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return {}
    return _parse(data[:data.rfind(b"\n") + 1])[0]


class Journal:
    def __init__(self, path: Path | None):
        self.path = Path(path) if path is not None else None
        self.records: dict = {}
        self.torn = 0            # bytes of an unfinished last line cut off on open
        self.unreadable = 0      # complete lines that are not JSON records (skipped)
        self._memory: dict = {}
        self._fh: IO[bytes] | None = None
        if self.path is not None:
            self._open()

    @property
    def details_dir(self) -> Path | None:
        return None if self.path is None else self.path.with_name(self.path.name + ".details")

    def _open(self) -> None:
        assert self.path is not None                # only a journal with a file opens one
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fh = open(self.path, "a+b")
        except OSError as err:
            raise JournalError(f"cannot open the results file {self.path}: {err.strerror or err}") from None
        try:
            import fcntl
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:
            pass
        except OSError:
            fh.close()
            raise JournalError(f"the results file {self.path} is in use by another batch run") from None
        fh.seek(0)
        data = fh.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            self.torn = len(data) - end
            os.ftruncate(fh.fileno(), end)
            fh.seek(0, os.SEEK_END)
        self.records, self.unreadable = _parse(data[:end])
        self._fh = fh

    def append(self, record: dict, details: dict | None) -> None:
        key = record["key"]
        if details is not None:
            if self.path is None:
                self._memory[key] = details
            else:
                d = self.details_dir
                assert d is not None                # (a journal with a file has a details folder)
                d.mkdir(exist_ok=True)
                tmp = d / f".{key}.tmp"
                tmp.write_text(json.dumps(details))
                os.replace(tmp, d / f"{key}.json")
        self.records[key] = record
        if self._fh is not None:
            line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode("utf-8")
            view = memoryview(line)
            while view:
                view = view[os.write(self._fh.fileno(), view):]
            os.fsync(self._fh.fileno())

    def details(self, key: str) -> dict | None:
        if self.path is None:
            return self._memory.get(key)
        d = self.details_dir
        assert d is not None                        # (a journal with a file has a details folder)
        try:
            return json.loads((d / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()         # releases the lock
            self._fh = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
