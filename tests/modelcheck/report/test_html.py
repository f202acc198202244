"""The HTML report (issue 16 item 8), opened in headless Chromium: it renders the timeline and every finding
(the page's own check marks `data-rendered`), the screenshot is not blank, and the console shows no error.
Skipped only when no Chromium is installed (.ci/run installs `chromium` and `graphviz`)."""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib

import pytest

from modelcheck.cli import main
from modelcheck.report import layout
from tests.manifest import KERNELS

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
KERNEL_FILES = [str(KERNELS / "hang_wrong_parity.py"), str(KERNELS / "producer_overtaking.py")]


def _html(tmp_path, capsys, *args) -> str:
    out = tmp_path / "report.html"
    rc = main([*args, "--html", str(out)])
    capsys.readouterr()
    assert rc in (0, 1), rc
    return str(out)


def test_html_has_a_section_per_finding_with_source_and_path(tmp_path, capsys):
    page = open(_html(tmp_path, capsys, "check", *KERNEL_FILES)).read()
    assert page.count('class="finding"') == 3              # 2 + 1 findings, each once
    assert "32 |" in page and "T.cuda.mbarrier_wait(empty.ptr_to([0])" in page   # a source excerpt
    assert "wait-for cycle: warp 0 waits for warp 1" in page                        # the happens-before answer
    assert page.count('class="timeline"') >= 2
    if layout.dot_available():
        assert "<svg" in page and "laid out by Graphviz dot" in page


def test_without_graphviz_the_page_falls_back(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(layout, "dot_available", lambda: False)
    page = open(_html(tmp_path, capsys, "check", KERNEL_FILES[0])).read()
    assert "Graphviz `dot` is not installed" in page and "<svg" in page and "<ol>" in page


def test_prove_html_has_the_proof_summary(tmp_path, capsys):
    page = open(_html(tmp_path, capsys, "prove", str(KERNELS / "kda_ring_m_o_single.py"), "--symbolic", "NC")).read()
    assert "Proof summary" in page and "refuted" in page and "counterexample: NC=2" in page


def _png_is_not_blank(path) -> bool:
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    return len(set(raw[::97])) > 8        # many distinct byte values: text and graphs, not one colour


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_report(tmp_path, capsys):
    page = _html(tmp_path, capsys, "check", *KERNEL_FILES)
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "shot.png"
    run = subprocess.run(base + ["--enable-logging=stderr", "--v=0", "--window-size=1400,2400",
                                 f"--screenshot={shot}", f"file://{page}"], capture_output=True, text=True, timeout=120)
    assert shot.exists(), run.stderr[-2000:]
    assert _png_is_not_blank(shot)
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not [line for line in console if re.search(r"error|Uncaught", line, re.I)], console
    dom = subprocess.run(base + ["--dump-dom", f"file://{page}"], capture_output=True, text=True, timeout=120).stdout
    m = re.search(r'data-rendered="timelines:(\d+) findings:(\d+) ok:(\w+)"', dom)
    assert m, dom[:500]
    assert int(m[1]) >= 2 and int(m[2]) == 3 and m[3] == "true"
