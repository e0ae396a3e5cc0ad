"""The second-price sealed-bid auction, contract §4 (registry and log name: "auction").

The highest valid bid wins (ties go to the lowest seat) and pays the second-highest valid bid.
An invalid bid pays the entrance fee and takes no part. Equilibrium: bid your value (weakly
dominant, so every reference player that reasons at all bids it).
"""
from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Mapping, Optional, Sequence

from ..core.outcome import RunOutcome
from ..core.prompts import ANSWER_FORMAT, SplitTemplate, fmt, messages, seat_and_run
from ..core.sessions import CellConfig, Session
from . import sealed_bid
from .protocol import Move, ReportLabels
from .sealed_bid import (
    Draw,
    Facts,
    Outcome,
    Params,
    PastRun,
    action_range,
    cell_problems,
    draw_session,
    event_params,
    event_result,
    first_run_share,
    history,
    is_valid_bid,
    past_run,
    random_play,
    seat_facts,
    session_from_sample,
    typical_past_run,
    win_share,
)

# Kept from before the games had modules: existing logs and registry entries say "auction".
NAME = "auction"

__all__ = ["Draw", "Outcome", "Facts", "Params", "PastRun", "action_range", "cell_problems", "draw_session",
           "event_params", "event_result", "first_run_share", "history", "is_valid_bid", "past_run", "random_play",
           "seat_facts", "session_from_sample", "typical_past_run", "win_share"]

LABELS = ReportLabels(
    distance="mean distance to equilibrium d (|bid - v| / A)",
    first_run="first-run bid / value",
    first_run_max=1.6,
    **sealed_bid.BROWSER_LABELS,
    human="humans (model: overbidding)",
)


# ---- scoring ----

def ne_payoffs(values: Sequence[float], assets: float) -> list[float]:
    """Payoff of each seat if every seat bid truthfully: the top value wins and pays the second."""
    return sealed_bid.ne_payoffs(values, values, assets, sealed_bid.second_price)


def score_run(
    bids: Sequence[Optional[float]],
    values: Sequence[float],
    assets: float,
    fee: float,
    players: Sequence[str],
) -> RunOutcome:
    """Score one run. ``bids[i]`` is seat i+1's parsed bid, None for an unparseable answer."""
    return sealed_bid.score_run(NAME, bids, values, [float(v) for v in values], assets, fee, players,
                                sealed_bid.second_price)


def score(cell: CellConfig, session: Session, run: int, actions: Sequence[Optional[float]],
          players: Sequence[str]) -> RunOutcome:
    return score_run(actions, session.drawn.values[run], cell.params.assets, cell.params.fee, players)


def outcome_from_event(event: Mapping[str, Any]) -> RunOutcome:
    return sealed_bid.outcome_from_event(NAME, event)


# ---- prompt ----

TEMPLATE = """\
You are Player {seat} of {n} bidders in a second-price sealed-bid auction for one item. This is run {run} of {runs}; every run is scored on its own, and your assets are reset to {assets} at the start of each run.

Your private value for the item in this run is {value}. Each bidder has their own private value; you know only yours.

""" + sealed_bid.RULES

PAYMENT = """\
- The winner pays the second-highest valid bid (0 if nobody else bid validly) and receives the item.
- Payoffs: the winner gets assets - price + value; every other valid bidder keeps their assets ({assets})."""


@lru_cache(maxsize=1024, typed=True)
def _template(n: int, runs: int, assets: float, fee: float) -> SplitTemplate:
    """TEMPLATE with what a cell's prompts share filled in, once per cell."""
    return SplitTemplate(TEMPLATE, ("seat", "run", "value", "history"), dict(
        n=n, runs=runs, assets=fmt(assets), fee=fmt(fee), payment=PAYMENT.format(assets=fmt(assets)),
        answer=ANSWER_FORMAT.format(what="your bid")))


def prompt(*, seat: int, n: int, run: int, runs: int, value: float, assets: float, fee: float,
           past: Sequence[PastRun] = ()) -> list[dict[str, str]]:
    return messages(_template(n, runs, assets, fee).fill(seat, run, fmt(value), history(past)))


def seat_prompt(cell: CellConfig, session: Session, run: int, seat: int,
                past: Sequence[PastRun]) -> list[dict[str, str]]:
    return prompt(seat=seat, n=cell.seats, run=run + 1, runs=cell.runs, value=session.drawn.values[run][seat - 1],
                  assets=cell.params.assets, fee=cell.params.fee, past=past)


def read_prompt(text: str) -> Optional[Facts]:
    if "in a second-price sealed-bid auction" not in text:
        return None
    return sealed_bid.read_facts(NAME, text, *seat_and_run(text))


# ---- reference players ----

def nash(facts: Facts, rng: random.Random) -> Move:
    assert facts.value is not None
    return facts.value, "Bidding my value is a weakly dominant strategy in a second-price auction."


def level_k(facts: Facts, rng: random.Random, k: int) -> Move:
    """Truthful: in a second-price auction bidding one's value is optimal whatever one believes."""
    assert facts.value is not None
    return facts.value, "In a second-price auction bidding my value is optimal."


def cognitive_hierarchy(facts: Facts, rng: random.Random, tau: float, sigma: float) -> Move:
    """A CH step from Poisson(τ): step 0 bids uniformly on [0, A] (random_play), step k >= 1 bids its value
    (level_k): truthful bidding is a best response to any mix of lower steps. σ plays no part."""
    return sealed_bid.cognitive_hierarchy(facts, rng, tau, random_play, level_k)


def shade(facts: Facts, rng: random.Random, share: float) -> Move:
    return sealed_bid.share_of_value(facts, share)


# Laboratory bidders in second-price auctions bid their value only about a third of the time and
# otherwise mostly overbid (Kagel and Levin 1993); we model 1/3 truthful, 2/3 value x (1 + N(0.1, 0.1)).
HUMAN_TRUTHFUL_SHARE = 1 / 3
HUMAN_OVERBID_MEAN, HUMAN_OVERBID_SD = 0.10, 0.10


def human_first_run_share(rng: random.Random) -> float:
    """One draw of the human model, as a fraction of the value."""
    if rng.random() < HUMAN_TRUTHFUL_SHARE:
        return 1.0
    return 1 + rng.gauss(HUMAN_OVERBID_MEAN, HUMAN_OVERBID_SD)


def human(facts: Facts, rng: random.Random) -> Move:
    assert facts.value is not None
    bid = min(facts.upper, max(0.0, human_first_run_share(rng) * facts.value))
    return bid, "I bid about what the item is worth to me, a little more to be sure to win."


# the reference players by kind (``protocol.PLAYER_KINDS``), as the built-in players ask for them
PLAYERS = {"nash": nash, "random": random_play, "level_k": level_k, "cognitive_hierarchy": cognitive_hierarchy,
           "human": human, "shade": shade}


def human_first_run_shares(events: Sequence[Mapping[str, Any]], rng: random.Random, n: int) -> list[float]:
    return [human_first_run_share(rng) for _ in range(n)]


# ---- report ----

def score_event(event: Mapping[str, Any], actions: Sequence[Optional[float]], players: Sequence[str]) -> RunOutcome:
    return score_run(actions, event["values"], float(event["assets"]), float(event["fee"]), players)


def diagnostics(runs: Sequence[Mapping[str, Any]], player: str) -> dict[str, dict[str, Any]]:
    return sealed_bid.bid_diagnostics(runs, player)


def references(plot: str, models: Sequence[str]) -> list[Any]:
    return sealed_bid.bid_references(plot, models, "second_price", "round1_mean", "round-1 second-price bid/value")
