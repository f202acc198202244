"""The finding-kind pages (`docs/kinds/KIND.md`): `modelcheck explain KIND` prints one, and SARIF rules
carry the same text as their help.

The pages live in the repository's docs/kinds/; a wheel ships them as `modelcheck/report/kind_pages/`
(setup.py copies them at build time), so an installed modelcheck finds them without the source tree.
"""
from __future__ import annotations

from pathlib import Path

from ..common import findings as F

_HERE = Path(__file__).resolve().parent
SEARCH = (_HERE / "kind_pages", _HERE.parent.parent / "docs" / "kinds")


def pages_dir() -> Path | None:
    for d in SEARCH:
        if d.is_dir() and any(d.glob("*.md")):
            return d
    return None


def page_names() -> list[str]:
    d = pages_dir()
    return sorted(p.stem for p in d.glob("*.md")) if d else []


def page(kind: str) -> str | None:
    """The page of `kind` (Markdown), or None when it has none."""
    d = pages_dir()
    if d is None or not kind.replace("_", "").isalnum():
        return None
    p = d / f"{kind}.md"
    return p.read_text(encoding="utf-8") if p.is_file() else None


def help_text(kind: str) -> str:
    """What a rule's help says: the kind's page, else its registered hint."""
    text = page(kind)
    if text:
        return text
    info = F.kind(kind)
    return (f"# {kind}\n\n## Meaning\n\nA finding of kind {kind} (status {info.status}).\n\n## Fix\n\n"
            f"{info.hint or 'See the finding message and its evidence.'}\n")


def summary(kind: str) -> str:
    """The first paragraph of the page's Meaning section (one line), else the hint."""
    text = page(kind)
    if text:
        body = text.partition("## Meaning")[2].strip()
        para = body.split("\n\n", 1)[0]
        if para and not para.startswith("#"):
            return " ".join(para.split())
    return F.kind(kind).hint or kind.replace("_", " ")
