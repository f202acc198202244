"""Parse kernel files with apache-tvm 0.27's TVMScript parser; run in that package's interpreter.

    PYTHON_WITH_TVM_0_27 tests/conformance/tvm027_parse.py FILE...

prints one JSON object: {file: status}.  A file that imports `tvm.script` (the authored form) is run
as a module (its decorators parse it); a printed file (the import header commented out) goes through
`tvm.script.from_source`.  Status: "ok"; "ok-unchecked" when the parser accepts the text only with
`check_well_formed=False` (the lowered form's printed `n = T.int64()` dims are undefined variables to
TVM's well-formedness check); or "error: <first line of the parser's message>".
apache-tvm's native library cannot share a process with apache-tvm-tirx's, hence a separate interpreter.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import sys


def _message(err: Exception) -> str:
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    return "error: " + (lines[0] if lines else type(err).__name__)


def parse_status(path: str) -> str:
    import tvm

    text = open(path, encoding="utf-8").read()
    if re.search(r"^from tvm_tirx\b", text, re.MULTILINE):
        return "error: imports tvm_tirx (the apache-tvm-tirx authoring form)"
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        if re.search(r"^from tvm\.script import", text, re.MULTILINE):
            try:
                runpy.run_path(path)
                return "ok"
            except Exception as err:  # noqa: BLE001 - whatever the real parser raises
                return _message(err)
        try:
            tvm.script.from_source(text)
            return "ok"
        except Exception as err:  # noqa: BLE001
            first = err
        try:
            tvm.script.from_source(text, check_well_formed=False)
            return "ok-unchecked"
        except Exception:  # noqa: BLE001
            return _message(first)


if __name__ == "__main__":
    print(json.dumps({p: parse_status(p) for p in sys.argv[1:]}))
