"""What a game module provides: the contract between a game and the rest of the package, in two parts.

A game is a module that defines every name of ``Game`` (its rules) and of ``GameReport`` (what the
report shows of it) below: one in ``econarena_evals.games`` with its entry in ``GAMES``, or one outside
the package that an eval's ``game`` arg names by its import path (``games.load``).
The eval, the players, the samples generator, the metrics and the log reader ask the rules
(``games.get``); the report asks the report's view (``games.report_of``). None of them knows which
games exist, nor any game's parameters, draws, prompt facts or results: a game owns its data types,
and the shared ones hold them (``CellConfig.params``, ``Session.drawn``) or are extended by them (a
game's ``Facts`` is a ``PromptFacts``, its ``PastRun`` a ``prompts.PastRun``, its ``Outcome`` a
``RunOutcome``).

Everything here is pure: plain data in, plain data out, randomness only from the ``rng`` passed in.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Protocol, Sequence

if TYPE_CHECKING:  # only for annotations: the game modules import these at run time
    from ..core.outcome import RunOutcome, SeatOutcome
    from ..core.prompts import PastRun, PromptFacts
    from ..core.sessions import CellConfig, Session

Messages = list[dict[str, str]]
Move = tuple[float, str]  # a built-in player's (choice, reason)

# The reference players every game plays (README, "Players"), the keys of its ``PLAYERS``; each is
# called (facts, rng, *its params) -> Move: nash, random, level_k (k), cognitive_hierarchy (tau,
# sigma), human, shade (share: a bid of share x the value, below 1 shading, above 1 overbidding; a
# game without bids says what it plays instead).
PLAYER_KINDS = ("nash", "random", "level_k", "cognitive_hierarchy", "human", "shade")


@dataclass(frozen=True)
class ReportLabels:
    """What the report and its session browser call a game's things."""

    distance: str  # y axis of the convergence plot
    first_run: str  # x axis of the first-run CDF
    first_run_max: float  # right end of that x axis
    human: str  # label of the human reference CDF
    # a human series for the convergence plot: (label, mean d by run), if the literature has one
    human_convergence: Optional[tuple[str, tuple[float, ...]]] = None
    human_marker: Optional[tuple[float, str]] = None  # a vertical line on the first-run plot: (x, label)
    # the session browser: the run-event fields shown as a session's parameters, the field holding a run's
    # result (the target, the price), the word for an action, and the field of each seat's private value
    # (a list by seat) with the note that explains it, where the game has one
    session_params: tuple[str, ...] = ()
    outcome: str = ""
    action: str = "action"
    seat_values: Optional[str] = None
    seat_value_note: str = ""


@dataclass(frozen=True)
class Reference:
    """A published series for a plot, labelled with its source and setting.

    ``kind``: "line" (ys by run 1, 2, ... on the convergence plot), "cdf" (a cumulative distribution
    through the points (xs, ys) on the first-run plot) or "vline" (a mark at xs[0] there).
    """

    label: str
    kind: str
    xs: tuple[float, ...]
    ys: tuple[float, ...] = ()


class Game(Protocol):
    """A game's rules: what the eval, the players, the samples, the metrics and the log reader ask of
    a game module (modules satisfy Protocols structurally)."""

    # ---- rules and sessions: the cell's parameters, what the samples file holds ----
    NAME: str  # the ``game`` eval arg and the ``game`` field of its run events
    Params: type  # a frozen dataclass of the game's cell parameters, each an eval arg with its default;
    # a field with metadata {"draw": True} changes what the samples file holds
    def cell_problems(self, cell: "CellConfig") -> list[str]: ...  # what is wrong with cell.params
    def draw_session(self, rng: random.Random, index: int, cell: "CellConfig") -> "Session": ...
    def session_from_sample(self, sample: Mapping[str, Any], index: int, cell: "CellConfig") -> "Session": ...

    # ---- prompt: the text a seat reads, the history it shows, and reading it back ----
    def seat_prompt(self, cell: "CellConfig", session: "Session", run: int, seat: int,
                    past: Sequence["PastRun"]) -> Messages: ...
    def past_run(self, outcome: "RunOutcome", run: int) -> "PastRun": ...  # what later prompts show of a run
    def typical_past_run(self, run: int, seats: int, action: float) -> "PastRun": ...  # for the plan's counts
    def read_prompt(self, text: str) -> Optional["PromptFacts"]: ...  # its ``Facts``; None: not this game's
    # the PromptFacts fields a seat's prompt in an event's run must hold (checks a log's transcripts)
    def seat_facts(self, event: Mapping[str, Any], seat: int) -> dict[str, float]: ...

    # ---- scoring: one run, its log event, and reading the event back ----
    def score(self, cell: "CellConfig", session: "Session", run: int, actions: Sequence[Optional[float]],
              players: Sequence[str]) -> "RunOutcome": ...
    def event_params(self, cell: "CellConfig", session: "Session", run: int) -> dict[str, Any]: ...
    def event_result(self, outcome: "RunOutcome") -> dict[str, Any]: ...
    def outcome_from_event(self, event: Mapping[str, Any]) -> "RunOutcome": ...
    def score_event(self, event: Mapping[str, Any], actions: Sequence[Optional[float]],
                    players: Sequence[str]) -> "RunOutcome": ...  # the event's run, other actions
    def action_range(self, event: Mapping[str, Any]) -> tuple[float, float]: ...  # a valid action's bounds
    def win_share(self, run: "RunOutcome", seat: "SeatOutcome") -> float: ...

    # ---- reference players: PLAYER_KINDS -> (facts, rng, *params) -> Move ----
    PLAYERS: Mapping[str, Callable[..., Move]]


class GameReport(Protocol):
    """What the report shows of a game: its labels, first-run shares for the CDF plot, what the EAS
    hides, published references. The same module as its ``Game``, seen by the report."""

    NAME: str  # as in ``Game``
    LABELS: ReportLabels
    def first_run_share(self, event: Mapping[str, Any], seat: Mapping[str, Any]) -> Optional[float]: ...
    def human_first_run_shares(self, events: Sequence[Mapping[str, Any]], rng: random.Random,
                               n: int) -> list[float]: ...
    def diagnostics(self, runs: Sequence[Mapping[str, Any]], player: str) -> dict[str, dict[str, Any]]: ...
    def references(self, plot: str, models: Sequence[str]) -> list[Reference]: ...  # plot: convergence|first_run


def _members(protocol: type) -> tuple[str, ...]:
    return tuple(protocol.__annotations__) + tuple(
        name for name in protocol.__dict__ if not name.startswith("_") and callable(protocol.__dict__[name]))


RULE_MEMBERS = _members(Game)
REPORT_MEMBERS = _members(GameReport)
MEMBERS = RULE_MEMBERS + tuple(m for m in REPORT_MEMBERS if m not in RULE_MEMBERS)  # what a game module defines
