"""What the sealed-bid auctions share (contract §4 and §11): not a game, a toolkit for the two.

Each seat knows only its private value v (fresh each run) and its assets A (reset each run). A
valid bid is a real number in [0, A]; the highest valid bid wins, ties go to the lowest seat; an
invalid bid pays the entrance fee and takes no part. The games differ only in what the winner
pays (``PRICE_RULES``), the equilibrium bid, and the words of the prompt.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..core import depth, prompts
from ..core.outcome import RunOutcome, SeatOutcome, finite_or_none
from ..core.prompts import NUM, PromptFacts, actions_list, float_or_none, fmt, history_block, players_list
from ..core.references import GAMA_AUCTION_LABEL, load_references
from ..core.sessions import CellConfig, Session
from .protocol import Reference

Bids = Sequence[tuple[int, float]]  # (seat, amount) of the valid bidders

# what the session browser shows of an auction's run (``ReportLabels``), the same in both
BROWSER_LABELS: dict[str, Any] = {"session_params": ("assets", "fee"), "outcome": "price", "action": "bid",
                                  "seat_values": "values", "seat_value_note": "v = the seat's private value"}


# ---- the auctions' own data ----

def _draws() -> dict[str, Any]:
    return {"draw": True}  # the samples file depends on it


@dataclass(frozen=True)
class Params:
    """The cell parameters of an auction (eval args): the value distribution, the assets, the fee."""

    value_mean: float = field(default=50.0, metadata=_draws())
    value_sd: float = field(default=10.0, metadata=_draws())
    value_min: int = field(default=1, metadata=_draws())
    value_max: int = field(default=100, metadata=_draws())
    assets: float = 100.0
    fee: float = 10.0


@dataclass(frozen=True)
class Draw:
    """What a session draws: every run's private values, ``values[run][seat - 1]``."""

    values: tuple[tuple[int, ...], ...]

    def to_sample(self) -> dict[str, Any]:
        return {"values": [list(v) for v in self.values]}


@dataclass(frozen=True)
class Facts(PromptFacts):
    """What an auction prompt states besides the shared facts (``upper``: the assets; ``value``: the
    seat's private value)."""

    past_bids: tuple[tuple[Optional[float], ...], ...] = ()  # each shown run's bids by seat, oldest first


@dataclass(frozen=True)
class PastRun(prompts.PastRun):
    price: Optional[float] = None  # None: nobody bid validly


@dataclass(frozen=True)
class Outcome(RunOutcome):
    price: Optional[float] = None  # what the winner paid; None: nobody bid validly


def is_valid_bid(bid: Optional[float], assets: float) -> bool:
    return bid is not None and math.isfinite(bid) and 0.0 <= bid <= assets


def second_price(ranked: Bids) -> float:
    return ranked[1][1] if len(ranked) > 1 else 0.0


def first_price(ranked: Bids) -> float:
    return ranked[0][1]


def winner_and_price(bids: Bids, price_rule: Callable[[Bids], float]) -> tuple[Optional[int], Optional[float]]:
    """Highest bid wins, lowest seat breaks ties; ``price_rule`` says what the winner pays."""
    if not bids:
        return None, None
    ranked = sorted(bids, key=lambda sb: (-sb[1], sb[0]))
    return ranked[0][0], price_rule(ranked)


def ne_payoffs(values: Sequence[float], ne_bids: Sequence[float], assets: float,
               price_rule: Callable[[Bids], float]) -> list[float]:
    """Each seat's payoff when every seat bids its equilibrium bid, by the same rule ``score_run`` uses."""
    winner, price = winner_and_price([(i + 1, float(b)) for i, b in enumerate(ne_bids)], price_rule)
    return [
        assets - price + float(v) if (i + 1) == winner else float(assets)  # type: ignore[operator]
        for i, v in enumerate(values)
    ]


def score_run(
    game: str,
    bids: Sequence[Optional[float]],
    values: Sequence[float],
    ne_bids: Sequence[float],
    assets: float,
    fee: float,
    players: Sequence[str],
    price_rule: Callable[[Bids], float],
) -> RunOutcome:
    """Score one run. ``bids[i]`` is seat i+1's parsed bid, None for an unparseable answer."""
    if not (len(bids) == len(values) == len(players) == len(ne_bids)):
        raise ValueError(f"{len(bids)} bids, {len(values)} values, {len(players)} seats")
    valid = [is_valid_bid(b, assets) for b in bids]
    winner, price = winner_and_price(
        [(i + 1, float(b)) for i, (b, ok) in enumerate(zip(bids, valid)) if ok], price_rule)  # type: ignore[arg-type]
    eq = ne_payoffs(values, ne_bids, assets, price_rule)

    def payoff(i: int) -> float:
        if not valid[i]:
            return float(assets) - fee
        if (i + 1) == winner:
            return float(assets) - price + float(values[i])  # type: ignore[operator]
        return float(assets)

    seats = tuple(
        SeatOutcome(
            seat=i + 1,
            player=players[i],
            action=finite_or_none(b),
            valid=valid[i],
            payoff=payoff(i),
            ne_action=float(ne_bids[i]),
            ne_payoff=eq[i],
        )
        for i, b in enumerate(bids)
    )
    return Outcome(game=game, scale=float(assets), seats=seats, winners=() if winner is None else (winner,),
                   price=price)


