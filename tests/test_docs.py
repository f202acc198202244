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


# --- the design lives in docs/: no citation of a document outside the repository, and every link into docs/
# names a page and a heading that exist

_TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".lark", ".json", ".sh", ".txt"}
_DOC_LINK = re.compile(r"(?:\.\./|\b)((?:docs/)?(?:architecture|semantics|batch|reference-differences)\.md)(#[\w-]+)?")


def _tracked_text_files():
    import subprocess
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in out if Path(p).suffix in _TEXT_SUFFIXES and (ROOT / p).is_file()]


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    heads = [line.lstrip("#").strip() for line in _outside_code(page.read_text().splitlines()) if line.startswith("#")]
    return {"#" + re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


def test_no_citation_of_the_design_document_remains():
    marker = "DESIGN" + " §"          # split so this file does not match itself
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in _tracked_text_files()
            for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            if marker in line or "DESIGN" + ".md" in line]
    assert hits == []


def test_links_into_docs_name_existing_pages_and_headings():
    bad = []
    for p in _tracked_text_files():
        for m in _DOC_LINK.finditer(p.read_text(errors="replace")):
            page = DOCS / Path(m.group(1)).name
            if not page.exists():
                bad.append(f"{p.relative_to(ROOT)}: {m.group(0)}")
            elif m.group(2) and m.group(2) not in _anchors(page):
                bad.append(f"{p.relative_to(ROOT)}: {m.group(0)} (no such heading)")
    assert bad == []
    # the check sees a broken anchor
    assert "#no-such-heading" not in _anchors(DOCS / "semantics.md")
    assert "#happens-before" in _anchors(DOCS / "semantics.md")


def test_every_registered_kind_has_a_page():
    pages = {p.stem for p in _kind_pages()}
    # the static registry: findings.KINDS also gains names that a run reports without registering them
    registered = {k.name for k in findings._KINDS}
    assert sorted(registered - pages) == []
