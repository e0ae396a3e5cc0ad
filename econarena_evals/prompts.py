"""The decision prompts, in our own words, reconstructing the paper's (Guo et al. 2024, App. A).

A prompt is a system message plus one user message. The user message states the rules, the
number of players, the seat's own number, the range or its assets and private value, the
prize, and asks for the JSON answer the authors' package asks for (understanding, choice,
reason). History shows parsed numbers only, never another seat's text.

``read_prompt`` is the inverse used by the built-in players: they read the same text a model
reads, so the phrases it looks for are defined right here, next to the templates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
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

BEAUTY = """\
You are Player {seat} in a number-guessing game with {n} players, you included. This is run {run} of {runs}; every run is scored on its own.

Rules:
- Each player privately chooses a real number between 0 and {c_bar}, both inclusive. Nobody sees the others' choices before choosing.
- The target is two thirds of the average of all valid choices.
- The player whose number is closest to the target wins the prize of {prize}. If several players are equally close, they split the prize equally. Everyone else gets 0.
- A choice outside [0, {c_bar}], or an answer not in the format below, breaks the rules: it is invalid, does not count towards the average, and cannot win.
- Your goal is first to maximize your chance of winning the prize, and second to maximize your share of it.
{history}
{answer}"""

AUCTION = """\
You are Player {seat} of {n} bidders in a second-price sealed-bid auction for one item. This is run {run} of {runs}; every run is scored on its own, and your assets are reset to {assets} at the start of each run.

Your private value for the item in this run is {value}. Each bidder has their own private value; you know only yours.

