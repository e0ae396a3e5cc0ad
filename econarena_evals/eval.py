"""The EconArena eval: turns sessions into seat calls and scored runs into log events.

All game logic lives in the pure modules (the game's module in ``games/``, ``metrics``, ``utils``);
this class only decides who sits where, asks each seat, and records what happened (contract §8).
It asks the cell's game for prompts, scores and event fields, and never branches on which game.
"""
from __future__ import annotations

import hashlib
import inspect
import logging
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import evals
import evals.record
from evals.api import CompletionFn
from evals.record import RecorderBase

from . import resume
from .calls import CallPolicy, call_all, resolve_max_concurrency
from .endpoints import single_try
from .fnsettings import players_settings, record_players
from .redact import redact_text
from .metrics import METRICS, final_report, session_metrics
from .outcome import RunOutcome, run_event
from .games import get as get_game
from .prompts import PastRun
from .sessions import CellConfig, Session, history_window, seat_players, unique_names, waves
from .usage import flatten_usage_on_record, unify_usage_keys
from .utils import parse_choice

logger = logging.getLogger(__name__)

SessionResult = Optional[dict[str, dict[str, float]]]  # player -> metrics; None if the session errored


@dataclass
class _SessionState:
    session: Session
    seat_names: list[str]
    seat_fns: list[CompletionFn]
    outcomes: dict[int, RunOutcome] = field(default_factory=dict)
    error: Optional[str] = None


# What evals itself passes to every eval's constructor besides the YAML args.
EVALS_KWARGS = frozenset({"seed", "name", "registry", "eval_registry_path"})


def _arg(name: str, value: Any, kind: type) -> Any:
    """An eval arg as int or float, with a message naming it (--extra_eval_params gives strings)."""
    try:
        number = float(value)
        if kind is int:
            if not number.is_integer():
                raise ValueError
            return int(number)
        if not math.isfinite(number):
            raise ValueError
        return number
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"eval arg {name} must be {what}, got {value!r}") from None


