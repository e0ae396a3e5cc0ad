"""The ``econarena_evals`` verifiers environment (``vf-eval econarena_evals``): taskset, env and harness.

verifiers 0.4.0 imports the package named by the taskset id (``econarena_evals``) and takes from its
``__all__`` one ``Taskset``, one ``Env`` and one ``Harness`` subclass: these three, which the
package's top-level ``__getattr__`` loads from here only when asked (the plugin never needs them).

* ``EconArenaTaskset``: one task per (cell, session) of the registry; the taskset args are the
  original environment's, ``{"taskset": {"cells": ["beauty_L"], "seeds": [8], "runs": 2}}``
  (``--env.taskset.cells '["beauty_L"]' --env.taskset.seeds '[8]' --env.taskset.runs 2``), the
  dev split by default, ``split: test`` on request.
* ``EconArenaEnv``: one episode is one session, played by the model in every seat (self-play) with
  one interaction per seat; in an opponent cell the registry's fixed players (``econarena/nash``,
  ...) take the other seats, played in-process, seated as the plugin seats them. The table of seats
  (``score.table.Table``) writes each seat's prompt and seed run by run, reads the answers and scores
  each run, as under ``oaieval`` and ``inspect``.
* ``EconArenaHarness``: a seat's turn is one chat completion of the run's prompt (never a tool, never
  code), sent in-process to the rollout's interception endpoint (which records it on the trace and
  forwards it to the model) through the plugin's call engine: retried, paced and stopped as the
  plugin's calls are (``on_inspect.endpoint``). Each turn sends the run's own prompt, not the
  conversation so far: the plugin's calls are independent, and so the scores match.

Rewards, on each seat's trace: ``eas`` (the session's EAS, weight 1), its five parts (weight 0),
``seat_eas`` (the same score over this seat's runs alone: its payoff, win share, rule following and
distance to equilibrium; weight 0, or 1 with ``seat_reward: true``, when ``eas`` goes to 0 for RL).
``trace.info["econarena"]`` holds the raw quantities: the cell, split, session and seat, the seat's
metrics and calls, and on the model's first seat's trace the session's ``econarena_run`` events (the
per-run series) and its ``econarena_session`` record, as the plugin logs them (``log.verifiers_log``
reads them back).

Under ``vf-eval``, each answered seat call is also kept in the run's folder (``journal``), so that
``vf-eval --resume`` answers an unfinished session's answered calls from it instead of paying again.
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Mapping, Optional

import httpx
import verifiers.v1 as vf
from verifiers.v1.cli.eval import runner
from verifiers.v1.clients.client import SESSION_ID_HEADER
from verifiers.v1.clients.eval import EvalClient
from verifiers.v1.runtimes import ProgramResult
from verifiers.v1.types import content_text

from ..calls import seat_call
from ..calls.errors import RunStopped
from ..calls.state import CallState
from ..core.outcome import RunOutcome
from ..core.prompts import prompt_text
from ..core.sessions import Session, seat_players, unique_names
from ..games import session_from_sample
from ..log.format import session_fields
from ..log.verifiers_log import INFO_KEY, seat_infos
from ..on_inspect import cells
from ..on_inspect.cells import builtin_player
from ..on_inspect.endpoint import Endpoint, Reply
from ..run import config
from ..run.conditions import DEFAULT_SEED
from ..score.metrics import COMPONENTS, session_metrics
from ..score.table import SeatReply, SeatRequest, Table
from .journal import EPISODE_KEY, Journal, new_episode, request_key
from .serve import player_name


def stop_anyio_workers() -> None:
    """Ask anyio's worker threads to stop, as Python exits (``threading._register_atexit``: before it waits
    for its threads). vf-eval's first Ctrl-C or SIGTERM raises KeyboardInterrupt wherever its loop is; when
    that ends the loop before anyio's root task is done, the callbacks that stop anyio's worker threads
    (not daemons) never run, and the exit waits on them for ever: seen as vf-eval idle in
    ``threading._shutdown`` after "interrupted — cleaning up", a SIGTERM having come as rollouts
    started. Asking a thread that is stopping, or busy, to stop changes nothing but that it stops next."""
    for thread in threading.enumerate():
        if type(thread).__module__.startswith("anyio.") and callable(getattr(thread, "stop", None)):
            with contextlib.suppress(Exception):  # its queue full: it is busy, and its root task's end stops it
                thread.stop()


if hasattr(threading, "_register_atexit"):  # CPython 3.9+: what concurrent.futures stops its workers by
    threading._register_atexit(stop_anyio_workers)


SEAT_PLAYER = "\0seat"  # the seat whose own score is asked, renamed so no other seat shares its name


class EconArenaConfig(vf.TasksetConfig):
    cells: Optional[list[str]] = None
    """The registry's cells to play (beauty_L, auction_L, ...); all of them when unset."""
    seeds: Optional[list[int]] = None
    """The sessions to play, by index in the split's samples file (its draw and its seats' seeds); all when unset."""
    runs: Optional[int] = None
    """Runs per session, over the cell's (10 in the registry)."""
    split: Literal["dev", "test"] = "dev"
    """The registry split: dev (the cells' default) or test."""
    seed: float = DEFAULT_SEED
    """The eval seed every seat call's seed is drawn from, as oaieval's --seed."""
    temperature: Optional[float] = None
    """Over the cell's temperature (the registry's 0.7)."""
    max_tokens: Optional[int] = None
    """Over the cell's max_tokens (the registry's 1024)."""
    pass_seed: Optional[bool] = None
    """Over the cell's pass_seed (send each call's seed; the registry's true)."""
    seat_reward: bool = False
    """RL: weight 1 on each seat's own score (seat_eas) and 0 on the session's EAS, instead of the reverse."""


