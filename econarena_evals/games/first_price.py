"""The first-price sealed-bid auction, contract §11 (registry and log name: "first_price").

As the second-price auction (values, assets, fee, validity, ties to the lowest seat), except that
the winner pays **its own bid**. The equilibrium is the symmetric Bayesian-Nash bid for n bidders
whose values are independent draws from the cell's value distribution, taken as continuous (a
normal with the cell's mean and sd, truncated to [value_min, value_max]):

    b(v) = v - integral_{value_min}^{v} F(x)^(n-1) dx / F(v)^(n-1),    b(value_min) = value_min.

The prompt states the distribution, so the equilibrium is defined from every seat's own view, and
the built-in players read it back from the text.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ..core.outcome import RunOutcome
from ..core.prompts import ANSWER_FORMAT, NUM, SplitTemplate, fmt, messages, seat_and_run
from ..core.sessions import CellConfig, Session
from . import sealed_bid
from .protocol import Move, ReportLabels
from .sealed_bid import (
    Draw,
    Outcome,
    Params,
    PastRun,
    action_range,
    cell_problems,
    draw_session,
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

NAME = "first_price"

__all__ = ["Draw", "Outcome", "Params", "PastRun", "action_range", "cell_problems", "draw_session", "event_result",
           "first_run_share", "history", "is_valid_bid", "past_run", "random_play", "seat_facts",
           "session_from_sample", "typical_past_run", "win_share"]

LABELS = ReportLabels(
    distance="mean distance to equilibrium d (|bid - b(v)| / A)",
    first_run="first-run bid / value",
    first_run_max=1.6,
    **sealed_bid.BROWSER_LABELS,
    human="humans (model: between the equilibrium bid and the value)",
)

Dist = tuple[float, float, float, float]  # (mean, sd, lowest, highest) of the values


@dataclass(frozen=True)
class Facts(sealed_bid.Facts):
    """An auction's facts, and the value distribution the prompt states."""

    values_from: Optional[Dist] = None  # (mean, sd, lowest, highest)


# ---- the equilibrium bid ----

def truncated_normal_cdf(mean: float, sd: float, lo: float, hi: float) -> Callable[[float], float]:
    """F of N(mean, sd^2) truncated to [lo, hi]; a point mass at the mean when sd is 0."""
    if sd <= 0:
        return lambda x: 0.0 if x < mean else 1.0

    def phi(x: float) -> float:
        return 0.5 * math.erfc(-(x - mean) / (sd * math.sqrt(2.0)))

    base, mass = phi(lo), phi(hi) - phi(lo)
    if not mass > 0:
        raise ValueError(f"N({mean}, {sd}^2) puts no mass on [{lo}, {hi}]")
    return lambda x: 0.0 if x <= lo else 1.0 if x >= hi else min(1.0, max(0.0, (phi(x) - base) / mass))


_NODES, _WEIGHTS = (tuple(float(x) for x in a) for a in np.polynomial.legendre.leggauss(16))
PANELS = 64  # composite 16-point Gauss-Legendre: 1024 CDF evaluations per bid


def bne_bid(v: float, cdf: Callable[[float], float], lo: float, n: int) -> float:
    """The symmetric Bayesian-Nash bid of n bidders with values drawn from ``cdf`` on [lo, ...].

    b(v) = v - integral_lo^v F(x)^(n-1) dx / F(v)^(n-1), by composite Gauss-Legendre quadrature.
    """
    v, lo = float(v), float(lo)
    if v <= lo:
        return lo
    top = cdf(v) ** (n - 1)
    if top <= 0.0:  # no mass below v: nobody else can bid below lo + (v - lo), bid the bottom
        return lo
    width = (v - lo) / PANELS
    total = 0.0
    for p in range(PANELS):
        mid = lo + (p + 0.5) * width
        total += sum(w * cdf(mid + 0.5 * width * x) ** (n - 1) for x, w in zip(_NODES, _WEIGHTS))
    integral = 0.5 * width * total
    return float(min(v, max(lo, v - integral / top)))


@lru_cache(maxsize=65536)
def ne_bid(v: float, mean: float, sd: float, lo: float, hi: float, n: int) -> float:
    """b(v) for the cell's truncated normal; cached per distinct (value, distribution, n)."""
    return bne_bid(v, truncated_normal_cdf(mean, sd, lo, hi), lo, n)


def cell_dist(cell: CellConfig) -> Dist:
    p: Params = cell.params
    return float(p.value_mean), float(p.value_sd), float(p.value_min), float(p.value_max)


