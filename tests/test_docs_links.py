"""Every relative link in README.md and docs/*.md points to a file that exists (reads files only)."""
from __future__ import annotations

import re

from conftest import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")


def pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def relative_links(page):
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # links inside code blocks are not links
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # an URL or an anchor on the same page
        yield target.split("#", 1)[0]


def test_every_relative_link_points_to_an_existing_file():
    broken = [f"{page.relative_to(ROOT)}: {target}" for page in pages()
              for target in relative_links(page) if not (page.parent / target).exists()]
    assert not broken, broken


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in readme]
    assert not missing, missing