class EconArenaData(vf.TaskData):
    info: dict
    """The cell, split, session, its samples line and the eval args the session is played with."""


class EconArenaTask(vf.Task[EconArenaData, vf.State, vf.TaskConfig]):
    pass


class EconArenaTaskset(vf.Taskset[EconArenaTask, EconArenaConfig]):
    def load(self) -> Iterator[EconArenaTask]:
        c = self.config
        names = cells.cells()
        chosen = list(c.cells) if c.cells is not None else names
        unknown = [n for n in chosen if n not in names]
        if unknown:
            raise ValueError(f"no cell {', '.join(map(repr, unknown))} in the registry; its cells: {', '.join(names)}")
        for cell_name in chosen:
            args = cell_args(cell_name, c)
            samples = {int(s["session"]): s for s in cells.samples(args["samples_jsonl"])}
            missing = [s for s in (c.seeds or []) if s not in samples]
            if missing:
                raise ValueError(f"{cell_name} ({c.split}) has sessions 0 to {len(samples) - 1}, not {missing}")
            for index in (c.seeds if c.seeds is not None else sorted(samples)):
                info = {"cell": cell_name, "split": c.split, "session": index, "sample": samples[index],
                        "args": args, "seed": cells.eval_seed(c.seed), "seat_reward": c.seat_reward}
                yield EconArenaTask(EconArenaData(id=f"{cells.eval_name(cell_name, c.split)}#{index}",
                                                  name=f"{cell_name} session {index}", info=info), c.task)


def cell_args(cell_name: str, c: EconArenaConfig) -> dict[str, Any]:
    """The registry's args of the cell's split with the taskset's overrides, checked as the eval checks them."""
    args = cells.cell_args(cell_name, c.split)
    args.update({k: v for k, v in (("runs", c.runs), ("temperature", c.temperature), ("max_tokens", c.max_tokens),
                                   ("pass_seed", c.pass_seed)) if v is not None})
    config.build("cell", args)  # ValueError now, at load, not mid-episode
    config.build("sampling", args)
    return args


# --- the harness: one seat turn, one chat completion through the plugin's call engine ------------------

@dataclass
class Turn:
    """What the env hands the harness for one seat turn (sampling args and seed, the env's call state)
    and gets back; the seat's endpoint (its rollout's interception, one client) is made at its first
    turn and kept."""

    sampling: dict[str, Any]
    call_state: CallState  # the env's: every seat's calls share its lanes, cap and stop
    reply: Optional[Reply] = None
    endpoint: Optional[SeatEndpoint] = None


# trace id -> the turn its interaction is taking; a seat's turns are serialized by its interaction
TURNS: dict[str, Turn] = {}
# trace id -> the headers of the model endpoint's last answer to that seat. verifiers' interception
# answers the harness with a response of its own (and a refusal with its status alone), so the rate
# limits the model's endpoint states, and the wait a 429 asks for, would never reach the call engine's
# lane: its upstream request is heard here, and the seat's call hands them to its lane.
UPSTREAM: dict[str, Mapping[str, str]] = {}
_upstream_request = EvalClient._request


async def _request_heard(self: EvalClient, url: str, body: dict, headers: Any, *, stream: bool = False) -> Any:
    session = headers.get(SESSION_ID_HEADER) if headers is not None else None
    try:
        response = await _upstream_request(self, url, body, headers, stream=stream)
    except Exception as exc:
        refusal = exc.__cause__
        if session and isinstance(refusal, httpx.HTTPStatusError):
            UPSTREAM[session] = refusal.response.headers
        raise
    if session:
        UPSTREAM[session] = response.headers
    return response


EvalClient._request = _request_heard  # verifiers 0.4.0's one upstream request (its pin: setup.py)


