"""The docs' table of what ``read_prompt`` returns lists what the games themselves define: every
game's name in its ``game`` row, and every field of every game's ``Facts`` as a row, so a game
added to ``GAMES`` is held to being documented, and the table names nothing no game has."""
from __future__ import annotations

import dataclasses
import re

from econarena_evals.core.prompts import PromptFacts
from econarena_evals.games import GAMES

from conftest import ROOT


def facts_table() -> dict[str, str]:
    """field -> its row, from docs/players.md's table under "What `read_prompt` returns"."""
    text = (ROOT / "docs" / "players.md").read_text(encoding="utf-8")
    section = text.split("## What `read_prompt` returns", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `"):
            for name in re.findall(r"`(\w+)`", cells[0]):
                rows[name] = line
    return rows


def test_the_read_prompt_table_lists_every_game_and_every_field_it_reads():
    rows = facts_table()
    fields = {f.name for game in GAMES.values() for f in dataclasses.fields(getattr(game, "Facts", PromptFacts))}
    assert len(fields) > len(dataclasses.fields(PromptFacts))  # the games' own fields, not only the shared
    assert set(rows) == fields
    named = set(re.findall(r'"(\w+)"', rows["game"]))
    assert named == set(GAMES)
