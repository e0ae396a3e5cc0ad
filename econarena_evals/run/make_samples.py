"""Write the shipped samples files from the registry's own args, with a fixed seed.

    python -m econarena_evals.run.make_samples [--registry registry] [--check]

Each samples file ``<name>_<split>.jsonl`` named by an ``econarena.<cell>.<split>.v0`` entry gets
``SESSIONS[split]`` sessions drawn with ``random.Random(f"{SEED}:{name}:{split}")``: the files are
reproducible byte for byte, and ``--check`` verifies that the files on disk are exactly what this
script makes. Cells may share a file (opponent cells reuse their base cell's sessions) only if
they agree on every parameter the draw uses.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import yaml

from ..games import cell as cell_of
from ..games import check_cell, draw_fields, draw_session, load

SEED = 1735  # arXiv:2401.01735
SESSIONS = {"dev": 20, "test": 100}
DEFAULT_REGISTRY = Path(__file__).resolve().parents[2] / "registry"


def game_cell(args: dict):
    """The cell of a registry entry's args; a game outside the package loaded by its import path (the
    registry is the user's own, trusted to name a module to import)."""
    load(args.get("game"))
    return cell_of(args)


def cell_specs(registry: Path) -> dict[tuple[str, str], dict]:
    """(cell, split) -> args of every EconArena eval entry in the registry's YAML files."""
    specs = {}
    for path in sorted((registry / "evals").glob("*.yaml")):
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for name, spec in entries.items():
            parts = name.split(".")
            if (
                len(parts) == 4
                and isinstance(spec, dict)
                and spec.get("class", "").startswith("econarena_evals.")
                and parts[2] in SESSIONS
            ):
                specs[(parts[1], parts[2])] = spec["args"]
    return specs


def samples_files(registry: Path) -> dict[str, tuple[str, dict]]:
    """samples_jsonl -> (split, args), checking that cells sharing a file agree on the draw."""
    files: dict[str, tuple[str, dict]] = {}
    for (cell, split), args in sorted(cell_specs(registry).items()):
        path = args["samples_jsonl"]
        if path in files:
            other, mine = draw_fields(game_cell(files[path][1])), draw_fields(game_cell(args))
            diff = [f for f in sorted(set(other) | set(mine)) if other.get(f) != mine.get(f)]
            if diff:
                raise SystemExit(f"{cell}.{split} shares {path} but differs in {diff}")
            continue
        files[path] = (split, args)
    return files


def render(path: str, split: str, args: dict) -> str:
    config = check_cell(game_cell(args))
    name = Path(path).name[: -len(f"_{split}.jsonl")]
    rng = random.Random(f"{SEED}:{name}:{split}")
    lines = [json.dumps(draw_session(rng, i, config).to_sample()) for i in range(SESSIONS[split])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", type=Path, default=DEFAULT_REGISTRY)
    parser.add_argument("--check", action="store_true", help="fail if a file differs from what would be written")
    opts = parser.parse_args(argv)
    stale = []
    for samples, (split, args) in samples_files(opts.registry).items():
        path = opts.registry / "data" / samples
        text = render(samples, split, args)
        if opts.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({SESSIONS[split]} sessions)")
    if stale:
        print("out of date (run python -m econarena_evals.run.make_samples):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