Rules:
- Each bidder privately submits one bid, a real number between 0 and {assets} (your assets), both inclusive.
- The highest valid bid wins the item. If several bids tie for highest, the bidder with the lowest player number wins.
- The winner pays the second-highest valid bid (0 if nobody else bid validly) and receives the item.
- Payoffs: the winner gets assets - price + value; every other valid bidder keeps their assets ({assets}).
- A bid outside [0, {assets}], or an answer not in the format below, breaks the rules: that bidder pays an entrance fee of {fee} (payoff {assets} - {fee}) and takes no part in the auction.
- Your goal is to maximize your payoff.
{history}
{answer}"""


def fmt(x: Optional[float]) -> str:
    """Numbers as a person writes them, exact enough to round-trip (repr of the float)."""
    if x is None:
        return "invalid"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


@dataclass(frozen=True)
class PastRun:
    """What a later prompt may show of an earlier run: parsed numbers, never raw text."""

    run: int  # 1-based, as the prompts count runs
    actions: tuple[Optional[float], ...]  # per seat; None = invalid
    winners: tuple[int, ...]
    average: Optional[float] = None  # beauty: mean of valid choices
    target: Optional[float] = None  # beauty
    price: Optional[float] = None  # auction


def _players(seats: Sequence[int]) -> str:
    return ", ".join(f"Player {s}" for s in seats) if seats else "nobody"


def _history(past: Sequence[PastRun], heading: str, describe: Callable[[PastRun], str]) -> str:
    if not past:
        return ""
    lines = [f"\nResults of the last {len(past)} run(s), oldest first{heading}:"]
    lines += [f"- Run {p.run}: {describe(p)}" for p in past]
    return "\n".join(lines) + "\n"


def _actions(p: PastRun) -> str:
    return "; ".join(f"Player {i + 1}: {fmt(a)}" for i, a in enumerate(p.actions))


def beauty_history(past: Sequence[PastRun]) -> str:
    return _history(past, "", lambda p: (
        f"choices {_actions(p)}. Average of valid choices: {fmt(p.average)}. "
        f"Target: {fmt(p.target)}. Winner(s): {_players(p.winners)}."
    ))


def auction_history(past: Sequence[PastRun]) -> str:
    return _history(past, " (values stayed private)", lambda p: (
        f"bids {_actions(p)}. Winner: {_players(p.winners)}. "
        f"Price paid: {fmt(p.price) if p.price is not None else 'none'}."
    ))


def beauty_prompt(*, seat: int, n: int, run: int, runs: int, c_bar: float, prize: float,
                  past: Sequence[PastRun] = ()) -> list[dict[str, str]]:
    user = BEAUTY.format(
        seat=seat, n=n, run=run, runs=runs, c_bar=fmt(c_bar), prize=fmt(prize),
        history=beauty_history(past),
        answer=ANSWER_FORMAT.format(what="the number you choose"),
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def auction_prompt(*, seat: int, n: int, run: int, runs: int, value: float, assets: float, fee: float,
                   past: Sequence[PastRun] = ()) -> list[dict[str, str]]:
    user = AUCTION.format(
        seat=seat, n=n, run=run, runs=runs, value=fmt(value), assets=fmt(assets), fee=fmt(fee),
        history=auction_history(past),
        answer=ANSWER_FORMAT.format(what="your bid"),
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


# ---- reading a prompt back (for the built-in players) ----

_NUM = r"(-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)"
_SEAT = re.compile(r"You are Player (\d+)")
_N_BEAUTY = re.compile(r"game with (\d+) players")
_N_AUCTION = re.compile(r"of (\d+) bidders")
_RUN = re.compile(r"This is run (\d+) of (\d+)")
_RANGE = re.compile(r"chooses a real number between 0 and " + _NUM)
_VALUE = re.compile(r"Your private value for the item in this run is " + _NUM)
_ASSETS = re.compile(r"a real number between 0 and " + _NUM + r" \(your assets\)")
_AVERAGE = re.compile(r"Average of valid choices: (invalid|" + _NUM[1:-1] + r")\.")
_PAST_BIDS = re.compile(r"- Run \d+: bids (.*?)\. Winner:")


@dataclass(frozen=True)
class PromptFacts:
    game: str  # "beauty" | "auction"
    seat: int
    n: int
    run: int
    runs: int
    upper: float  # c_bar, or assets
    value: Optional[float] = None  # auction
    past_averages: tuple[Optional[float], ...] = field(default=())  # beauty, oldest first
    past_bids: tuple[tuple[Optional[float], ...], ...] = field(default=())  # auction, oldest first


def prompt_text(prompt: Union[str, Sequence[Any]]) -> str:
    """The text of a prompt as a completion fn receives it: a string or chat messages."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))


def _float_or_none(s: str) -> Optional[float]:
    return None if s == "invalid" else float(s)


def read_prompt(prompt: Union[str, Sequence[Any]]) -> PromptFacts:
    """The game facts stated in a prompt made by this module. Raises ValueError on any other text."""
    text = prompt_text(prompt)
    seat, run = _SEAT.search(text), _RUN.search(text)
    if seat is None or run is None:
        raise ValueError("not an EconArena prompt: no seat or run line")
    value = _VALUE.search(text)
    if value is not None:
        assets, n = _ASSETS.search(text), _N_AUCTION.search(text)
        if assets is None or n is None:
            raise ValueError("auction prompt without assets or bidder count")
        past_bids = tuple(
            tuple(_float_or_none(part.split(": ", 1)[1]) for part in m.group(1).split("; "))
            for m in _PAST_BIDS.finditer(text)
        )
        return PromptFacts("auction", int(seat.group(1)), int(n.group(1)), int(run.group(1)),
                           int(run.group(2)), float(assets.group(1)), float(value.group(1)),
                           past_bids=past_bids)
    upper, n = _RANGE.search(text), _N_BEAUTY.search(text)
    if upper is None or n is None:
        raise ValueError("beauty-contest prompt without range or player count")
    averages = tuple(_float_or_none(m.group(1)) for m in _AVERAGE.finditer(text))
    return PromptFacts("beauty", int(seat.group(1)), int(n.group(1)), int(run.group(1)),
                       int(run.group(2)), float(upper.group(1)), past_averages=averages)