class EconArena(evals.Eval):
    def __init__(
        self,
        completion_fns: list[CompletionFn],
        samples_jsonl: str,
        game: str,
        *args: Any,
        runs: int = 10,
        seats: int = 5,
        history_runs: int = 0,
        prize: float = 100,
        c_bar_min: int = 10,
        c_bar_max: int = 100,
        value_mean: float = 50,
        value_sd: float = 10,
        value_min: int = 1,
        value_max: int = 100,
        assets: float = 100,
        fee: float = 10,
        temperature: Optional[float] = 0.7,
        max_tokens: Optional[int] = 1024,
        pass_seed: bool = True,
        max_concurrency: Optional[int] = None,
        call_timeout_s: float = 120.0,
        max_attempts: int = 4,
        opponents: Optional[Sequence[str]] = None,
        breaker_threshold: int = 20,
        probe_interval_s: float = 30.0,
        backoff_base_s: float = 1.0,
        backoff_cap_s: float = 20.0,
        resume_from: Optional[str] = None,
        **kwargs: Any,
    ):
        unknown = sorted(set(kwargs) - EVALS_KWARGS)
        if unknown:
            raise ValueError(f"unknown eval arg(s) {', '.join(unknown)}; EconArena takes: "
                             f"{', '.join(sorted(ECONARENA_ARGS))}")
        super().__init__(completion_fns, *args, samples_jsonl=samples_jsonl, **kwargs)
        self.cell = CellConfig(
            game=game, runs=_arg("runs", runs, int), seats=_arg("seats", seats, int),
            history_runs=_arg("history_runs", history_runs, int), prize=_arg("prize", prize, float),
            c_bar_min=_arg("c_bar_min", c_bar_min, int), c_bar_max=_arg("c_bar_max", c_bar_max, int),
            value_mean=_arg("value_mean", value_mean, float), value_sd=_arg("value_sd", value_sd, float),
            value_min=_arg("value_min", value_min, int), value_max=_arg("value_max", value_max, int),
            assets=_arg("assets", assets, float), fee=_arg("fee", fee, float),
        )
        if temperature is not None and not 0 <= _arg("temperature", temperature, float) <= 2:
            raise ValueError(f"temperature must be a number from 0 to 2, got {temperature!r}")
        if max_tokens is not None and _arg("max_tokens", max_tokens, int) < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        temperature = None if temperature is None else float(temperature)
        max_tokens = None if max_tokens is None else int(max_tokens)
        if str(pass_seed).strip().lower() not in {"1", "0", "true", "false", "yes", "no"}:
            raise ValueError(f"pass_seed must be true or false, got {pass_seed!r}")
        self.game = get_game(self.cell.game)
        self.cell_name = self.name.split(".")[1]
        self.sampling_kwargs = {
            k: v for k, v in (("temperature", temperature), ("max_tokens", max_tokens)) if v is not None
        }
        self.pass_seed = str(pass_seed).strip().lower() in {"1", "true", "yes"}
        self.policy = CallPolicy(
            max_concurrency=resolve_max_concurrency(max_concurrency),
            call_timeout_s=_arg("call_timeout_s", call_timeout_s, float),
            max_attempts=_arg("max_attempts", max_attempts, int),
            breaker_threshold=_arg("breaker_threshold", breaker_threshold, int),
            probe_interval_s=_arg("probe_interval_s", probe_interval_s, float),
            backoff_base_s=_arg("backoff_base_s", backoff_base_s, float),
            backoff_cap_s=_arg("backoff_cap_s", backoff_cap_s, float),
        )
        # Opponent cells fix the other seats in YAML: completion fn names, made in run().
        self.opponent_names = [str(n) for n in (opponents or [])]
        players = len(self.completion_fns) + len(self.opponent_names)
        if players > self.cell.seats:
            # seat_players would leave the extra players out without a word
            raise ValueError(
                f"{len(self.completion_fns)} completion fn(s)"
                + (f" and {len(self.opponent_names)} opponent(s)" if self.opponent_names else "")
                + f" for {self.cell.seats} seats: give at most {self.cell.seats} players, or more seats")
        self.roster: list[tuple[str, CompletionFn]] = [
            (f"player{i + 1}", fn) for i, fn in enumerate(self.completion_fns)]
        self.player_names = [name for name, _ in self.roster]
        self._errors: list[tuple[int, str]] = []  # (session, error); list.append is thread-safe
        self.resume_from = resume.resume_path(resume_from)  # the arg, else $ECONARENA_RESUME
        self.resumed: dict[int, resume.DoneSession] = {}  # sessions copied from that log, by index

    # ---- the shell around the pure core ----

    def run(self, recorder: RecorderBase) -> dict[str, Any]:
        self._seat_roster(list(getattr(recorder.run_spec, "completion_fns", None) or []))
        record_players(recorder, self.players_settings)
        # Read every session up front: a bad samples file fails here, before any call is paid for,
        # and eval_sample gets the parsed Session instead of reading the line again.
        sessions = [Session.from_sample(sample, self.cell) for sample in self.get_samples()]
        flatten_usage_on_record(recorder)
        if self.resume_from:  # refused here, before any call, if the log is another condition
            plan = resume.plan(self.resume_from, resume.spec_of(recorder.run_spec), self.cell.runs,
                               self.player_names, own_log=resume.log_path_of(recorder))
            resume.check_samples(plan.done, sessions, self._game_params)
            self.resumed = plan.done
            logger.info("resuming %s: %d finished session(s) kept, %d to play (%d of them cut off or errored "
                        "there)", plan.source, len(plan.done), len(sessions) - len(plan.done), len(plan.replay))
        try:
            results: list[SessionResult] = self.eval_all_samples(recorder, sessions)
        except BaseException as exc:  # Ctrl-C included: tell how to go on from what is on disk
            resume.hint_at_exit(recorder, f"The run stopped early ({type(exc).__name__}).")
            raise
        if any(r is None for r in results):
            errored = sum(r is None for r in results)
            resume.hint_at_exit(recorder, f"{errored} session(s) errored.", finished=len(results) - errored)
        unify_usage_keys(recorder)
        report = final_report(results, self.player_names)
        if self._errors:
            # Loud on purpose: an errored session is left out of the means, and a report with fewer
            # sessions than asked for must not pass for a clean one.
            first = min(self._errors)
            print(f"econarena: {len(self._errors)} of {len(results)} session(s) of {self.name} errored "
                  f"and are left out of the means; first: session {first[0]}: {first[1]}", file=sys.stderr)
        return report

    def _seat_roster(self, cli_names: list[str]) -> None:
        """Who can sit: the command line's players in order, then the cell's opponents.

        Players are told apart by name; an opponent listed several times is one player in several
        seats, and one that shares a name with a command-line player gets a '#2' suffix.
        """
        if len(cli_names) != len(self.completion_fns):
            cli_names = [f"player{i + 1}" for i in range(len(self.completion_fns))]
        distinct_opponents = list(dict.fromkeys(self.opponent_names))
        opponent_fns = {n: self.registry.make_completion_fn(n) for n in distinct_opponents}
        # A player is the model that played (econarena/chat --completion_args model=X is
        # econarena/chat:X), described once for the econarena_players event.
        self.players_settings = players_settings(cli_names, self.completion_fns, distinct_opponents,
                                                 [opponent_fns[n] for n in distinct_opponents])
        names = [entry["name"] for entry in self.players_settings]
        opponent_key = dict(zip(distinct_opponents, names[len(cli_names):]))
        self.roster = list(zip(names[: len(cli_names)], self.completion_fns)) + [
            (opponent_key[n], opponent_fns[n]) for n in self.opponent_names]
        self.player_names = list(dict.fromkeys(name for name, _ in self.roster))

    def eval_sample(self, sample: Any, rng: Any) -> SessionResult:
        session = sample if isinstance(sample, Session) else Session.from_sample(sample, self.cell)
        if session.index in self.resumed:  # finished in the log resumed from: copy, do not play
            result = resume.rerecord(self.resumed[session.index])
            resume.durable()
            return result
        seating = seat_players(len(self.roster), self.cell.seats, session.index)
        state = _SessionState(
            session=session,
            seat_names=[self.roster[p][0] for p in seating],
            seat_fns=[self.roster[p][1] for p in seating],
        )
        try:
            for wave in waves(self.cell.runs, self.cell.history_runs):
                self._play_wave(state, wave)
                if state.error is not None:
                    break
        except Exception as exc:  # a bug must not throw away the other sessions: record and go on
            logger.exception("session %s failed", session.index)
            state.error = f"{type(exc).__name__}: {exc}"

        result: SessionResult = None
        if state.error is None:
            runs = [state.outcomes[r] for r in range(self.cell.runs)]
            result = {p: m for p in self.player_names if (m := session_metrics(runs, p)) is not None}
        self._record_session(state, result)
        resume.durable()  # on disk before the session counts as done: kill -9 loses only sessions in flight
        return result

    def _play_wave(self, state: _SessionState, wave: Sequence[int]) -> None:
        calls, keys = [], []
        for run in wave:
            past = [self._past_run(state.outcomes[r], r) for r in history_window(run, self.cell.history_runs)]
            for seat in range(1, self.cell.seats + 1):
                prompt = self._prompt(state.session, run, seat, past)
                fn = state.seat_fns[seat - 1]
                calls.append((fn, self._seat_call(fn, prompt, self._call_seed(state, run, seat))))
                keys.append((run, seat))
        replies = dict(zip(keys, call_all(calls, self.policy)))
        for run in wave:
            answers = [replies[(run, seat)] for seat in range(1, self.cell.seats + 1)]
            failed = [(seat, a) for seat, a in enumerate(answers, start=1) if isinstance(a, BaseException)]
            if failed:
                seat, exc = failed[0]
                if state.error is None:
                    state.error = f"run {run} seat {seat}: {type(exc).__name__}: {exc}"
                continue
            outcome = self._score(state, run, [parse_choice(a) for a in answers])
            state.outcomes[run] = outcome
            evals.record.record_event("econarena_run", run_event(
                outcome, cell=self.cell_name, session=state.session.index, run=run, runs=self.cell.runs,
                history_runs=len(history_window(run, self.cell.history_runs)),
                game_params=self._game_params(state.session, run),
            ))

    def _seat_call(self, fn: CompletionFn, prompt: list[dict[str, str]], seed: int):
        kwargs: dict[str, Any] = dict(self.sampling_kwargs)
        if self.pass_seed:
            kwargs["seed"] = seed
        send = single_try(fn, self.policy.call_timeout_s)

        def call() -> str:
            try:
                completions = send(prompt, **kwargs).get_completions()
            except TypeError as exc:
                if "keyword argument" not in str(exc):
                    raise
                raise TypeError(
                    f"{exc}. The completion fn must accept the keyword arguments the eval passes "
                    f"({', '.join(sorted(kwargs))}): define __call__(self, prompt, **kwargs)") from exc
            return completions[0] if completions else ""

        return call

    def _call_seed(self, state: _SessionState, run: int, seat: int) -> int:
        """Per (eval seed, cell, session, run, seat): independent of thread timing, stable on rerun."""
        key = f"{self.seed}:{self.cell_name}:{state.session.index}:{run}:{seat}"
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") >> 1

    # ---- the game-specific pieces: the game says ----

    def _prompt(self, session: Session, run: int, seat: int, past: Sequence[PastRun]) -> list[dict[str, str]]:
        return self.game.seat_prompt(self.cell, session, run, seat, past)

    def _score(self, state: _SessionState, run: int, actions: list[Optional[float]]) -> RunOutcome:
        return self.game.score(self.cell, state.session, run, actions, state.seat_names)

    def _game_params(self, session: Session, run: int) -> dict[str, Any]:
        return self.game.event_params(self.cell, session, run)

    @staticmethod
    def _past_run(outcome: RunOutcome, run: int) -> PastRun:
        actions = tuple(s.action if s.valid else None for s in outcome.seats)
        valid = [a for a in actions if a is not None]
        return PastRun(
            run=run + 1,
            actions=actions,
            winners=outcome.winners,
            average=math.fsum(valid) / len(valid) if valid else None,
            target=outcome.target,
            price=outcome.price,
        )

    def _record_session(self, state: _SessionState, result: SessionResult) -> None:
        data: dict[str, Any] = {"cell": self.cell_name, "session": state.session.index,
                                "player": self.player_names[0]}
        for i, player in enumerate(self.player_names):
            metrics = (result or {}).get(player)
            for metric in METRICS:
                data[metric if i == 0 else f"{metric}/{player}"] = None if metrics is None else metrics[metric]
        data["errored"] = state.error is not None
        if state.error is not None:  # an endpoint's error message may quote a key: mask it
            state.error = redact_text(state.error)
            self._errors.append((state.session.index, state.error))
        data["error"] = state.error
        evals.record.record_event("econarena_session", data)


ECONARENA_ARGS = frozenset(inspect.signature(EconArena.__init__).parameters) - {"self", "args", "kwargs",
                                                                                  "completion_fns"}
