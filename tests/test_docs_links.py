"""Every relative link in README.md and docs/*.md points to a file that exists (reads files only)."""
from __future__ import annotations

import re

from conftest import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(path) -> str:
    """The text of a page outside its fenced code blocks (a fence is a line that starts with ```)."""
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return "\n".join(out)


def pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def relative_links(page):
    text = prose(page)  # links inside code blocks are not links
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


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path) -> set:
    text = prose(path)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_every_link_to_a_heading_finds_it():
    broken = []
    for page in pages():
        for target in LINK.findall(prose(page)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or "#" not in target:
                continue
            file, anchor = target.split("#", 1)
            path = page if not file else page.parent / file
            if path.suffix == ".md" and path.exists() and anchor not in anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