# The run's answered seat calls (``journal``), kept in its folder, which vf-eval's runner names once, before
# the first episode, through ``output_path``: heard there (verifiers 0.4.0, its pin: setup.py). None outside
# vf-eval (another harness, a trainer): every call then goes to the model, as without it.
JOURNAL: Optional[Journal] = None
_output_path = runner.output_path


def _output_path_heard(eval_config: Any) -> Any:
    global JOURNAL
    folder = _output_path(eval_config)
    if JOURNAL is not None:
        JOURNAL.close()
    JOURNAL = Journal(folder, bool(getattr(eval_config, "resume", False)))
    return folder


runner.output_path = _output_path_heard


class SeatEndpoint(Endpoint):
    """A seat's calls to its rollout's interception endpoint, whose lane hears the model endpoint's headers."""

    def __init__(self, model: str, base_url: str, api_key: str, trace_id: str, call_state: CallState) -> None:
        super().__init__(model, base_url, api_key, call_state=call_state)
        self.trace_id = trace_id

    def _try(self, body: dict[str, Any]) -> Reply:
        try:
            return super()._try(body)
        finally:
            seat_call.heard(UPSTREAM.pop(self.trace_id, None))


def upstream_lane(ctx: Any) -> tuple[str, str, str]:
    """One lane per (model endpoint, model), whatever rollout's interception a call goes through: the
    pace and the concurrency limit learned from one seat's calls hold for all of them."""
    client = ctx.client
    return (str(client.base_url).rstrip("/"), hashlib.sha256(str(client.api_key_var).encode()).hexdigest()[:16],
            str(ctx.model))


class EconArenaHarness(vf.Harness[vf.HarnessConfig]):
    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False  # a chat completion, no tool: nothing the model writes is run
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: Any,
                     data: Any, tool_interception_url: Optional[str] = None) -> ProgramResult:
        raise vf.HarnessError("an EconArena seat takes its prompts from the env, run by run (a task has none)")

    async def resume(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: Any,
                     data: Any, messages: Any, tool_interception_url: Optional[str] = None) -> ProgramResult:
        turn = TURNS.get(trace.id)
        if turn is None:
            raise vf.HarnessError("a seat turn with no sampling args: only EconArenaEnv drives this harness")
        wire = [{"role": m.role, "content": content_text(m.content)} for m in messages]
        if turn.endpoint is None:
            turn.endpoint = SeatEndpoint(str(ctx.model), endpoint, secret, trace.id, turn.call_state)
            turn.endpoint.lane = upstream_lane(ctx)
        try:
            turn.reply = await turn.endpoint.ask(wire, **turn.sampling)
        except RunStopped as exc:
            raise vf.ProviderError(f"stopped: {exc}") from exc
        return ProgramResult(exit_code=0, stdout="", stderr="")


# --- the env: one episode, one session -------------------------------------------------------------

class EconArenaEnvConfig(vf.EnvConfig):
    # the seat's harness runs in-process and executes nothing: no sandbox to provision (verifiers'
    # default runtime is a Prime sandbox reached through a tunnel)
    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


def seat_metrics(runs: list[RunOutcome], seat: int) -> dict[str, float]:
    """The six metrics over one seat's runs: ``session_metrics`` with that seat's player renamed."""
    renamed = [dataclasses.replace(r, seats=tuple(dataclasses.replace(s, player=SEAT_PLAYER) if s.seat == seat else s
                                                  for s in r.seats)) for r in runs]
    metrics = session_metrics(renamed, SEAT_PLAYER)
    assert metrics is not None  # every seat plays every run
    return metrics


def record_rewards(trace: Any, session: dict[str, float], seat: dict[str, float], seat_reward: bool) -> None:
    trace.record_reward("eas", session["eas"], 0.0 if seat_reward else 1.0)
    for part in COMPONENTS:
        trace.record_reward(part, session[part], 0.0)
    trace.record_reward("seat_eas", seat["eas"], 1.0 if seat_reward else 0.0)


