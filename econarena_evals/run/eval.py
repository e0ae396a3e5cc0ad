"""The EconArena eval: turns sessions into seat calls and scored runs into log events.

All game logic lives in the pure modules (the game's module in ``games/``, ``metrics``, ``answers``);
this class only decides who sits where, asks each seat, and records what happened (contract §8).
It asks the cell's game for prompts, scores and event fields, and never branches on which game.
"""
from __future__ import annotations

import contextvars
import logging
import re
import threading
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional, Sequence

import evals
import evals.eval
import evals.record
from evals.api import CompletionFn
from evals.record import RecorderBase

from ..calls.batches import Answer, BatchRounds, Line, LineFailed
from ..calls.dispatch import call_all
from ..calls.errors import described
from ..calls.seat_call import SeatCall
from ..calls.state import CallState
from ..core.answers import what_scores
from ..core.closest import with_closest
from ..core.prompts import prompt_text
from ..core.schedule import Schedule, balance_words, seat_roster
from ..core.sessions import Session, seat_players
from ..fns.batch_api import ENDPOINT as BATCH_ENDPOINT
from ..fns.batch_api import batch_api, parsed
from ..fns.endpoints import answered_send, check_args, lane_key, recorded_prompt, reserved_completion_tokens, seat_send
from ..fns.identity import players_settings
from ..fns.players import BuiltinPlayer, builtin_arg_refusal
from ..fns.usage import unify_usage_keys
from ..games import get as get_game
from ..games import session_from_sample
from ..integration import status as exit_status
from ..integration.recorder import LogNames, durable, log_path_of, samples_in_order, wrap, write_events_quickly
from ..log.format import (
    BATCH_EVENT,
    BATCH_ID,
    EVAL_RECORDER,
    FORMAT_KEY,
    LOG_FORMAT,
    PLAYERS_EVENT,
    PLAYERS_SAMPLE_ID,
    RUN_EVENT,
    SEAT_TAG,
    SESSION_EVENT,
    UNRECORDABLE_EVENT,
    batch_custom_id,
    final_report,
    session_fields,
)
from ..score.table import SeatReply, SeatRequest, Table
from . import config, disk, resume
from .plan import estimate_cell, estimate_players, melee_lines
from .progress import interval_asked
from .shell import Shell

logger = logging.getLogger(__name__)

SessionResult = Optional[dict[str, dict[str, float]]]  # player -> metrics; None if the session errored

@dataclass
class _SessionState:
    table: Table  # the session's seats, prompts and scored runs
    seat_fns: list[CompletionFn]
    error: Optional[str] = None
    reused: int = 0  # seat calls taken from the log resumed from instead of being sent


# What evals itself passes to every eval's constructor besides the YAML args.
EVALS_KWARGS = frozenset({"seed", "name", "registry", "eval_registry_path"})