def ne_bids(values: Sequence[float], dist: Dist) -> list[float]:
    return [ne_bid(float(v), *dist, len(values)) for v in values]


# ---- scoring ----

def ne_payoffs(values: Sequence[float], dist: Dist, assets: float) -> list[float]:
    """What each seat gets when all bid b(v), through the very rule ``score_run`` applies: the top
    value (lowest seat among ties) wins and pays its own bid, A - b(v1) + v1; A for the others."""
    return sealed_bid.ne_payoffs(values, ne_bids(values, dist), assets, sealed_bid.first_price)


def score_run(
    bids: Sequence[Optional[float]],
    values: Sequence[float],
    dist: Dist,
    assets: float,
    fee: float,
    players: Sequence[str],
) -> RunOutcome:
    """Score one run. ``bids[i]`` is seat i+1's parsed bid, None for an unparseable answer."""
    return sealed_bid.score_run(NAME, bids, values, ne_bids(values, dist), assets, fee, players,
                                sealed_bid.first_price)


def score(cell: CellConfig, session: Session, run: int, actions: Sequence[Optional[float]],
          players: Sequence[str]) -> RunOutcome:
    return score_run(actions, session.drawn.values[run], cell_dist(cell), cell.params.assets, cell.params.fee, players)


def event_params(cell: CellConfig, session: Session, run: int) -> dict[str, Any]:
    """As the second-price auction's, plus the value distribution the equilibrium bids come from."""
    mean, sd, lo, hi = cell_dist(cell)
    return {**sealed_bid.event_params(cell, session, run),
            "value_mean": mean, "value_sd": sd, "value_min": lo, "value_max": hi}


def event_dist(event: Mapping[str, Any]) -> Dist:
    return (float(event["value_mean"]), float(event["value_sd"]), float(event["value_min"]),
            float(event["value_max"]))


def outcome_from_event(event: Mapping[str, Any]) -> RunOutcome:
    return sealed_bid.outcome_from_event(NAME, event)


# ---- prompt ----

TEMPLATE = """\
You are Player {seat} of {n} bidders in a first-price sealed-bid auction for one item. This is run {run} of {runs}; every run is scored on its own, and your assets are reset to {assets} at the start of each run.

Your private value for the item in this run is {value}. Each bidder has their own private value; you know only yours. Every bidder's value, yours included, is drawn independently from a normal distribution with mean {mean} and standard deviation {sd}, rounded down to a whole number and drawn again until it is between {lo} and {hi}.

""" + sealed_bid.RULES

PAYMENT = """\
- The winner pays its own bid and receives the item.
- Payoffs: the winner gets assets - own bid + value; every other valid bidder keeps their assets ({assets})."""


@lru_cache(maxsize=1024, typed=True)
def _template(n: int, runs: int, assets: float, fee: float, mean: float, sd: float, lo: float,
              hi: float) -> SplitTemplate:
    """TEMPLATE with what a cell's prompts share filled in, once per cell."""
    return SplitTemplate(TEMPLATE, ("seat", "run", "value", "history"), dict(
        n=n, runs=runs, assets=fmt(assets), fee=fmt(fee), mean=fmt(mean), sd=fmt(sd), lo=fmt(lo), hi=fmt(hi),
        payment=PAYMENT.format(assets=fmt(assets)), answer=ANSWER_FORMAT.format(what="your bid")))


def prompt(*, seat: int, n: int, run: int, runs: int, value: float, assets: float, fee: float, dist: Dist,
           past: Sequence[PastRun] = ()) -> list[dict[str, str]]:
    mean, sd, lo, hi = dist
    return messages(_template(n, runs, assets, fee, mean, sd, lo, hi).fill(seat, run, fmt(value), history(past)))


def seat_prompt(cell: CellConfig, session: Session, run: int, seat: int,
                past: Sequence[PastRun]) -> list[dict[str, str]]:
    return prompt(seat=seat, n=cell.seats, run=run + 1, runs=cell.runs, value=session.drawn.values[run][seat - 1],
                  assets=cell.params.assets, fee=cell.params.fee, dist=cell_dist(cell), past=past)


_DIST = re.compile(r"normal distribution with mean " + NUM + " and standard deviation " + NUM
                   + ", rounded down to a whole number and drawn again until it is between " + NUM + " and " + NUM)


