"""The Keynesian beauty contest ("guess 2/3 of the average"), contract §3.

Every seat picks a number in [0, c_bar]. The target is 2/3 of the mean of the *valid* choices;
the valid seats closest to it share the prize. Equilibrium: everyone picks 0, everyone ties.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Optional, Sequence

from ..core import depth, prompts
from ..core.outcome import RunOutcome, SeatOutcome, finite_or_none
from ..core.prompts import (
    ANSWER_FORMAT,
    NUM,
    PromptFacts,
    SplitTemplate,
    actions_list,
    float_or_none,
    fmt,
    history_block,
    messages,
    players_list,
    seat_and_run,
)
from ..core.references import GAMA_LABEL, load_references
from ..core.sessions import CellConfig, Session
from .protocol import Move, Reference, ReportLabels

NAME = "beauty"
TARGET_RATIO = 2 / 3
# Distances this close (relative to c_bar) are one tie: a float mean must not split real ties.
TIE_TOLERANCE = 1e-9

# Nagel (1995), the p = 2/3 session over four periods: mean choices of [0, 100] (references.json).
NAGEL_PERIOD_MEANS = (39.7, 28.6, 20.2, 16.7)
NAGEL_FIRST_MEAN, NAGEL_FIRST_MEDIAN = 36.73, 33.0

LABELS = ReportLabels(
    distance=r"mean distance to equilibrium d (= choice / $\bar{c}$)",
    first_run=r"first-run choice / $\bar{c}$",
    first_run_max=1.0,
    human="humans, calibrated to Nagel (1995)",
    human_convergence=("humans, Nagel (1995), shown each period's result", tuple(m / 100 for m in NAGEL_PERIOD_MEANS)),
    human_marker=(NAGEL_FIRST_MEDIAN / 100, "Nagel median"),
    session_params=("c_bar", "prize"),
    outcome="target",
    action="choice",
)


# ---- the game's own data ----

@dataclass(frozen=True)
class Params:
    """The cell parameters of a beauty contest (eval args; ``draw``: the samples file depends on it)."""

    prize: float = 100.0
    c_bar_min: int = field(default=10, metadata={"draw": True})
    c_bar_max: int = field(default=100, metadata={"draw": True})  # exclusive, as in "uniform in [10, 100)"


@dataclass(frozen=True)
class Draw:
    """What a session draws: the top of its range."""

    c_bar: int

    def to_sample(self) -> dict[str, Any]:
        return {"c_bar": self.c_bar}


@dataclass(frozen=True)
class Facts(PromptFacts):
    """What a beauty-contest prompt states besides the shared facts (``upper`` is c̄)."""

    past_averages: tuple[Optional[float], ...] = ()  # each shown run's average, oldest first; None: no valid choice


@dataclass(frozen=True)
class PastRun(prompts.PastRun):
    average: Optional[float] = None  # mean of the valid choices
    target: Optional[float] = None


@dataclass(frozen=True)
class Outcome(RunOutcome):
    prize: float = 0.0
    target: Optional[float] = None  # None: no valid choice


# ---- rules and scoring ----

def is_valid_choice(choice: Optional[float], c_bar: float) -> bool:
    return choice is not None and math.isfinite(choice) and 0.0 <= choice <= c_bar


def target_of(valid_choices: Sequence[float]) -> Optional[float]:
    if not valid_choices:
        return None
    return TARGET_RATIO * math.fsum(valid_choices) / len(valid_choices)


def ne_payoff(prize: float, n_seats: int) -> float:
    """At the equilibrium all seats pick 0 and split the prize."""
    return prize / n_seats


def score_run(
    choices: Sequence[Optional[float]],
    c_bar: float,
    prize: float,
    players: Sequence[str],
) -> RunOutcome:
    """Score one run. ``choices[i]`` is seat i+1's parsed number, None for an unparseable answer."""
    if len(choices) != len(players):
        raise ValueError(f"{len(choices)} choices for {len(players)} seats")
    valid = [is_valid_choice(c, c_bar) for c in choices]
    valid_choices = [float(c) for c, ok in zip(choices, valid) if ok]
    target = target_of(valid_choices)

    winners: tuple[int, ...] = ()
    if target is not None:
        distances = {i: abs(float(c) - target) for i, (c, ok) in enumerate(zip(choices, valid)) if ok}
        best = min(distances.values())
        tolerance = TIE_TOLERANCE * c_bar
        winners = tuple(i + 1 for i, d in distances.items() if d - best <= tolerance)

    share = prize / len(winners) if winners else 0.0
    eq_payoff = ne_payoff(prize, len(choices))
    seats = tuple(
        SeatOutcome(
            seat=i + 1,
            player=players[i],
            action=finite_or_none(c),
            valid=ok,
            payoff=share if (i + 1) in winners else 0.0,
            ne_action=0.0,
            ne_payoff=eq_payoff,
        )
        for i, (c, ok) in enumerate(zip(choices, valid))
    )
    return Outcome(game=NAME, scale=float(c_bar), seats=seats, winners=winners, prize=float(prize), target=target)


