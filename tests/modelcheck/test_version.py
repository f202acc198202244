"""The version is written once (setup.cfg) and read from the installed metadata."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import modelcheck


def test_version_comes_from_the_metadata():
    assert modelcheck.__version__ == version("modelcheck")
    out = subprocess.run([sys.executable, "-m", "modelcheck", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"modelcheck {version('modelcheck')}"
