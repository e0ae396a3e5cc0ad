"""What every game's prompt shares, and reading a prompt back for the built-in players.

A prompt is a system message plus one user message, in our own words, reconstructing the paper's
(Guo et al. 2024, App. A). The user message states the rules, the number of players, the seat's
own number, the range or its assets and private value, and asks for the JSON answer the authors'
package asks for (understanding, choice, reason). Each game's own template and history renderer
live in its module under ``games/``; history shows parsed numbers only, never another seat's text.

``games.read_prompt`` is the inverse, for the built-in players and your own: each game recognises
its own template (``Game.read_prompt``) and returns its own ``Facts``, a ``PromptFacts`` with the
game's fields added (docs/players.md lists them).
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

SYSTEM = (
    "You are a player in an economics game. Read the rules carefully and answer with "
    "the JSON object you are asked for."
)

ANSWER_FORMAT = (
    "Answer with a JSON object only, with these keys:\n"
    '- "understanding": string, your brief understanding of the game\n'
    '- "choice": number, {what}\n'
    '- "reason": string, the brief reason for your choice\n'
    # No example number: a number shown here would anchor the choice.
    'Shape: {{"understanding": "...", "choice": <number>, "reason": "..."}}'
)


def fmt(x: Optional[float]) -> str:
    """Numbers as a person writes them, exact enough to round-trip (repr of the float)."""
    if x is None:
        return "invalid"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


class SplitTemplate:
    """A game's template with the fields that stay put across a session filled in once.

    ``fill(*values)`` (the values of ``open_fields``, in that order) is the string
    ``template.format(**fixed, **open values)`` gives, joined from the pieces between the open
    fields instead: a seat's prompt is rebuilt 2 times a call (the run's plan, then the call) and
    formatting the whole template, numbers and answer format included, was most of its cost.
    Each game keeps one per session's fixed values (``functools.lru_cache(typed=True)``: ``5``
    and ``5.0`` format differently).
    """

    def __init__(self, template: str, open_fields: Sequence[str], fixed: dict[str, Any]) -> None:
        pieces, where, current = [], [], []
        for literal, name, spec, conversion in string.Formatter().parse(template):
            current.append(literal)
            if name is None:
                continue
            if spec or conversion or not name.isidentifier():
                raise ValueError(f"a prompt template field is a plain name: {{{name}}}")
            if name in open_fields:
                pieces.append("".join(current))
                where.append(open_fields.index(name))
                current = []
            else:
                current.append(format(fixed[name]))
        pieces.append("".join(current))
        self.pieces, self.where = tuple(pieces), tuple(where)

    def fill(self, *values: Any) -> str:
        pieces, out = self.pieces, [self.pieces[0]]
        for k, at in enumerate(self.where):
            out.append(format(values[at]))
            out.append(pieces[k + 1])
        return "".join(out)


def messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class PastRun:
    """What a later prompt may show of an earlier run: parsed numbers, never raw text. Each game's
    ``PastRun`` adds what its history states besides the actions and the winners."""

    run: int  # 1-based, as the prompts count runs
    actions: tuple[Optional[float], ...]  # per seat; None = invalid
    winners: tuple[int, ...]


def players_list(seats: Sequence[int]) -> str:
    return ", ".join(f"Player {s}" for s in seats) if seats else "nobody"


# where a prompt's history (other runs' numbers) starts: what precedes it is the seat's own run
HISTORY_HEADING = "Results of the last "


def history_block(past: Sequence[PastRun], heading: str, describe: Callable[[PastRun], str]) -> str:
    if not past:
        return ""
    lines = [f"\n{HISTORY_HEADING}{len(past)} run(s), oldest first{heading}:"]
    lines += [f"- Run {p.run}: {describe(p)}" for p in past]
    return "\n".join(lines) + "\n"


def actions_list(p: PastRun) -> str:
    return "; ".join(f"Player {i + 1}: {fmt(a)}" for i, a in enumerate(p.actions))


# ---- reading a prompt back (for the built-in players) ----

NUM = r"(-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)"
_SEAT = re.compile(r"You are Player (\d+)")
_RUN = re.compile(r"This is run (\d+) of (\d+)")


@dataclass(frozen=True)
class PromptFacts:
    """What every game's prompt states; each game's ``Facts`` adds its own (docs/players.md lists them)."""

    game: str  # the name of the game in the registry (``econarena_evals.games.GAMES``)
    seat: int
    n: int  # players at the table
    run: int  # 1-based
    runs: int
    upper: float  # the top of the valid range [0, upper]
    value: Optional[float] = None  # the seat's private value, in a game that gives each seat one


def prompt_text(prompt: Union[str, Sequence[Any]]) -> str:
    """The text of a prompt as a completion fn receives it: a string or chat messages."""
    if isinstance(prompt, str):
        return prompt
    if not isinstance(prompt, (list, tuple)):  # a hand-edited log's prompt: no text
        return ""
    return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))


def float_or_none(s: str) -> Optional[float]:
    return None if s == "invalid" else float(s)


def seat_and_run(text: str) -> tuple[int, int, int]:
    """(seat, run, runs) as every game's prompt states them. Raises ValueError if absent."""
    seat, run = _SEAT.search(text), _RUN.search(text)
    if seat is None or run is None:
        raise ValueError("not an EconArena prompt: no seat or run line")
    return int(seat.group(1)), int(run.group(1)), int(run.group(2))