class EconArena(evals.Eval):
    """Eval args (YAML ``args`` and ``--extra_eval_params``) are the fields of ``config.CellArgs``,
    ``Sampling`` and ``CallPolicy`` (``config``), plus ``opponents`` and ``resume_from``."""

    def __init__(self, completion_fns: list[CompletionFn], samples_jsonl: str, *args: Any, **kwargs: Any):
        try:
            self._setup(completion_fns, samples_jsonl, *args, **kwargs)
        except ValueError as exc:  # a bad arg: said in one line before any call
            exit_status.refuse(exc)

    def _setup(self, completion_fns: list[CompletionFn], samples_jsonl: str, *args: Any, **kwargs: Any) -> None:
        taken = config.eval_args(kwargs.get("game"))  # a game outside the package brings its own
        unknown = sorted(set(kwargs) - taken - EVALS_KWARGS)
        if unknown:
            # how many sessions is oaieval's to say, not an eval arg's: the likeliest guess with no close name
            fewer = ("; to play fewer sessions, oaieval's --max_samples N plays the first N"
                     if any(re.search(r"se+s+io|sample", k) for k in unknown) else "")
            raise ValueError(f"unknown eval arg(s) {with_closest(unknown, sorted(taken))}{fewer}; EconArena takes: "
                             f"{', '.join(sorted(taken))}")
        ours = {k: kwargs.pop(k) for k in list(kwargs) if k in taken}
        for fn in completion_fns:
            check_args(fn)
        refusal = builtin_arg_refusal(completion_fns)  # a run of built-in players: an arg none takes is said
        if refusal:
            raise ValueError(refusal)
        super().__init__(completion_fns, *args, samples_jsonl=samples_jsonl, **kwargs)
        self.cell = config.build("cell", ours)
        foreign = config.foreign_params(self.cell, ours)
        if foreign:
            raise ValueError(foreign)
        sampling = config.build("sampling", ours)
        self.policy = config.build("policy", ours)
        self.game = get_game(self.cell.game)
        self.cell_name = self.name.split(".")[1]
        self.sampling_kwargs = sampling.kwargs()
        self.pass_seed = sampling.pass_seed
        opponents, resume_from = ours.get("opponents"), ours.get("resume_from")
        # Opponent cells fix the other seats in YAML: completion fn names, made in run().
        self.opponent_names = [str(n) for n in (opponents or [])]
        # a melee: the completion fns are the roster, seated at tables by the schedule (core/schedule)
        self.tables_per_player = config.melee_args(ours)
        config.environment(ours)  # a melee's environment (senior: a melee's top five again) refused if bad
        self.schedule: Optional[Schedule] = None  # made in run(), from the roster and the eval's seed
        players = len(self.completion_fns) + len(self.opponent_names)
        if self.tables_per_player is not None:
            if self.opponent_names:
                raise ValueError("a melee cell takes no opponents: its roster is the completion fns")
            if len(self.completion_fns) < 2:
                raise ValueError(f"a melee needs a roster of at least 2 completion fns, got {len(self.completion_fns)}"
                                 " (oaieval P1,P2,... econarena.<cell>_melee)")
        elif players > self.cell.seats:
            # seat_players would leave the extra players out without a word
            raise ValueError(
                f"{len(self.completion_fns)} completion fn(s)"
                + (f" and {len(self.opponent_names)} opponent(s)" if self.opponent_names else "")
                + f" for {self.cell.seats} seats: give at most {self.cell.seats} players, or more seats")
        self.roster: list[tuple[str, CompletionFn]] = [
            (f"player{i + 1}", fn) for i, fn in enumerate(self.completion_fns)]
        self.player_names = [name for name, _ in self.roster]
        self._lanes: dict[int, Any] = {}  # id(fn) -> its rate-limit lane
        self._sends: dict[tuple[int, str], Any] = {}  # (id(fn), player) -> fn as one try of a seat call (``seat_send``)
        self.resume_from = resume.resume_path(resume_from)  # the arg, else $ECONARENA_RESUME
        self.resumed: dict[int, resume.DoneSession] = {}  # sessions copied from that log, by index
        self.resumed_runs: dict[int, resume.PartSession] = {}  # finished runs of its other sessions
        self._rounds: Optional[BatchRounds] = None  # the batch mode's waves, when a player is in batch mode

    # ---- the shell around the pure core ----

    def run(self, recorder: RecorderBase) -> dict[str, Any]:
        # This run's calls: its policy, stop, lanes, breakers and cap, handed to all that makes or
        # stops its calls; a run before this one in the same process (in-process use) shares none of it.
        self.call_state = call_state = CallState(self.policy)
        # Every event: tagged with its seat call, its usage made flat, stored as it can be written,
        # a seat call's on disk at once (the recorder's steps, under the log format's names). A log
        # that cannot be written stops the run (exit 4), not a traceback.
        wrap(recorder, LogNames(seat_tag=SEAT_TAG, unrecordable=UNRECORDABLE_EVENT, session=SESSION_EVENT),
             disk.on_write_error(recorder, call_state))
        write_events_quickly()  # the same lines, without evals' deep copy of each event
        self.shell = shell = Shell(self.name, self.cell_name, recorder, self.resume_from, call_state)
        self._seat_roster(list(getattr(recorder.run_spec, "completion_fns", None) or []))
        # who played, before any seat call, and on disk at once: the roster is in the log even if the run is killed
        recorder.record_event(PLAYERS_EVENT, {"players": list(self.players_settings), FORMAT_KEY: LOG_FORMAT},
                              sample_id=PLAYERS_SAMPLE_ID)
        durable(recorder)
        # Read every session up front: a bad samples file fails here, before any call is paid for,
        # and eval_sample gets the parsed Session instead of reading the line again.
        try:
            sessions = [session_from_sample(sample, self.cell) for sample in self.get_samples()]
            if self.tables_per_player is not None:  # one sample is one table of the tournament
                sessions = self._tables(sessions)
            if self.resume_from:  # refused here, before any call, if the log is another condition
                resumption = resume.resumption(self.resume_from, resume.spec_of(recorder.run_spec), self.cell.runs,
                                   self.player_names, own_log=log_path_of(recorder))
                resume.check_samples(resumption.done, sessions, self._game_params)
                resume.check_samples(resumption.parts, sessions, self._game_params)
                self.resumed, self.resumed_runs = resumption.done, resumption.parts
            # read once: a progress interval that is no number of seconds is refused before any call
            progress_s = interval_asked()
        except ValueError as exc:  # a bad samples file, a log of another condition: one line, no call
            exit_status.refuse(exc)
        # the sessions evals will hand out (it shuffles, then applies --max_samples), less those resumed
        handed_out = samples_in_order(sessions)
        to_play = [s for s in handed_out if s.index not in self.resumed]
        if self.resume_from:  # counted among the sessions this run plays (--max_samples), not the whole file
            shell.resuming(resumption.source, resumption.forged, len(handed_out), len(to_play),
                           len({s.index for s in to_play} & set(resumption.replay)), resumption.kept_runs,
                           resumption.kept_calls)
        fn = self.roster[0][1]
        builtin = [isinstance(f, BuiltinPlayer) for _, f in self.roster]  # they send no request, cost nothing
        # a run of built-in players alone: the self-play plan counts their calls; a melee's never
        # reserves tokens for a player that sends nothing
        sending = not all(builtin) or self.schedule is not None

        def sends(session: int, seat: int) -> bool:
            return not sending or not builtin[self._seating(session)[seat - 1]]

        estimate = estimate_cell(self.cell, to_play, getattr(fn, "model", None),
                                 reserved_completion_tokens(fn, self.sampling_kwargs), kept=self._kept_call,
                                 sends=sends)
        melee: list[str] = []
        if self.schedule is not None:  # a melee: each player's own calls, token count and reserve
            models = [None if b else str(getattr(f, "model", None) or name)
                      for (name, f), b in zip(self.roster, builtin)]
            each = estimate_players(self.cell, to_play, self._seating, models,
                                    [reserved_completion_tokens(f, self.sampling_kwargs) for _, f in self.roster],
                                    kept=self._kept_call)
            mine = [e for e, m in zip(each, models) if m is not None]
            estimate.prompt_tokens = sum(e.prompt_tokens for e in mine)
            estimate.completion_reserved = sum(e.completion_reserved for e in mine)
            estimate.completion_expected = sum(e.completion_expected for e in mine)
            if len({e.counted for e in mine}) > 1:
                estimate.counted = "each model's own count"
            # each model at the prices its fn carries (a roster file's), as econarena-plan prices it
            prices = {name: fn.prices for name, (_, fn) in zip(self.player_names, self.roster)
                      if getattr(fn, "prices", None) is not None}
            melee = melee_lines(self.player_names, models, each, len(self.schedule.tables), self.cell.seats,
                                self.cell.runs, prices, balance_words(self.schedule, self.tables_per_player))
        estimate.kept += (len(handed_out) - len(to_play)) * self.cell.runs * self.cell.seats  # finished, copied
        # the built-in players' calls are made too (the progress line counts every answered call)
        builtin_calls = sum(1 for s in to_play for run in range(self.cell.runs) for seat in range(1, self.cell.seats + 1)
                            if not sends(s.index, seat) and not self._kept_call(s.index, run, seat))
        progress = shell.plan(estimate, builtin_calls, progress_s, builtin_only=not sending)
        for line in melee:  # the schedule's size and each model's calls, before any call
            shell.say(f"econarena: plan: {self.name}: {line}")
        self._rounds = self._batch_rounds(recorder, len(to_play), resumption.batches if self.resume_from else {})
        if self._rounds is not None:
            shell.batch_plan(estimate, self._rounds)
        # batch mode: every session in play at once, so that a wave of all of them is one batch
        with shell.playing(progress, threads=len(to_play) if self._rounds else 0):
            results: list[SessionResult] = self.eval_all_samples(recorder, sessions)
        unify_usage_keys(recorder)
        report = final_report(results, self.player_names)
        shell.ended(len(results), sum(r is None for r in results))
        return report

    def _batch_rounds(self, recorder: RecorderBase, sessions: int, adopted: dict[str, Any]) -> Optional[BatchRounds]:
        """The waves of batch calls, if any player is in batch mode; each batch is in the log at once."""
        apis = [fn for _, fn in self.roster if batch_api(fn) is not None]
        if not apis:
            return None
        lock = threading.Lock()

        def record(data: dict[str, Any]) -> None:
            with lock:  # on disk before the next step: a resume must find every batch submitted
                recorder.record_event(BATCH_EVENT, {"cell": self.cell_name, **data}, sample_id=BATCH_EVENT)
                durable(recorder)

        return BatchRounds(self.call_state, sessions, min(fn.batch_poll_s for fn in apis), BATCH_ENDPOINT, record,
                     self.shell.say, adopted=adopted)

    def _tables(self, sessions: Sequence[Session]) -> list[Session]:
        """A melee's tables as the samples evals hands out: table ``k`` plays the ``k``-th session of
        the samples file (cycled) with the schedule's seating; its index is the table's, in the log too.
        The schedule seats the roster by name, so the order the command line lists it in changes nothing."""
        if not sessions:
            raise ValueError("a melee needs at least one session in its samples file")
        config.check_roster_once(self._cli_names)
        self.schedule = seat_roster([name for name, _ in self.roster], self.cell.seats, self.tables_per_player,
                                    self.seed)
        return [Session(k, sessions[k % len(sessions)].drawn) for k in range(len(self.schedule.tables))]

    def _seating(self, session: int) -> Sequence[int]:
        """Which roster entry sits in each seat of a session (a melee: of a table)."""
        if self.schedule is not None:
            return self.schedule.tables[session]
        return seat_players(len(self.roster), self.cell.seats, session)

    def _kept_call(self, session: int, run: int, seat: int) -> bool:
        """True if the log resumed from answers this seat call (a kept run, or a reusable reply)."""
        part = self.resumed_runs.get(session)
        return part is not None and (run in part.runs or (run, seat) in part.calls)

    def _seat_roster(self, cli_names: list[str]) -> None:
        """Who can sit: the command line's players in order, then the cell's opponents.

        Players are told apart by name; an opponent listed several times is one player in several
        seats, and one that shares a name with a command-line player gets a '#2' suffix.
        """
        if len(cli_names) != len(self.completion_fns):
            cli_names = [f"player{i + 1}" for i in range(len(self.completion_fns))]
        self._cli_names = list(cli_names)
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
        session = sample if isinstance(sample, Session) else session_from_sample(sample, self.cell)
        if session.index in self.resumed:  # finished in the log resumed from: copy, do not play
            done = self.resumed[session.index]
            _record_again(done.sample_id, done.events)
            durable()
            self.shell.counts.add(sessions=1, calls=sum(t == "sampling" for t, _ in done.events))
            return done.result
        if self._rounds is not None:
            self._rounds.enter()
        seating = self._seating(session.index)
        table = Table(self.cell_name, self.cell, session, [self.roster[p][0] for p in seating], self.seed)
        state = _SessionState(table=table, seat_fns=[self.roster[p][1] for p in seating])
        part = self.resumed_runs.get(session.index)
        try:
            if part is not None:  # runs it finished in the log resumed from: kept, not played again
                for run, event in part.runs.items():
                    table.keep(run, event)
                _record_again(part.sample_id, part.events)
                state.reused += sum(t == "sampling" for t, _ in part.events)
                self.shell.counts.add(calls=state.reused)
            while state.error is None and (requests := table.wave()):
                self._play_wave(state, requests)
        except Exception as exc:  # a bug must not throw away the other sessions: record and go on
            logger.exception("session %s failed", session.index)
            state.error = f"{type(exc).__name__}: {exc}"

        if self._rounds is not None:
            self._rounds.leave()  # the next wave need not wait for this session
        result: SessionResult = None
        if state.error is None:
            result = table.result(self.player_names)
        self._record_session(state, result)
        durable()  # on disk before the session counts as done: kill -9 loses only sessions in flight
        self.shell.session_done(finished=result is not None)
        return result

    def _play_wave(self, state: _SessionState, requests: Sequence[SeatRequest]) -> None:
        """The table's requests as seat calls (or replies the log resumed from holds), its runs scored."""
        table = state.table
        calls, keys, lanes, costs = [], [], [], []
        batched: list[tuple[CompletionFn, SeatRequest, dict[str, Any]]] = []
        reused: dict[tuple[int, int], SeatReply] = {}
        part = self.resumed_runs.get(table.session.index)
        reserved: dict[int, int] = {}  # id(fn) -> the completion tokens its requests reserve, asked once a wave
        for request in requests:
            fn = state.seat_fns[request.seat - 1]
            recorded = part.calls.get(request.key) if part is not None else None
            if recorded is not None:  # answered in the log resumed from: reused if the request is the same
                text = resume.reusable_reply(recorded, recorded_prompt(fn, request.prompt), request.player)
                if text is not None:
                    evals.record.record_event("sampling", recorded)  # as it was, under this session's id
                    reused[request.key] = SeatReply(text, recorded.get("finish_reason"))
                    continue
            tag = {"cell": self.cell_name, "session": table.session.index, "run": request.run, "seat": request.seat,
                   "player": request.player}
            if self._rounds is not None and batch_api(fn) is not None:
                batched.append((fn, request, tag))
                continue
            calls.append((fn, self._seat_call(fn, request.prompt, request.seed, tag)))
            keys.append(request.key)
            lanes.append(self._lane(fn))
            # what the request reserves against a tokens-per-minute limit: prompt (~4 chars a token) + max_tokens
            if id(fn) not in reserved:
                reserved[id(fn)] = reserved_completion_tokens(fn, self.sampling_kwargs)
            costs.append(len(prompt_text(request.prompt)) / 4 + reserved[id(fn)])
        if reused:
            state.reused += len(reused)
            self.shell.counts.add(calls=len(reused))
            durable()
        replies: dict[tuple[int, int], Any] = dict(reused)
        for key, (_, call), answer in zip(keys, calls, call_all(self.call_state, calls, lanes, costs)):
            replies[key] = answer if isinstance(answer, BaseException) else self._answered(call, answer)
        if batched:
            replies.update(self._batch_calls(state, batched))
        for run in sorted({request.run for request in requests}):
            answers = [replies[(run, seat)] for seat in range(1, self.cell.seats + 1)]
            failed = [(seat, a) for seat, a in enumerate(answers, start=1) if isinstance(a, BaseException)]
            if failed:
                seat, exc = failed[0]
                if state.error is None:
                    # runs counted from 1, as seats are, wherever a person reads them; a melee's
                    # tables seat many players: the one whose call failed is named
                    who = f" ({table.seat_names[seat - 1]})" if self.schedule is not None else ""
                    state.error = f"run {run + 1} seat {seat}{who}: {described(exc)}"
                continue
            evals.record.record_event(RUN_EVENT, table.take(run, answers))

    def _batch_calls(self, state: _SessionState, batched: Sequence[tuple[CompletionFn, SeatRequest, dict[str, Any]]]
                     ) -> dict[tuple[int, int], Any]:
        """Seat calls of players in batch mode: put in the current wave, then each answer recorded as
        the synchronous path records it, in the call's own context (its seat tag); (run, seat) -> reply."""
        assert self._rounds is not None
        lines, sent = [], []
        for fn, request, tag in batched:
            kwargs = self._call_kwargs(request.seed)
            messages, body = fn.batch_request(request.prompt, **kwargs)
            sample_id = f"{self.name.split('.')[0]}.{self.cell_name}.{tag['session']}"
            lines.append((batch_api(fn), Line(batch_custom_id(sample_id, tag["run"], tag["seat"], body), body)))
            sent.append(messages)
        replies: dict[tuple[int, int], Any] = {}
        fallback = []
        for (fn, request, tag), messages, result in zip(batched, sent, self._rounds.call(lines)):
            key = request.key
            if isinstance(result, Answer):
                answer = partial(fn.answer, messages, parsed(result.body), **{BATCH_ID: result.batch_id})
                call = self._seat_call(fn, request.prompt, request.seed, tag, send=answered_send(answer, tag["player"]))
                try:
                    text = contextvars.copy_context().run(call)
                except Exception as exc:  # noqa: BLE001 - a reply that is no completion: the call failed
                    replies[key] = exc
                else:
                    replies[key] = self._answered(call, text)
            elif isinstance(result, LineFailed) and result.transient and getattr(fn, "batch_fallback", False):
                fallback.append((key, fn, self._seat_call(fn, request.prompt, request.seed, tag)))
            else:
                replies[key] = result
        if fallback:  # the user allowed the lines no batch answered to go synchronously
            self.shell.say(f"econarena: {len(fallback)} call(s) of session {state.table.session.index} no batch "
                           "answered go synchronously (batch_fallback=yes), at the synchronous price")
            answers = call_all(self.call_state, [(fn, call) for _, fn, call in fallback],
                               [self._lane(fn) for _, fn, _ in fallback])
            replies.update({key: answer if isinstance(answer, BaseException) else self._answered(call, answer)
                            for (key, _, call), answer in zip(fallback, answers)})
        return replies

    def _lane(self, fn: CompletionFn) -> Any:
        """What shares a rate limit with ``fn``'s requests, worked out once per fn (it hashes the key)."""
        if id(fn) not in self._lanes:
            self._lanes[id(fn)] = lane_key(fn) or ("player", id(fn))
        return self._lanes[id(fn)]

    def _call_kwargs(self, seed: int) -> dict[str, Any]:
        kwargs: dict[str, Any] = dict(self.sampling_kwargs)
        if self.pass_seed:
            kwargs["seed"] = seed
        return kwargs

    def _seat_call(self, fn: CompletionFn, prompt: list[dict[str, str]], seed: int, tag: dict[str, Any],
                   send: Optional[Any] = None) -> SeatCall:
        """The seat call as a value: ``send`` (default: ``fn`` by a request of its own) answers it."""
        if send is None:
            key = (id(fn), tag["player"])
            if key not in self._sends:  # the same for every call of fn: made once
                self._sends[key] = seat_send(fn, self.policy.call_timeout_s, tag["player"])
            send = self._sends[key]
        return SeatCall(tag=tag, prompt=prompt, kwargs=self._call_kwargs(seed), send=send, recorded_by=EVAL_RECORDER)

    def _answered(self, seat_call: SeatCall, text: str) -> SeatReply:
        """What the run does with a seat call's reply, handed back by the engine: the counts see it,
        and only what the score reads is held until the run is scored. Its event is on disk already,
        a fn that records nothing included (``fns.endpoints.seat_send``)."""
        self.shell.counts.add(sent=1)
        return SeatReply(what_scores(text), seat_call.finish_reason)

    def _game_params(self, session: Session, run: int) -> dict[str, Any]:
        return self.game.event_params(self.cell, session, run)

    def _record_session(self, state: _SessionState, result: SessionResult) -> None:
        table = state.table
        if state.error is not None:
            state.error = self.shell.errored(table.session.index, state.error)
        data = session_fields(self.cell_name, table.session.index, self.player_names, result,
                              table.cut_off(self.player_names[0]), state.error)
        if self.resume_from:  # seat calls not sent again: the log resumed from answered them (before "error", as ever)
            data = {**{k: v for k, v in data.items() if k != "error"}, "reused_calls": state.reused, "error": state.error}
        evals.record.record_event(SESSION_EVENT, data)


def _record_again(sample_id: str, events: Sequence[tuple[str, Any]]) -> None:
    """Copy events of the log resumed from into this run's log, under their original sample id."""
    for type_, data in events:
        evals.record.record_event(type_, data, sample_id=sample_id)


ECONARENA_ARGS = config.ALL_ARGS
