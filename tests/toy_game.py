"""A game from outside the package, set up in a folder of the test's own: its module
(``tests/fixtures/toy_game/public_goods.py``, copied), its registry entry and its samples, which the
package's own generator draws. Nothing of the package is edited; the front ends find the game by
the eval's ``game`` arg, its import path, with the folder on ``PYTHONPATH``."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "tests" / "fixtures" / "toy_game" / "public_goods.py"
GAME = "public_goods"  # the module's import path, its NAME, and the cell's name
SESSIONS = 20  # make_samples' dev split

REGISTRY_YAML = f"""\
econarena.{GAME}:
  id: econarena.{GAME}.dev.v0
  description: a public-goods contribution game, from outside the package
econarena.{GAME}.dev.v0:
  class: econarena_evals.run.eval:EconArena
  args:
    samples_jsonl: {GAME}_dev.jsonl
    game: {GAME}
    runs: 4
    multiplier: 1.6
"""


def write_toy_game(folder: Path, python: str = sys.executable, env: dict[str, str] | None = None) -> tuple[Path, Path]:
    """(the folder to put on PYTHONPATH, the registry root): the module, its registry entry, and the
    samples drawn by ``python -m econarena_evals.run.make_samples --registry``."""
    code, registry = folder / "games", folder / "registry"
    code.mkdir(parents=True)
    shutil.copy(MODULE, code / MODULE.name)
    (registry / "evals").mkdir(parents=True)
    (registry / "evals" / f"{GAME}.yaml").write_text(REGISTRY_YAML, encoding="utf-8")
    done = subprocess.run([python, "-m", "econarena_evals.run.make_samples", "--registry", str(registry)],
                          env={**(env or {}), "PYTHONPATH": with_path(code, env)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (registry / "data" / f"{GAME}_dev.jsonl").is_file(), done.stdout
    return code, registry


def with_path(code: Path, env: dict[str, str] | None) -> str:
    """PYTHONPATH with the game's folder first."""
    return ":".join(filter(None, [str(code), (env or {}).get("PYTHONPATH")]))


def samples(registry: Path) -> list[dict[str, Any]]:
    lines = (registry / "data" / f"{GAME}_dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]
