"""No module reads a prompt's wording back but the ones whose job it is.

A seat call's place (session, run, seat) is its seat tag's, and what a run gave it is its
``econarena_run`` event's: rewording a sentence of a prompt must not break resume or the log
readers. Only the built-in players read a prompt (they read what a model reads, by design: the
games' own ``read_prompt`` and ``games/builtin.py``), and the old-log reader, for logs written
before the tag, which hold nothing else. The check reads the package's syntax trees: any other
module that names a prompt-reading function or holds a prompt sentence (a regex's text) fails.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "econarena_evals"
# the functions that read a prompt's text back (``core.prompts.seat_and_run``, ``games.read_prompt``,
# each game's ``read_prompt``, the auctions' shared ``read_facts``)
READERS = frozenset({"read_prompt", "seat_and_run", "read_facts"})
# sentences every prompt holds: a pattern with one of them reads the prompt's wording
SENTENCES = ("You are Player", "This is run")
ALLOWED = (
    "games/",  # each game reads its own prompt for the built-in players (``Game.read_prompt``)
    "core/prompts.py",  # where ``seat_and_run`` is defined
    "log/old_logs.py",  # logs written before the seat tag: their prompts are all they have
)


def readings(source: str) -> list[str]:
    """Every place ``source`` reads a prompt back: a reader named, or a prompt sentence held."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                else None)
        if isinstance(node, ast.alias):
            name = node.name.rsplit(".", 1)[-1]
        if name in READERS:
            found.append(f"line {node.lineno if hasattr(node, 'lineno') else '?'}: {name}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"line {node.lineno}: {s!r}" for s in SENTENCES if s in node.value]
    return found


def test_no_module_but_the_players_and_the_old_log_reader_reads_a_prompt():
    offenders = {}
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the package, not an empty folder
    for path in modules:
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(ALLOWED):
            continue
        found = readings(path.read_text(encoding="utf-8"))
        if found:
            offenders[where] = found
    assert offenders == {}


def test_the_allowed_modules_do_read_prompts():
    """The allowances are not stale: the old-log reader and the games do read prompts."""
    for where in ("log/old_logs.py", "games/__init__.py", "games/beauty.py", "core/prompts.py"):
        assert readings((PACKAGE / where).read_text(encoding="utf-8")), where


def test_a_planted_reading_is_found():
    planted = {
        "call": "from econarena_evals.games import read_prompt\nrun = read_prompt(text).run\n",
        "attribute": "import econarena_evals.core.prompts as p\nseat = p.seat_and_run(text)[0]\n",
        "game": "def f(game, text):\n    return game.read_prompt(text)\n",
        "regex": "import re\nSEAT = re.compile(r'You are Player (\\d+)')\n",
    }
    for kind, source in planted.items():
        assert readings(source), kind
    clean = "from econarena_evals.log.seat_tag import tagged_seat_key\nkey = tagged_seat_key(data)\n"
    assert readings(clean) == []
