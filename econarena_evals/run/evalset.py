"""``python -m econarena_evals.run.evalset NAME``: the evals of an EconArena eval set, one per line.

Read from the packaged registry (YAML, ``safe_load``) without importing evals, so a script can
run each member with its own ``oaieval --record_path`` (``oaievalset`` cannot choose log paths).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import yaml

from ..fns.registry_files import packaged_registries


def registry_roots() -> list[Path]:
    return packaged_registries("eval_sets")


def members(name: str, roots: Optional[list[Path]] = None) -> list[str]:
    for root in roots or registry_roots():
        for path in sorted((root / "eval_sets").glob("*.yaml")):
            entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if name in entries:
                return [str(e) for e in entries[name]["evals"]]
    raise KeyError(f"no eval set {name!r} in {', '.join(map(str, roots or registry_roots()))}")


def known_sets(roots: Optional[list[Path]] = None) -> list[str]:
    """The names of every eval set in the registry roots."""
    names: list[str] = []
    for root in roots or registry_roots():
        for path in sorted((root / "eval_sets").glob("*.yaml")):
            names += list(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    return names


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m econarena_evals.run.evalset NAME", file=sys.stderr)
        return 2
    try:
        print("\n".join(members(args[0])))
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
