"""A game owns its parameters: no game's name or field is spelled in the package outside ``games/``.

The names come from the games themselves (their ``NAME``, their modules, the fields of their
``Params``, ``Draw``, ``Facts``, ``PastRun`` and ``Outcome`` beyond the shared types', and the keys
their run events hold), so a game added to ``games.GAMES`` is held to it too. Every other module's
source is read with ``ast``: identifiers, attribute, argument and keyword names, and string literals.
"""
from __future__ import annotations

import ast
import dataclasses
import random
from pathlib import Path

from econarena_evals.core.outcome import RunOutcome
from econarena_evals.core.prompts import PastRun, PromptFacts
from econarena_evals.games import GAMES, cell, draw_session, run_event

from conftest import ROOT

PACKAGE = ROOT / "econarena_evals"

# Ordinary words that a game also uses as a field name ("values", "target", "price"): as a local name
# or an argument they are the word, not the game's field, which is reached as a string key or an
# attribute. Python's own uses of them are allowed too.
PLAIN_WORDS = {"values", "target", "price"}
METHOD_CALLS = {"values"}  # ``d.values()``
KEYWORDS = {"target"}  # ``threading.Thread(target=...)``

# Left to the module's owner (another branch rewrites it); remove the entry with the fix there.
KNOWN: set[tuple[str, str]] = set()  # (module, word) allowed outside games/: none


def _own_fields(cls: type, base: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} - {f.name for f in dataclasses.fields(base)}


def game_words() -> dict[str, str]:
    """Each game name and field, with the game it belongs to."""
    words: dict[str, str] = {}
    for name, game in GAMES.items():
        words[name] = name
        for module in (game.__name__, game.draw_session.__module__):  # the module, and a shared one it uses
            words[module.rsplit(".", 1)[1]] = name
        fields = {f.name for f in dataclasses.fields(game.Params)}
        fields |= {f.name for f in dataclasses.fields(game.Draw)}
        fields |= _own_fields(game.Facts, PromptFacts) | _own_fields(game.PastRun, PastRun)
        fields |= _own_fields(game.Outcome, RunOutcome)
        config = cell({"game": name})
        session = draw_session(random.Random(0), 0, config)
        outcome = game.score(config, session, 0, [1.0] * config.seats, ["p"] * config.seats)
        event = run_event(outcome, cell="c", session=0, run=0, runs=1, history_runs=0,
                          game_params=game.event_params(config, session, 0))
        fields |= set(game.event_params(config, session, 0)) | set(game.event_result(outcome))
        assert set(event) >= set(game.event_result(outcome))
        words.update({f: name for f in fields})
    return words


def spelled(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, kind, word) of every identifier, attribute, argument and keyword name and string literal."""
    calls_without_args = {id(n.func) for n in ast.walk(tree)
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and not n.args}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append((node.lineno, "name", node.id))
        elif isinstance(node, ast.Attribute):
            if not (node.attr in METHOD_CALLS and id(node) in calls_without_args):
                out.append((node.lineno, "attribute", node.attr))
        elif isinstance(node, ast.arg):
            out.append((node.lineno, "argument", node.arg))
        elif isinstance(node, ast.keyword) and node.arg is not None:
            if node.arg not in KEYWORDS:
                out.append((node.value.lineno, "keyword", node.arg))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.lineno, "definition", node.name))
        elif isinstance(node, ast.alias):
            out += [(getattr(node, "lineno", 0), "import", part) for part in (node.asname or node.name).split(".")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [(node.lineno, "import", part) for part in node.module.split(".")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, "string", node.value))
    return out


def outside_games() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if (PACKAGE / "games") not in p.parents)


def test_no_game_name_or_field_outside_games():
    words = game_words()
    found = []
    for path in outside_games():
        rel = path.relative_to(PACKAGE).as_posix()
        for line, kind, word in spelled(ast.parse(path.read_text(encoding="utf-8"))):
            if word in PLAIN_WORDS and kind in ("name", "argument"):
                continue
            if word in words and (rel, word) not in KNOWN:
                found.append(f"{rel}:{line}: {kind} {word!r} (game {words[word]})")
    assert not found, "\n".join(found)


def test_the_scan_sees_what_it_looks_for():
    """The check can fail: the words are the ones the issue names, and a module spelling them is caught."""
    words = game_words()
    assert {"beauty", "auction", "first_price", "c_bar", "prize", "assets", "fee", "values",
            "past_averages", "past_bids", "values_from", "value_mean", "target", "price"} <= set(words)
    source = ('x = event["c_bar"]\ny = facts.past_bids\nif game == "beauty":\n    pass\n'
              'def f(assets): return d.values(), Thread(target=f)\n')
    seen = {word for _, _, word in spelled(ast.parse(source)) if word in words}
    assert seen == {"c_bar", "past_bids", "beauty", "assets"}
    assert len(outside_games()) > 40 and not any("games" in p.parts for p in outside_games())