def read_prompt(text: str) -> Optional[Facts]:
    if "in a first-price sealed-bid auction" not in text:
        return None
    dist = _DIST.search(text)
    if dist is None:
        raise ValueError("first-price prompt without its value distribution")
    mean, sd, lo, hi = (float(g) for g in dist.groups())
    return sealed_bid.read_facts(NAME, text, *seat_and_run(text), facts=Facts, values_from=(mean, sd, lo, hi))


# ---- reference players ----

def facts_ne_bid(facts: Facts) -> float:
    assert facts.value is not None and facts.values_from is not None
    return ne_bid(facts.value, *facts.values_from, facts.n)


def nash(facts: Facts, rng: random.Random) -> Move:
    return facts_ne_bid(facts), "The symmetric Bayesian-Nash bid: my value less the expected margin over the rest."


def level_k(facts: Facts, rng: random.Random, k: int) -> Move:
    """The equilibrium bid, for every k >= 1 (README, "Players" says why). Against level-0 bids
    uniform on [0, A], level 1's best response maximizes (v - b) b^(n-1): b = (n-1)/n v, which is
    the equilibrium exactly when values are uniform; with the cells' normal values we take the
    equilibrium, where best responses to best responders settle, as level-k does in second price."""
    return facts_ne_bid(facts), f"Level {k}: I best-respond to bidders who shade as I do."


def cognitive_hierarchy(facts: Facts, rng: random.Random, tau: float, sigma: float) -> Move:
    """A CH step from Poisson(τ): step 0 bids uniformly on [0, A] (random_play), step k >= 1 bids as
    level k does, the equilibrium b(v) (level_k says why). σ plays no part."""
    return sealed_bid.cognitive_hierarchy(facts, rng, tau, random_play, level_k)


def shade(facts: Facts, rng: random.Random, share: float) -> Move:
    return sealed_bid.share_of_value(facts, share)


# ASSUMPTION (we know of no published human first-price figures for this setting): laboratory bidders in first-price
# auctions bid above the risk-neutral equilibrium and below their value (Cox, Smith and Walker 1988;
# Kagel 1995's survey), which CRRA risk aversion explains. For n = 5 and uniform values, CRRA with
# r = 0.5 bids 4/4.5 v = 0.889 v against 0.8 v: it closes 45 % of the gap between the equilibrium bid
# and the value. The model: b(v) + u (v - b(v)), u ~ N(0.45, 0.2) clipped to [0, 1].
HUMAN_GAP_MEAN, HUMAN_GAP_SD = 0.45, 0.20


def human_bid(value: float, equilibrium: float, rng: random.Random) -> float:
    u = min(1.0, max(0.0, rng.gauss(HUMAN_GAP_MEAN, HUMAN_GAP_SD)))
    return equilibrium + u * (value - equilibrium)


def human(facts: Facts, rng: random.Random) -> Move:
    assert facts.value is not None
    bid = min(facts.upper, max(0.0, human_bid(facts.value, facts_ne_bid(facts), rng)))
    return bid, "I shade my bid below my value, but not as far as the textbook says: I do not want to lose."


# the reference players by kind (``protocol.PLAYER_KINDS``), as the built-in players ask for them
PLAYERS = {"nash": nash, "random": random_play, "level_k": level_k, "cognitive_hierarchy": cognitive_hierarchy,
           "human": human, "shade": shade}


def human_first_run_shares(events: Sequence[Mapping[str, Any]], rng: random.Random, n: int) -> list[float]:
    """The human model's bid / value on the log's own first-run values, drawn n times."""
    pool = [(float(v), event_dist(e), len(e["values"])) for e in events for v in e["values"] if v > 0]
    if not pool:
        return []
    shares = []
    for _ in range(n):
        v, dist, seats = rng.choice(pool)
        shares.append(human_bid(v, ne_bid(v, *dist, seats), rng) / v)
    return shares


# ---- report ----

def score_event(event: Mapping[str, Any], actions: Sequence[Optional[float]], players: Sequence[str]) -> RunOutcome:
    return score_run(actions, event["values"], event_dist(event), float(event["assets"]), float(event["fee"]),
                     players)


def diagnostics(runs: Sequence[Mapping[str, Any]], player: str) -> dict[str, dict[str, Any]]:
    return sealed_bid.bid_diagnostics(runs, player)


def references(plot: str, models: Sequence[str]) -> list[Any]:
    return sealed_bid.bid_references(plot, models, "first_price", "mean", "first-price bid/value (all rounds)")
