"""Which real parser accepts each kernel of the real-syntax corpus (kernels/real/).

The manifest records, per kernel, what apache-tvm-tirx 0.1.0a4 and apache-tvm 0.27 say
("real_parsers": ok | ok-unchecked | rejects); the pending kernels (kernels/real/pending/,
constructs the front end does not read yet) are recorded here.  Both directions are
asserted: a parser that starts rejecting a kernel, or accepting one recorded as rejected,
fails the test.

* apache-tvm-tirx runs in this process (the `test` extra installs it): a kernel that imports
  it is run as a module (its @T.function decorator parses it); any other text goes through
  `tvm_tirx.script.from_source`.
* apache-tvm 0.27 cannot share a process with apache-tvm-tirx: tests/conformance/
  tvm027_parse.py runs in its interpreter, $MODELCHECK_TVM027_PYTHON or the corpus venv
  (`bash benchmarks/corpus_setup.sh`); skipped when neither has apache-tvm 0.27.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.manifest import KERNELS, entries

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).resolve().parents[2]
PARSE_027 = Path(__file__).with_name("tvm027_parse.py")
TIRX, TVM027 = "apache-tvm-tirx-0.1.0a4", "apache-tvm-0.27"
PENDING = {
    "pending/inline_ring_authored.py": {TIRX: "rejects", TVM027: "ok"},
    "pending/shared_scalar_broadcast_function.py": {TIRX: "ok", TVM027: "rejects"},
}


def recorded() -> dict[str, dict[str, str]]:
    """file under kernels/real/ -> {parser: status}, for every real-syntax kernel."""
    out = {e["file"][len("real/"):]: e["real_parsers"] for _, e in entries() if e["file"].startswith("real/")}
    out.update(PENDING)
    return out


def test_every_real_syntax_kernel_is_recorded():
    on_disk = {str(p.relative_to(KERNELS / "real")) for p in (KERNELS / "real").rglob("*.py")}
    assert on_disk == set(recorded())
    assert all(set(v) == {TIRX, TVM027} for v in recorded().values())
    # every kernel is accepted by at least one real parser
    assert all({"ok", "ok-unchecked"} & set(v.values()) for v in recorded().values())


# --------------------------------------------------------------------------- apache-tvm-tirx 0.1.0a4

_counter = itertools.count()


def tirx_status(path: Path) -> str:
    pytest.importorskip("tvm_tirx")
    import tvm_tirx.script

    text = path.read_text(encoding="utf-8")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            if re.search(r"^from tvm_tirx\.script import", text, re.MULTILINE):
                spec = importlib.util.spec_from_file_location(f"_real_syntax_{next(_counter)}", path)
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            else:
                tvm_tirx.script.from_source(text)
    except Exception:  # noqa: BLE001 - whatever the real parser raises
        return "rejects"
    return "ok"


@pytest.mark.parametrize("name", sorted(recorded()))
def test_tvm_tirx_parser(name):
    assert tirx_status(KERNELS / "real" / name) == recorded()[name][TIRX]


# --------------------------------------------------------------------------- apache-tvm 0.27

def _python_027() -> str | None:
    candidates = [os.environ.get("MODELCHECK_TVM027_PYTHON"),
                  str(Path.home() / ".cache" / "modelcheck" / "corpus-venv" / "bin" / "python")]
    probe = "from importlib.metadata import version; import tvm; assert version('apache-tvm').startswith('0.27')"
    for python in filter(None, candidates):
        if Path(python).exists() and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
            return python
    return None


@pytest.fixture(scope="module")
def tvm027():
    python = _python_027()
    if python is None:
        pytest.skip("apache-tvm 0.27 is not installed (set MODELCHECK_TVM027_PYTHON, or bash benchmarks/corpus_setup.sh)")

    def run(paths: list[Path]) -> dict[str, str]:
        proc = subprocess.run([python, str(PARSE_027), *map(str, paths)], capture_output=True, text=True,
                              timeout=600, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return {Path(k).resolve(): v for k, v in json.loads(proc.stdout.splitlines()[-1]).items()}

    return run


def test_tvm027_parser(tvm027):
    names = sorted(recorded())
    got = tvm027([KERNELS / "real" / n for n in names])
    diffs = []
    for name in names:
        status = got[(KERNELS / "real" / name).resolve()]
        status = status if status in ("ok", "ok-unchecked") else "rejects"
        if status != recorded()[name][TVM027]:
            diffs.append(f"{name}: apache-tvm 0.27 says {got[(KERNELS / 'real' / name).resolve()]!r}, "
                         f"recorded {recorded()[name][TVM027]!r}")
    assert not diffs, "\n".join(diffs)


def test_tvm027_parser_rejects_a_broken_kernel(tvm027, tmp_path):
    """Negative control: the 0.27 check is not vacuous (an operand of the wrong kind is refused)."""
    text = (KERNELS / "real" / "tma_ring2_pre.py").read_text(encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text(text.replace('T.uint32(1024), "arrive"', 'T.uint32(1024), T.uint32(1024), T.uint32(1024), "arrive"'))
    lowered = tmp_path / "lowered_broken.py"
    lowered.write_text((KERNELS / "real" / "mbar_ring2_lowered.py").read_text(encoding="utf-8")
                       .replace('T.ptx.fence("mbarrier_init"', 'T.ptx.fence(T.uint32(7), "mbarrier_init"'))
    got = tvm027([broken, lowered])
    assert all(v.startswith("error:") for v in got.values()), got
