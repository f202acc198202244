"""The syntax-tree cache: exact trees, private JSON files, misses on any change, a cached kernel never loads lark."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ir import syntax, syntax_cache
from ir.syntax_parser import parse_text

REPO = Path(__file__).resolve().parents[2]
KERNELS = sorted((REPO / "kernels").glob("*.py"))
KDA = REPO / "kernels" / "kda_fwd.py"


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "modelcheck"


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("tirx-syntax-*.json"))


def _round_trips(paths) -> None:
    classes = syntax_cache._node_classes()
    for path in paths:
        try:
            tree = parse_text(path.read_text(encoding="utf-8"), str(path))
        except (UnicodeDecodeError, syntax.ParseError):
            continue            # a fixture whose bug is its bytes or its syntax: nothing to cache
        back = syntax_cache._decode(json.loads(json.dumps(syntax_cache._encode(tree))), classes)
        assert back == tree, path


def test_kernel_trees_round_trip_exactly():
    _round_trips([KDA, *KERNELS[::10], *sorted((REPO / "tests" / "fixtures" / "forms").glob("*.py"))[::6]])


@pytest.mark.slow
def test_every_kernel_and_fixture_tree_round_trips_exactly():
    _round_trips(KERNELS + sorted((REPO / "tests" / "fixtures").rglob("*.py")))


def test_a_kernel_file_is_cached_once_and_read_back(cache_home):
    text = KDA.read_text()
    tree = syntax.parse_syntax(text, str(KDA))
    [entry] = _entries(cache_home)
    assert oct(entry.stat().st_mode & 0o777) == "0o600"
    assert entry.read_bytes().startswith(b'["tirx-syntax"')
    assert syntax_cache.lookup(text, str(KDA)) == tree
    assert syntax.parse_syntax(text, str(KDA)) == tree and len(_entries(cache_home)) == 1


def test_text_without_a_file_is_not_cached(cache_home):
    syntax.parse_syntax(KDA.read_text(), "<string>")
    syntax.parse_syntax(KDA.read_text(), str(REPO / "no_such_kernel.py"))
    assert not cache_home.exists() or not _entries(cache_home)


def test_another_text_or_parser_misses(cache_home, monkeypatch):
    text = KDA.read_text()
    syntax.parse_syntax(text, str(KDA))
    assert syntax_cache.lookup(text + "\n# edited\n", str(KDA)) is None
    monkeypatch.setattr(syntax_cache, "_fingerprint", "another grammar or parser")
    assert syntax_cache.lookup(text, str(KDA)) is None


@pytest.mark.parametrize("damage", [b"", b"not json", b'["tirx-syntax", 1, "k", {"a": 1}]', b"[1, 2]",
                                    b'["tirx-syntax", 1, "KEY", ["Module", ["Nope"]]]'])
def test_a_damaged_entry_is_a_miss_and_is_replaced(cache_home, damage):
    text = KDA.read_text()
    tree = syntax.parse_syntax(text, str(KDA))
    [entry] = _entries(cache_home)
    key = syntax_cache._entry(text, str(KDA))[1]
    entry.write_bytes(damage.replace(b"KEY", key.encode()))
    assert syntax_cache.lookup(text, str(KDA)) is None
    assert syntax.parse_syntax(text, str(KDA)) == tree
    assert syntax_cache.lookup(text, str(KDA)) == tree


def test_without_the_parser_sources_nothing_is_cached(cache_home, monkeypatch):
    monkeypatch.setattr(syntax_cache, "_fingerprint", "")
    tree = syntax.parse_syntax(KDA.read_text(), str(KDA))
    assert tree == parse_text(KDA.read_text(), str(KDA))
    assert not cache_home.exists() or not _entries(cache_home)


def test_unsafe_entries_are_not_read(cache_home, tmp_path):
    text = KDA.read_text()
    syntax.parse_syntax(text, str(KDA))
    [entry] = _entries(cache_home)
    entry.chmod(0o666)                                   # someone else could have written it
    assert syntax_cache.lookup(text, str(KDA)) is None
    target = tmp_path / "elsewhere.json"
    target.write_bytes(b"[]")
    entry.unlink()
    entry.symlink_to(target)                             # O_NOFOLLOW: never read through a link
    assert syntax_cache.lookup(text, str(KDA)) is None
    assert target.read_bytes() == b"[]"


def test_only_the_most_recently_used_entries_are_kept(cache_home, tmp_path, monkeypatch):
    monkeypatch.setattr(syntax_cache, "KEEP", 3)
    files = []
    for k in range(5):
        f = tmp_path / f"k{k}.py"
        f.write_text(f"X{k} = {k}\n")
        files.append(f)
        syntax.parse_syntax(f.read_text(), str(f))
        os.utime(_newest(cache_home), ns=(k * 10**9, k * 10**9))   # distinct ages, oldest first
    assert len(_entries(cache_home)) == 3
    assert syntax_cache.lookup(files[0].read_text(), str(files[0])) is None
    assert syntax_cache.lookup(files[4].read_text(), str(files[4])) is not None


def _newest(directory: Path) -> Path:
    return max(_entries(directory), key=lambda p: p.stat().st_mtime_ns)


def test_a_cached_kernel_is_checked_without_lark(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code = ("import sys, ir; f = ir.parse_file(sys.argv[1], SEQ_LEN=128); "
            "print(f.name, 'lark' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code, str(KDA)], env=env, cwd=REPO, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["kda_fwd", "True"], ["kda_fwd", "False"]], runs[-1].stderr
