"""A table of seats: one session as pure data and steps, the loop every front end drives.

A ``Table`` knows the cell, the session's draw, who sits in each seat and the eval's seed. Asked for
the next wave (``wave``), it says each seat request of the runs that can be played now (run, seat,
player, prompt, seed); handed a run's replies (``take``), it reads the answers, scores the run and
gives the run's ``econarena_run`` event. At the end, ``result`` gives each player's metrics and
``cut_off`` the replies cut at the token limit. Resume is a run read back from the log and handed
to ``keep``, not a branch in anyone's loop.

No threads, no I/O, no evals, no clock: the evals eval (through the call engine), the inspect task
and any other front end send the requests their own way and hand the replies back, so a session
plays and scores the same under every one of them.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from ..core.answers import parse_choice
from ..core.outcome import RunOutcome
from ..core.prompts import prompt_text
from ..core.sessions import CellConfig, Session, history_window, waves
from ..games import get as get_game
from ..games import outcome_from_event, run_event
from .metrics import session_metrics

Prompt = list[dict[str, str]]



def call_seed(eval_seed: Any, cell: str, session: int, run: int, seat: int) -> int:
    """The seed a seat call is sent with: a function of (eval seed, cell, session, run, seat) alone, so
    it depends on neither thread timing, nor the order calls go out, nor the front end driving the table."""
    key = f"{eval_seed}:{cell}:{session}:{run}:{seat}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") >> 1

@dataclass(frozen=True)
class SeatRequest:
    """What one seat is asked in one run: the front end turns it into a call of ``player``."""

    run: int  # 0-based
    seat: int  # 1-based
    player: str
    prompt: Prompt
    seed: int  # the call's seed (``call_seed``), sent when the sampling args pass seeds

    @property
    def key(self) -> tuple[int, int]:
        return (self.run, self.seat)


@dataclass(frozen=True)
class SeatReply:
    """A seat's answer as the score reads it, and why its generation stopped ("length": cut off)."""

    text: str
    finish_reason: Optional[str] = None


@dataclass
class Table:
    """One session at one table: ``seat_names[i]`` sits in seat ``i + 1``."""

    cell_name: str
    cell: CellConfig
    session: Session
    seat_names: Sequence[str]
    eval_seed: Any
    outcomes: dict[int, RunOutcome] = field(default_factory=dict)  # run -> its scored outcome
    finish: dict[tuple[int, int], Optional[str]] = field(default_factory=dict)  # (run, seat) -> finish_reason

    def __post_init__(self) -> None:
        if len(self.seat_names) != self.cell.seats:
            raise ValueError(f"{len(self.seat_names)} players for {self.cell.seats} seats")
        self.game = get_game(self.cell.game)

    @property
    def done(self) -> bool:
        return len(self.outcomes) == self.cell.runs

    def wave(self) -> list[SeatRequest]:
        """The seat requests of the next runs that can be played side by side (all of them without
        history, one at a time with it), less runs already scored; none once the session is done."""
        for runs in waves(self.cell.runs, self.cell.history_runs):
            runs = [r for r in runs if r not in self.outcomes]
            if runs:
                return [self.request(run, seat) for run in runs for seat in range(1, self.cell.seats + 1)]
        return []

    def request(self, run: int, seat: int) -> SeatRequest:
        past = [self.game.past_run(self.outcomes[r], r) for r in history_window(run, self.cell.history_runs)]
        return SeatRequest(run=run, seat=seat, player=self.seat_names[seat - 1],
                           prompt=self.game.seat_prompt(self.cell, self.session, run, seat, past),
                           seed=call_seed(self.eval_seed, self.cell_name, self.session.index, run, seat))

    def take(self, run: int, replies: Sequence[SeatReply]) -> dict[str, Any]:
        """Score ``run`` from every seat's reply, in seat order; its ``econarena_run`` event."""
        if len(replies) != self.cell.seats:
            raise ValueError(f"run {run + 1}: {len(replies)} replies for {self.cell.seats} seats")
        for seat, reply in enumerate(replies, start=1):
            self.finish[(run, seat)] = reply.finish_reason
        outcome = self.game.score(self.cell, self.session, run, [parse_choice(r.text) for r in replies],
                                  list(self.seat_names))
        self.outcomes[run] = outcome
        return self.event(run)

    def keep(self, run: int, event: Mapping[str, Any]) -> None:
        """A run finished in a log read back (resume): scored as the log holds it, not played again."""
        self.outcomes[run] = outcome_from_event(event)
        self.finish.update({(run, seat["seat"]): seat.get("finish_reason") for seat in event["seats"]})

    def event(self, run: int) -> dict[str, Any]:
        event = run_event(self.outcomes[run], cell=self.cell_name, session=self.session.index, run=run,
                          runs=self.cell.runs, history_runs=len(history_window(run, self.cell.history_runs)),
                          game_params=self.game.event_params(self.cell, self.session, run))
        for seat in event["seats"]:  # "length": cut off at the token limit, told apart from other rule breaks
            seat["finish_reason"] = self.finish.get((run, seat["seat"]))
        return event

    def result(self, players: Sequence[str]) -> dict[str, dict[str, float]]:
        """Each player's session metrics (those that sat at the table), once the session is done."""
        if not self.done:
            raise ValueError(f"session {self.session.index}: {len(self.outcomes)} of {self.cell.runs} runs scored")
        runs = [self.outcomes[r] for r in range(self.cell.runs)]
        return {p: m for p in players if (m := session_metrics(runs, p)) is not None}

    def cut_off(self, player: str) -> int:
        """``player``'s replies cut off at the token limit: rule breaks that say more about
        max_tokens than about the player's rationality."""
        return sum(1 for run, o in self.outcomes.items() for s in o.seats
                   if s.player == player and self.finish.get((run, s.seat)) == "length")


def play_in_process(table: Table, players: Mapping[str, Any]) -> None:
    """Drive ``table`` to its end with players that answer in this process: ``players[name].reply(text,
    seed)`` gives the reply to a prompt's text (the built-in players of ``games.builtin``)."""
    while requests := table.wave():
        replies = {r.key: SeatReply(players[r.player].reply(prompt_text(r.prompt), r.seed)) for r in requests}
        for run in sorted({r.run for r in requests}):
            table.take(run, [replies[(run, seat)] for seat in range(1, table.cell.seats + 1)])
