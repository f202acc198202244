"""The README's code samples run as written (issue 16 item 9): the API sample and the pytest-plugin example."""
from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _block_after(heading: str) -> str:
    rest = README[README.index(heading):]
    m = re.search(r"```python\n(.*?)```", rest, re.S)
    assert m, heading
    return m.group(1)


def test_api_sample_runs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)
    code = _block_after("## API in ten lines")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    text = out.getvalue()
    assert "def producer_overtaking_fixed" in text          # print(ir.print_func(func))
    assert "bad.py:1:" in text                               # the ParseError's location


def test_plugin_example_runs_in_a_user_suite(pytester):
    pytester.makepyfile(test_example=_block_after("### In your own test suite"))
    os.symlink(ROOT / "kernels", pytester.path / "kernels")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