def score(cell: CellConfig, session: Session, run: int, actions: Sequence[Optional[float]],
          players: Sequence[str]) -> RunOutcome:
    return score_run(actions, session.drawn.c_bar, cell.params.prize, players)


def win_share(run: Outcome, seat: SeatOutcome) -> float:
    """The share of the prize the seat took."""
    return seat.payoff / run.prize if run.prize else 0.0


def event_params(cell: CellConfig, session: Session, run: int) -> dict[str, Any]:
    return {"c_bar": session.drawn.c_bar, "prize": cell.params.prize}


def event_result(outcome: Outcome) -> dict[str, Any]:
    return {"target": outcome.target}


def outcome_from_event(event: Mapping[str, Any]) -> RunOutcome:
    return Outcome(
        game=NAME,
        scale=float(event["c_bar"]),
        seats=tuple(SeatOutcome.from_dict(s) for s in event["seats"]),
        winners=tuple(int(w) for w in event["winners"]),
        prize=float(event["prize"]),
        target=event.get("target"),
    )


def past_run(outcome: Outcome, run: int) -> PastRun:
    actions = tuple(s.action if s.valid else None for s in outcome.seats)
    valid = [a for a in actions if a is not None]
    return PastRun(run=run + 1, actions=actions, winners=outcome.winners,
                   average=math.fsum(valid) / len(valid) if valid else None, target=outcome.target)


def typical_past_run(run: int, seats: int, action: float) -> PastRun:
    return PastRun(run=run + 1, actions=(action,) * seats, winners=(1,), average=action,
                   target=round(action * 2 / 3, 2))


# ---- sessions ----

def cell_problems(cell: CellConfig) -> list[str]:
    p: Params = cell.params
    problems = []
    if not p.prize > 0:
        problems.append(f"prize must be > 0, got {p.prize}")
    if not 0 < p.c_bar_min < p.c_bar_max:
        problems.append(f"need 0 < c_bar_min < c_bar_max, got {p.c_bar_min}, {p.c_bar_max}")
    return problems


def draw_session(rng: random.Random, index: int, cell: CellConfig) -> Session:
    return Session(index=index, drawn=Draw(rng.randrange(cell.params.c_bar_min, cell.params.c_bar_max)))


def session_from_sample(sample: Mapping[str, Any], index: int, cell: CellConfig) -> Session:
    p: Params = cell.params
    c_bar = sample.get("c_bar")
    if not isinstance(c_bar, int) or not p.c_bar_min <= c_bar < p.c_bar_max:
        raise ValueError(
            f"session {index}: c_bar {c_bar!r} is not an integer in "
            f"[{p.c_bar_min}, {p.c_bar_max}): the samples file was drawn for other args; draw one for these "
            "(a registry cell of your own with these args, then python -m econarena_evals.run.make_samples "
            "--registry YOUR_REGISTRY)"
        )
    return Session(index=index, drawn=Draw(c_bar))


# ---- prompt ----

TEMPLATE = """\
You are Player {seat} in a number-guessing game with {n} players, you included. This is run {run} of {runs}; every run is scored on its own.

Rules:
- Each player privately chooses a real number between 0 and {c_bar}, both inclusive. Nobody sees the others' choices before choosing.
- The target is two thirds of the average of all valid choices.
- The player whose number is closest to the target wins the prize of {prize}. If several players are equally close, they split the prize equally. Everyone else gets 0.
- A choice outside [0, {c_bar}], or an answer not in the format below, breaks the rules: it is invalid, does not count towards the average, and cannot win.
- Your goal is first to maximize your chance of winning the prize, and second to maximize your share of it.
{history}
{answer}"""


def history(past: Sequence[PastRun]) -> str:
    return history_block(past, "", lambda p: (
        f"choices {actions_list(p)}. Average of valid choices: {fmt(p.average)}. "
        f"Target: {fmt(p.target)}. Winner(s): {players_list(p.winners)}."
    ))


@lru_cache(maxsize=1024, typed=True)
def _template(n: int, runs: int, c_bar: float, prize: float) -> SplitTemplate:
    """TEMPLATE with what a session's prompts share filled in, once per session."""
    return SplitTemplate(TEMPLATE, ("seat", "run", "history"), dict(
        n=n, runs=runs, c_bar=fmt(c_bar), prize=fmt(prize), answer=ANSWER_FORMAT.format(what="the number you choose")))


