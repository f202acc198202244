"""The grammar cache: plain data in a private per-user directory, never a planted file."""
from __future__ import annotations

import hashlib
import os
import pickle
import stat
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import pytest
from lark import __version__ as lark_version

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "kernels" / "producer_overtaking_fixed.py"


class _Plant:
    """Unpickling this creates `marker` (what an attacker's pickle would do)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.makedirs, (self.marker,))


def _parse_in_subprocess(home: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), **(extra_env or {})}
    # text, not a file: a file's tree would be cached (test_syntax_cache.py) and a rerun would skip the grammar
    code = f"import ir, pathlib; f = ir.parse(pathlib.Path({str(KERNEL)!r}).read_text()); print(f.name)"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def _old_cache_path() -> Path:
    """Where the old code handed lark a pickle cache: a name anyone could compute in the shared temp dir."""
    grammar = resources.files("grammars").joinpath("tirx.lark").read_text(encoding="utf-8")
    digest = hashlib.sha256((grammar + lark_version).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"modelcheck-tirx-{digest}-{os.getuid()}.lark"


def test_a_pickle_planted_at_the_old_shared_path_is_never_read(tmp_path):
    marker = tmp_path / "planted-code-ran"
    old = _old_cache_path()
    existed = old.exists()
    backup = old.read_bytes() if existed else None
    try:
        # lark's cache format: a sha line, then pickles; the sha is the old key, so lark would unpickle it
        old.write_bytes(b"0" * 64 + b"\n" + pickle.dumps(_Plant(str(marker))))
        res = _parse_in_subprocess(tmp_path / "home")
        assert res.returncode == 0, res.stderr
        assert not marker.exists()
    finally:
        if existed:
            old.write_bytes(backup)
        else:
            old.unlink(missing_ok=True)


def test_the_cache_is_private_json_and_reused(tmp_path):
    home = tmp_path / "home"
    assert _parse_in_subprocess(home).returncode == 0
    directory = home / ".cache" / "modelcheck"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    [entry] = list(directory.glob("tirx-grammar-*.json"))
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert entry.read_bytes().startswith(b"[")        # JSON data, not a pickle
    before = entry.stat().st_mtime_ns
    assert _parse_in_subprocess(home).returncode == 0
    assert entry.stat().st_mtime_ns == before         # read, not rewritten


def test_a_group_writable_cache_directory_is_not_used(tmp_path):
    home = tmp_path / "home"
    directory = home / ".cache" / "modelcheck"
    directory.mkdir(parents=True)
    directory.chmod(0o777)
    res = _parse_in_subprocess(home)
    assert res.returncode == 0, res.stderr
    assert not list(directory.iterdir())


def test_a_planted_entry_that_others_can_write_is_ignored(tmp_path):
    from ir import grammar_cache
    home = tmp_path / "home"
    assert _parse_in_subprocess(home).returncode == 0
    [entry] = list((home / ".cache" / "modelcheck").glob("tirx-grammar-*.json"))
    entry.write_text('["l", []]')                       # damaged tables
    entry.chmod(0o666)
    assert grammar_cache._read(entry) is None           # not trusted: world-writable
    entry.chmod(0o600)
    res = _parse_in_subprocess(home)                     # trusted but damaged: analysed afresh, rewritten
    assert res.returncode == 0, res.stderr
    assert entry.read_bytes() != b'["l", []]'


def test_a_symlink_at_the_cache_path_is_replaced_not_followed(tmp_path):
    from ir import grammar_cache
    home = tmp_path / "home"
    assert _parse_in_subprocess(home).returncode == 0
    [entry] = list((home / ".cache" / "modelcheck").glob("tirx-grammar-*.json"))
    entry.unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    entry.symlink_to(victim)
    assert grammar_cache._read(entry) is None           # O_NOFOLLOW: not read through the link
    res = _parse_in_subprocess(home)
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == "keep me"
    assert not entry.is_symlink() and entry.is_file()


@pytest.mark.parametrize("value", [{"a": (1, 2), 3: [None, True, "x", 1.5]}, [], ()])
def test_encoding_round_trips(value):
    from ir import grammar_cache
    assert grammar_cache._decode(grammar_cache._encode(value)) == value
