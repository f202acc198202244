"""Builds the wheel with the finding-kind pages (docs/kinds/*.md) inside the package, as
modelcheck/report/kind_pages/, so `modelcheck explain KIND` and SARIF rule help work from an
installed modelcheck; an editable install reads docs/kinds/ directly (modelcheck.report.kinds)."""
from pathlib import Path
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithKindPages(build_py):
    def run(self):
        super().run()
        src = Path(__file__).resolve().parent / "docs" / "kinds"
        dst = Path(self.build_lib) / "modelcheck" / "report" / "kind_pages"
        dst.mkdir(parents=True, exist_ok=True)
        for page in sorted(src.glob("*.md")):
            shutil.copyfile(page, dst / page.name)


setup(cmdclass={"build_py": BuildWithKindPages})