class EconArenaEnv(vf.Env[EconArenaEnvConfig]):
    def __init__(self, config: EconArenaEnvConfig) -> None:
        super().__init__(config)
        # the env's seat calls, all its episodes': one lane per (model endpoint, model) learns the pace
        # and concurrency limit for every seat (``upstream_lane``), one cap bounds them, a stop stops all
        self.call_state = CallState()

    async def run(self, task: Any, agents: Any) -> None:
        info = task.data.info
        cell_name, args = info["cell"], info["args"]
        cell = config.build("cell", args)
        sampling = config.build("sampling", args)
        session: Session = session_from_sample(info["sample"], cell)
        agent = agents.player
        # the model, then an opponent cell's fixed players, named and seated as the plugin seats them
        opponents = [str(n) for n in (args.get("opponents") or [])]
        distinct = list(dict.fromkeys(opponents))
        players = unique_names([str(agent.ctx.model)] + distinct)
        model, named = players[0], dict(zip(distinct, players[1:]))
        roster = [model] + [named[n] for n in opponents]
        seating = seat_players(len(roster), cell.seats, session.index)
        fixed = {n: builtin_player(player_name(n), {}) for n in distinct}
        fixed_at = {seat: fixed[opponents[p - 1]] for seat, p in enumerate(seating, start=1) if p}
        own_seats = [seat for seat, p in enumerate(seating, start=1) if p == 0]
        table = Table(cell_name, cell, session, [roster[p] for p in seating], info["seed"])
        events: list[dict[str, Any]] = []
        journal, episode = JOURNAL, new_episode()
        async with contextlib.AsyncExitStack() as stack:
            seats = {s: await stack.enter_async_context(agent.interaction(task)) for s in own_seats}
            # a seat's turns take turns (its interaction serializes them too): one Turn in TURNS at a time
            in_turn = {s: asyncio.Lock() for s in own_seats}
            calls: dict[int, list[dict[str, Any]]] = {s: [] for s in own_seats}  # run, answering model, usage
            endpoints: dict[int, Optional[SeatEndpoint]] = {s: None for s in own_seats}
            stack.callback(lambda: [e.client.close() for e in endpoints.values() if e is not None])

            async def seat_turn(request: SeatRequest) -> SeatReply:
                seed = request.seed if sampling.pass_seed else None
                if request.seat in fixed_at:  # a fixed player: the prompt's text and the seed decide its answer
                    return SeatReply(fixed_at[request.seat].reply(prompt_text(request.prompt), seed))
                interaction = seats[request.seat]
                kwargs = {**sampling.kwargs(), **({} if seed is None else {"seed": seed})}
                key = request_key(cell=cell_name, split=info["split"], session=session.index, run=request.run,
                                  seat=request.seat, model=str(agent.ctx.model),
                                  base_url=str(agent.ctx.client.base_url), messages=request.prompt, sampling=kwargs)
                kept = journal.take(key) if journal is not None else None
                if kept is not None:  # answered before a kill: the resume does not pay for it again
                    calls[request.seat].append({"run": request.run, "model": kept["model"], "reused": True,
                                                "finish_reason": kept["finish_reason"], "usage": kept["usage"]})
                    return SeatReply(kept["text"], kept["finish_reason"])
                async with in_turn[request.seat]:
                    turn = TURNS[interaction.trace.id] = Turn(kwargs, self.call_state, endpoint=endpoints[request.seat])
                    try:
                        segment = await interaction.turn(request.prompt)
                    finally:
                        TURNS.pop(interaction.trace.id, None)
                        endpoints[request.seat] = turn.endpoint
                reply = turn.reply
                if segment.terminated or reply is None:
                    raise RuntimeError(f"seat {request.seat}, run {request.run + 1}: the seat's turn gave no reply")
                usage = None if reply.usage is None else {k: getattr(reply.usage, k, None)
                                                          for k in ("prompt_tokens", "completion_tokens")}
                calls[request.seat].append({"run": request.run, "model": reply.model,
                                            "finish_reason": reply.finish_reason, "usage": usage})
                if journal is not None:
                    journal.record(episode, key, {"text": reply.text, "finish_reason": reply.finish_reason,
                                                  "model": reply.model, "usage": usage})
                return SeatReply(reply.text, reply.finish_reason)

            while requests := table.wave():
                replies = dict(zip((r.key for r in requests), await asyncio.gather(*map(seat_turn, requests))))
                for run in sorted({r.run for r in requests}):
                    events.append(table.take(run, [replies[(run, s)] for s in range(1, cell.seats + 1)]))
        result = table.result(players)
        record = session_fields(cell_name, session.index, players, result, table.cut_off(model), None)
        runs = [table.outcomes[r] for r in range(cell.runs)]
        own = [seat_metrics(runs, seat) for seat in own_seats]
        spec = {"eval_name": cells.eval_name(cell_name, info["split"]), "args": args, "seed": info["seed"]}
        played = [{"name": model, "model": str(agent.ctx.model), "opponent": False,
                   "base_url": str(agent.ctx.client.base_url)}]
        played += [{"name": named[n], "model": n, "opponent": True, "base_url": None} for n in distinct]
        infos = seat_infos(cell_name, info["split"], session.index, spec, events, record, played, own_seats, own,
                           [calls[s] for s in own_seats])
        for seat, seat_info, seat_own in zip(own_seats, infos, own):
            record_rewards(seats[seat].trace, result[model], seat_own, bool(info.get("seat_reward")))
            seats[seat].trace.info[INFO_KEY] = {**seat_info, EPISODE_KEY: episode}  # whose recorded calls


__all__ = ["EconArenaTaskset", "EconArenaEnv", "EconArenaHarness"]