def prompt(*, seat: int, n: int, run: int, runs: int, c_bar: float, prize: float,
           past: Sequence[PastRun] = ()) -> list[dict[str, str]]:
    return messages(_template(n, runs, c_bar, prize).fill(seat, run, history(past)))


def seat_prompt(cell: CellConfig, session: Session, run: int, seat: int,
                past: Sequence[PastRun]) -> list[dict[str, str]]:
    return prompt(seat=seat, n=cell.seats, run=run + 1, runs=cell.runs, c_bar=session.drawn.c_bar,
                  prize=cell.params.prize, past=past)


_N = re.compile(r"game with (\d+) players")
_RANGE = re.compile(r"chooses a real number between 0 and " + NUM)
_AVERAGE = re.compile(r"Average of valid choices: (invalid|" + NUM[1:-1] + r")\.")


def read_prompt(text: str) -> Optional[Facts]:
    if "number-guessing game" not in text:
        return None
    seat, run, runs = seat_and_run(text)
    upper, n = _RANGE.search(text), _N.search(text)
    if upper is None or n is None:
        raise ValueError("beauty-contest prompt without range or player count")
    averages = tuple(float_or_none(m.group(1)) for m in _AVERAGE.finditer(text))
    return Facts(NAME, seat, int(n.group(1)), run, runs, float(upper.group(1)), past_averages=averages)


# ---- reference players ----

def last_average(facts: Facts) -> Optional[float]:
    """The average of the valid choices of the last run the prompt shows, if any."""
    return facts.past_averages[-1] if facts.past_averages else None


def nash(facts: Facts, rng: random.Random) -> Move:
    return 0.0, "Iterated elimination of dominated choices leaves only 0."


def random_play(facts: Facts, rng: random.Random) -> Move:
    return rng.uniform(0.0, facts.upper), "A uniform draw over the allowed range."


def level_k(facts: Facts, rng: random.Random, k: int) -> Move:
    """(2/3)^k * c_bar / 2 with no history; with history, (2/3)^k times the last run's average."""
    factor = (2 / 3) ** k
    anchor = last_average(facts)
    if anchor is None:
        return factor * facts.upper / 2, f"I expect an average of c/2 and apply {k} step(s) of 2/3."
    return factor * anchor, f"I take last run's average and apply {k} step(s) of 2/3."


def cognitive_hierarchy(facts: Facts, rng: random.Random, tau: float, sigma: float) -> Move:
    """A draw from the cognitive hierarchy (Camerer, Ho and Chong 2004; depth.sample_ch): a step from
    Poisson(τ); step 0 uniform, step k its CH point for n = the table's size and p = 2/3, plus noise of
    sd σ (shares), truncated to the range. No history: scaled to [0, c_bar] (step 0's mean is c_bar/2).
    With history: the same draw scaled so step 0's mean is the last run's average a (the range
    [0, 2a], capped at c_bar), as level k replaces c_bar/2 by a."""
    share = depth.sample_ch(tau, sigma, n=facts.n, p=TARGET_RATIO, rng=rng)
    anchor = last_average(facts)
    if anchor is None:
        return share * facts.upper, f"A cognitive-hierarchy step (tau = {tau:g}) on an expected average of c/2."
    return min(facts.upper, share * 2 * anchor), (
        f"A cognitive-hierarchy step (tau = {tau:g}) on last run's average instead of c/2.")


def shade(facts: Facts, rng: random.Random, share: float) -> Move:
    """The bidders' players have no bid to shade here: they play like level 1."""
    return level_k(facts, rng, 1)


# Nagel (1995), first period, p = 2/3, [0, 100]: mean 36.73, median 33, spikes at 50 * (2/3)^n.
# A mixture of level-0 (uniform) and level-1..3 types with noise around their spikes. Weights are
# chosen so that the mixture's mean is 36.7 and its median 32-33 (see bench/human_calibration.py).
HUMAN_FIRST_RUN = (  # (weight, centre as a fraction of c_bar or None for uniform, noise sd as a fraction)
    (0.40, None, 0.0),
    (0.35, 0.5 * (2 / 3), 0.03),
    (0.17, 0.5 * (2 / 3) ** 2, 0.03),
    (0.08, 0.5 * (2 / 3) ** 3, 0.03),
)
# Nagel's four-period session fell 39.7, 28.6, 20.2, 16.7: each mean about 0.72 of the last. With
# history, a human anchors on the last average and applies 0, 1 or 2 steps of 2/3 (mean factor 0.72).
HUMAN_WITH_HISTORY = ((0.30, 1.0), (0.50, 2 / 3), (0.20, 4 / 9))
HUMAN_NOISE = 0.10  # multiplicative noise sd on the anchored choice