def win_share(run: RunOutcome, seat: SeatOutcome) -> float:
    """1 for the run's winner, 0 for every other seat."""
    return 1.0 if run.won(seat.seat) else 0.0


def event_params(cell: CellConfig, session: Session, run: int) -> dict[str, Any]:
    return {"assets": cell.params.assets, "fee": cell.params.fee, "values": list(session.drawn.values[run])}


def event_result(outcome: Outcome) -> dict[str, Any]:
    return {"price": outcome.price}


def outcome_from_event(game: str, event: Mapping[str, Any]) -> RunOutcome:
    return Outcome(
        game=game,
        scale=float(event["assets"]),
        seats=tuple(SeatOutcome.from_dict(s) for s in event["seats"]),
        winners=tuple(int(w) for w in event["winners"]),
        price=event.get("price"),
    )


def past_run(outcome: Outcome, run: int) -> PastRun:
    actions = tuple(s.action if s.valid else None for s in outcome.seats)
    return PastRun(run=run + 1, actions=actions, winners=outcome.winners, price=outcome.price)


def typical_past_run(run: int, seats: int, action: float) -> PastRun:
    return PastRun(run=run + 1, actions=(action,) * seats, winners=(1,), price=action)


# ---- sessions ----

def cell_problems(cell: CellConfig) -> list[str]:
    p: Params = cell.params
    problems = []
    if not p.assets > 0:
        problems.append(f"assets must be > 0, got {p.assets}")
    if not 0 <= p.fee <= p.assets:
        problems.append(f"fee must be in [0, assets], got {p.fee}")
    if not 0 <= p.value_min <= p.value_max:
        problems.append(f"need 0 <= value_min <= value_max, got {p.value_min}, {p.value_max}")
    if not p.value_sd >= 0:
        problems.append(f"value_sd must be >= 0, got {p.value_sd}")
    return problems


def draw_value(rng: random.Random, cell: CellConfig) -> int:
    """int(N(mean, sd)) redrawn until in [value_min, value_max], as the authors' package draws."""
    p: Params = cell.params
    for _ in range(100_000):
        v = int(rng.gauss(p.value_mean, p.value_sd))
        if p.value_min <= v <= p.value_max:
            return v
    raise ValueError("value distribution almost never lands in [value_min, value_max]")


def draw_session(rng: random.Random, index: int, cell: CellConfig) -> Session:
    values = tuple(tuple(draw_value(rng, cell) for _ in range(cell.seats)) for _ in range(cell.runs))
    return Session(index=index, drawn=Draw(values))


def session_from_sample(sample: Mapping[str, Any], index: int, cell: CellConfig) -> Session:
    """The session's values for ``cell.seats`` seats, however many a run of the file holds.

    The shipped files hold five values a run. Fewer seats take the first ones; more seats get the
    missing values drawn from the cell's distribution with a generator seeded by (session, run), so
    every install plays the same values without rewriting a shipped file.
    """
    p: Params = cell.params
    values = sample.get("values")
    ok = (
        isinstance(values, list)
        and len(values) >= cell.runs
        and all(isinstance(r, list) and len(r) >= 1 for r in values)
        and all(isinstance(v, int) and p.value_min <= v <= p.value_max for r in values for v in r)
    )
    if not ok:
        raise ValueError(
            f"session {index}: 'values' must hold at least {cell.runs} runs of integers "
            f"in [{p.value_min}, {p.value_max}]: the samples file was drawn for other args; draw one for these "
            "(a registry cell of your own with these args, then python -m econarena_evals.run.make_samples "
            "--registry YOUR_REGISTRY)"
        )
    return Session(index=index, drawn=Draw(tuple(_seat_values(r, index, run, cell) for run, r in
                                                 enumerate(values[: cell.runs]))))


def _seat_values(row: Sequence[int], index: int, run: int, cell: CellConfig) -> tuple[int, ...]:
    if len(row) >= cell.seats:
        return tuple(row[: cell.seats])
    rng = random.Random(f"econarena-extra-seats:{index}:{run}")
    return tuple(row) + tuple(draw_value(rng, cell) for _ in range(cell.seats - len(row)))


# ---- prompt text both auctions use ----

RULES = """\
Rules:
- Each bidder privately submits one bid, a real number between 0 and {assets} (your assets), both inclusive.
- The highest valid bid wins the item. If several bids tie for highest, the bidder with the lowest player number wins.
{payment}
- A bid outside [0, {assets}], or an answer not in the format below, breaks the rules: that bidder pays an entrance fee of {fee} (payoff {assets} - {fee}) and takes no part in the auction.
- Your goal is to maximize your payoff.
{history}
{answer}"""


