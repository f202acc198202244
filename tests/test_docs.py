"""docs/: the finding-kind pages (the future `modelcheck explain KIND`, issue 18) keep one structure and
name registered kinds; docs/reference-differences.md is linked from the README and names real kernels."""
from __future__ import annotations

import re
from pathlib import Path

from modelcheck.common import findings
from tests.manifest import load_manifest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SECTIONS = ["Meaning", "Example", "Fix"]
OPTIONAL = "Differences from the reference harness"


def _kind_pages():
    pages = sorted((DOCS / "kinds").glob("*.md"))
    assert pages
    return pages


def test_kind_pages_have_the_explain_structure():
    for page in _kind_pages():
        lines = _outside_code(page.read_text().splitlines())
        assert lines[0] == f"# {page.stem}", page
        assert page.stem in findings.KINDS, page.stem
        heads = [line[3:] for line in lines if line.startswith("## ")]
        assert heads[:3] == SECTIONS and heads[3:] in ([], [OPTIONAL]), (page, heads)
        assert not [line for line in lines[1:] if line.startswith("# ")], page


def _outside_code(lines):
    """The lines outside ``` fenced blocks (a `# ...` comment in a code example is not a heading)."""
    out, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


def test_docs_name_existing_kernels_and_pages():
    kernels = load_manifest()["kernels"]
    for page in [DOCS / "reference-differences.md", *_kind_pages()]:
        text = page.read_text()
        for path in re.findall(r"kernels/(\w+)\.py", text):
            assert (ROOT / "kernels" / f"{path}.py").exists(), (page, path)
        for link in re.findall(r"\]\(([^)#]+\.md)\)", text):
            assert (page.parent / link).exists(), (page, link)
    table = [line for line in (DOCS / "reference-differences.md").read_text().splitlines()
             if re.match(r"\| \d", line)]
    assert len(table) == 8              # the eight rows (nine checker verdicts)
    for row in table:
        name = re.search(r"`(\w+)`", row.split("|")[2]).group(1)
        assert name in kernels, name


def test_readme_links_the_reference_differences():
    assert "(docs/reference-differences.md)" in (ROOT / "README.md").read_text()
