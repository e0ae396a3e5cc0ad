"""docs/architecture.md lists every module of the package once, in its folder, and nothing that is gone."""
from __future__ import annotations

import re

from conftest import ROOT

PACKAGE = ROOT / "econarena_evals"


def listed() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## The modules", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    return [p for cell in rows for p in re.findall(r"`([a-z_]+/[a-z_]+\.(?:py|json))`", cell)]


def test_every_module_is_listed_once_and_every_listed_one_exists():
    names = listed()
    modules = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if p.parent != PACKAGE and (p.name != "__init__.py" or p.parent.name == "games"))
    assert sorted(set(names)) == sorted(set(modules) | {n for n in names if n.endswith(".json")})
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