def history(past: Sequence[PastRun]) -> str:
    return history_block(past, " (values stayed private)", lambda p: (
        f"bids {actions_list(p)}. Winner: {players_list(p.winners)}. "
        f"Price paid: {fmt(p.price) if p.price is not None else 'none'}."
    ))


_N = re.compile(r"of (\d+) bidders")
_VALUE = re.compile(r"Your private value for the item in this run is " + NUM)
_ASSETS = re.compile(r"a real number between 0 and " + NUM + r" \(your assets\)")
_PAST_BIDS = re.compile(r"- Run \d+: bids (.*?)\. Winner:")


def read_facts(game: str, text: str, seat: int, run: int, runs: int, facts: type = Facts,
               **more: Any) -> Facts:
    """An auction prompt's facts, as ``facts`` (a ``Facts``), with ``more`` of the game's own fields."""
    value, assets, n = _VALUE.search(text), _ASSETS.search(text), _N.search(text)
    if value is None or assets is None or n is None:
        raise ValueError("auction prompt without value, assets or bidder count")
    past_bids = tuple(
        tuple(float_or_none(part.split(": ", 1)[1]) for part in m.group(1).split("; "))
        for m in _PAST_BIDS.finditer(text)
    )
    return facts(game, seat, int(n.group(1)), run, runs, float(assets.group(1)), float(value.group(1)),
                 past_bids=past_bids, **more)


# ---- reference players both auctions share ----

def random_play(facts: Facts, rng: random.Random) -> tuple[float, str]:
    return rng.uniform(0.0, facts.upper), "A uniform draw over the allowed range."


def cognitive_hierarchy(facts: Facts, rng: random.Random, tau: float,
                        step0: Callable[[Facts, random.Random], tuple[float, str]],
                        level_k: Callable[[Facts, random.Random, int], tuple[float, str]]) -> tuple[float, str]:
    """A cognitive-hierarchy bidder: a step k from Poisson(τ) (depth.sample_step, one rng draw); step 0
    plays ``step0`` (uniform over the range), step k >= 1 plays the auction's ``level_k(k)``."""
    k = depth.sample_step(tau, rng)
    if k == 0:
        bid, reason = step0(facts, rng)
    else:
        bid, reason = level_k(facts, rng, k)
    return bid, f"Cognitive-hierarchy step {k} (tau = {tau:g}): {reason}"


def share_of_value(facts: Facts, share: float) -> tuple[float, str]:
    assert facts.value is not None
    return min(facts.upper, share * facts.value), f"I bid {share:g} of my value."


def first_run_share(event: Mapping[str, Any], seat: Mapping[str, Any]) -> Optional[float]:
    """A first-run bid as a share of the seat's value (None when the value is 0)."""
    value = event["values"][seat["seat"] - 1]
    return seat["action"] / value if value > 0 else None


# ---- report: what the EAS hides, and published references ----

TRUTHFUL_TOLERANCE = 0.01  # |bid - v| <= 1 % of v counts as a truthful bid


def seat_facts(event: Mapping[str, Any], seat: int) -> dict[str, float]:
    """What the prompt of ``seat`` in the event's run must state: its assets and its own value."""
    return {"upper": float(event["assets"]), "value": float(event["values"][seat - 1])}


def action_range(event: Mapping[str, Any]) -> tuple[float, float]:
    return 0.0, float(event["assets"])


def bid_diagnostics(runs: Sequence[Mapping[str, Any]], player: str) -> dict[str, dict[str, Any]]:
    """Shares of truthful, over- and underbids and the mean bid / value over the player's valid bids
    (values above 0): the EAS folds these into one number."""
    ratios = []
    for event in runs:
        for seat in event["seats"]:
            value = event["values"][seat["seat"] - 1]
            if seat["player"] == player and seat["valid"] and seat["action"] is not None and value > 0:
                ratios.append(seat["action"] / value)
    if not ratios:
        return {}
    n = len(ratios)
    return {"bids": {
        "truthful": sum(abs(r - 1) <= TRUTHFUL_TOLERANCE for r in ratios) / n,
        "overbid": sum(r > 1 + TRUTHFUL_TOLERANCE for r in ratios) / n,
        "underbid": sum(r < 1 - TRUTHFUL_TOLERANCE for r in ratios) / n,
        "mean_bid_over_value": math.fsum(ratios) / n,
        "bids": n,
    }}


def bid_references(plot: str, models: Sequence[str], key: str, figure: str, what: str) -> list[Any]:
    """Marks on the first-run plot at the published mean bid / value of each model (GAMA-Bench)."""
    if plot != "first_run":
        return []
    table = load_references()["gama_bench"]["auction_bid_value"]["models"]
    out = []
    for model in models:
        value = ((table.get(model) or {}).get(key) or {}).get(figure)
        if value is not None:
            out.append(Reference(f"{model}: {what} {value:.2f} ({GAMA_AUCTION_LABEL})", "vline", (value,)))
    return out