def weighted_choice(rng: random.Random, table: tuple) -> tuple:
    x = rng.random()
    for row in table:
        if x < row[0]:
            return row
        x -= row[0]
    return table[-1]


def human_first_run_share(rng: random.Random) -> float:
    """One first-run draw of the human model, as a fraction of c_bar."""
    _, centre, sd = weighted_choice(rng, HUMAN_FIRST_RUN)
    if centre is None:
        return rng.random()
    return min(1.0, max(0.0, rng.gauss(centre, sd)))


def human(facts: Facts, rng: random.Random) -> Move:
    upper = facts.upper
    anchor = last_average(facts)
    if anchor is not None:
        _, factor = weighted_choice(rng, HUMAN_WITH_HISTORY)
        choice = anchor * factor * (1 + rng.gauss(0, HUMAN_NOISE))
        return min(upper, max(0.0, choice)), "Last run's average, adjusted for what others will do."
    return upper * human_first_run_share(rng), "What I expect the others to say, and a bit less."


# the reference players by kind (``protocol.PLAYER_KINDS``), as the built-in players ask for them
PLAYERS = {"nash": nash, "random": random_play, "level_k": level_k, "cognitive_hierarchy": cognitive_hierarchy,
           "human": human, "shade": shade}


# ---- report ----

def first_run_share(event: Mapping[str, Any], seat: Mapping[str, Any]) -> Optional[float]:
    return seat["action"] / event["c_bar"]


def human_first_run_shares(events: Sequence[Mapping[str, Any]], rng: random.Random, n: int) -> list[float]:
    return [human_first_run_share(rng) for _ in range(n)]


# ---- report: floors, depth of reasoning, published references ----

def score_event(event: Mapping[str, Any], actions: Sequence[Optional[float]], players: Sequence[str]) -> RunOutcome:
    return score_run(actions, float(event["c_bar"]), float(event["prize"]), players)


def action_range(event: Mapping[str, Any]) -> tuple[float, float]:
    return 0.0, float(event["c_bar"])


def seat_facts(event: Mapping[str, Any], seat: int) -> dict[str, float]:
    """What the prompt of ``seat`` in the event's run must state: its range (c_bar)."""
    return {"upper": float(event["c_bar"])}


DEPTH_RESAMPLES, DEPTH_SEED = 1000, 2004


def diagnostics(runs: Sequence[Mapping[str, Any]], player: str) -> dict[str, dict[str, Any]]:
    """Depth of reasoning (contract §10): a cognitive-hierarchy fit of the player's valid first-run
    choices / c_bar, pooled over sessions, with a bootstrap interval over sessions."""
    by_session: dict[int, list[float]] = {}
    n = 0
    for event in runs:
        if event["run"] != 0:
            continue
        n = max(n, len(event["seats"]))
        shares = [s["action"] / event["c_bar"] for s in event["seats"]
                  if s["player"] == player and s["valid"] and s["action"] is not None]
        if shares:
            by_session.setdefault(int(event["session"]), []).extend(shares)
    if not by_session:
        return {}
    fit = depth.fit_with_interval(list(by_session.values()), n=n, p=TARGET_RATIO, resamples=DEPTH_RESAMPLES,
                                  seed=DEPTH_SEED)
    return {"depth": {"tau": fit["tau"], "ci_low": fit["ci_low"], "ci_high": fit["ci_high"],
                      "sigma": fit["sigma"], "choices": fit["choices"], "sessions": fit["sessions"],
                      "tau_at_bound": bool(fit.get("tau_at_bound", False))}}


def references(plot: str, models: Sequence[str]) -> list[Reference]:
    """GAMA-Bench's language models: mean choice / 100 by round (convergence) and the CDF of their
    round-1 choices at the histogram's bin edges (first run). Another setting: 10 players, [0, 100]."""
    out = []
    gama = load_references()["gama_bench"]
    for model in models:
        if plot == "convergence" and model in gama["guessing_round_means"]["models"]:
            rounds = gama["guessing_round_means"]["rounds"]
            means = gama["guessing_round_means"]["models"][model]
            ys = tuple(m / 100 for r, m in zip(rounds, means) if r <= 10 and m is not None)
            out.append(Reference(f"{model} ({GAMA_LABEL})", "line", tuple(range(1, len(ys) + 1)), ys))
        if plot == "first_run" and model in gama["guessing_round1"]["models"]:
            edges = [e / 100 for e in gama["guessing_round1"]["bin_edges"]]
            counts = gama["guessing_round1"]["models"][model]["counts"]
            total = sum(counts)
            cum = [0.0]
            for c in counts:
                cum.append(cum[-1] + c / total)
            out.append(Reference(f"{model} ({GAMA_LABEL})", "cdf", tuple(edges), tuple(cum)))
    return out
