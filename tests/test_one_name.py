"""One meaning per name: no two of the package's modules share a name, and a game's module is named
as its game is (the registry's and the log's name), so ``games/<name>.py`` is where a name leads."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from econarena_evals.games import GAMES

from conftest import ROOT

PACKAGE = ROOT / "econarena_evals"


def module_names(package: Path) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        if path.name != "__init__.py":
            seen[path.stem].append(path.relative_to(package).as_posix())
    return seen


def test_no_two_modules_of_the_package_share_a_name():
    twice = {name: paths for name, paths in module_names(PACKAGE).items() if len(paths) > 1}
    assert not twice, f"module names used twice: {twice}"


def test_the_check_sees_a_name_used_twice(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "players.py").write_text("")
    assert module_names(tmp_path)["players"] == ["a/players.py", "b/players.py"]


def test_each_game_module_is_named_as_its_game():
    assert len(GAMES) >= 3
    for name, game in GAMES.items():
        assert Path(game.__file__).stem == name == game.NAME
