"""One inspect task per registry cell: ``inspect eval econarena_evals/<cell>`` (``-T split=test``).

One Sample is one session. The solver plays it as the plugin's eval does (``run/eval.py``): the
cell's game writes each seat's prompt, each seat call carries the plugin's per-seat seed and
sampling args, the answers are read by ``core.answers`` and each run scored by the game; a wave of
runs (all of them without history, one at a time with it) is one gathered set of seat calls. The
session's ``econarena_run`` events and ``econarena_session`` event, as the plugin records them, go
into the sample's store, where ``log.inspect_log`` reads them back for the summary and the report.
The scorer gives the evaluated player's EAS and its five parts; inspect's metrics are their means.

Seating: the evaluated player is ``--model``; an opponent cell's fixed players are the registry's
(``econarena/human``, ...); arena players are inspect model roles ``--model-role player2=...``,
``player3``, ... in the order the plugin's ``oaieval A,B,C`` seats B and C.
"""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Optional

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model, model_roles
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from ..core.sessions import Session, seat_players, unique_names
from ..games import load as load_game
from ..games import session_from_sample
from ..log.format import session_fields
from ..log.inspect_log import PLAYERS_KEY, RUNS_KEY, SESSION_KEY, SPEC_KEY, USAGE_KEY
from ..run import config
from ..score.metrics import METRICS
from ..score.table import SeatReply, SeatRequest, Table
from . import cells

ARENA_ROLE = "player{}"  # --model-role player2=..., player3=...: the plugin's oaieval A,B,C


def _messages(prompt: list[dict[str, str]]) -> list[Any]:
    return [ChatMessageSystem(content=m["content"]) if m["role"] == "system" else ChatMessageUser(content=m["content"])
            for m in prompt]


def _roster(opponents: list[str]) -> list[tuple[str, Model]]:
    """(name, model) of the evaluated player, the arena's role players in order, then the cell's
    opponents; names made unique (``#2``) as the plugin's are."""
    roles = model_roles()
    models = [get_model()]
    while ARENA_ROLE.format(len(models) + 1) in roles:
        role_model = roles[ARENA_ROLE.format(len(models) + 1)]
        models.append(role_model[0] if isinstance(role_model, list) else role_model)
    distinct = list(dict.fromkeys(opponents))
    entries = [str(m) for m in models] + distinct
    names = unique_names(entries)
    opponent_models = {n: get_model(n) for n in distinct}
    opponent_names = dict(zip(distinct, names[len(models):]))
    return list(zip(names, models)) + [(opponent_names[n], opponent_models[n]) for n in opponents]


@solver
def play_session(cell_name: str, cell: Any, sampling: Any, seed: Any, opponents: list[str]):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        session: Session = session_from_sample(state.metadata["sample"], cell)
        roster = _roster(opponents)
        players = list(dict.fromkeys(name for name, _ in roster))
        seating = seat_players(len(roster), cell.seats, session.index)
        table = Table(cell_name, cell, session, [roster[p][0] for p in seating], seed)
        seat_models = [roster[p][1] for p in seating]
        calls_made: list[dict[str, Any]] = []  # each seat call's tag, usage and finish_reason
        events = []

        async def seat_call(request: SeatRequest) -> SeatReply:
            kwargs = dict(sampling.kwargs())
            if sampling.pass_seed:
                kwargs["seed"] = request.seed
            output = await seat_models[request.seat - 1].generate(_messages(request.prompt),
                                                                  config=GenerateConfig(**kwargs))
            finish = "length" if output.stop_reason == "max_tokens" else output.stop_reason
            usage = None if output.usage is None else {"prompt_tokens": output.usage.input_tokens,
                                                       "completion_tokens": output.usage.output_tokens}
            calls_made.append({"cell": cell_name, "session": session.index, "run": request.run, "seat": request.seat,
                               "player": request.player, "model": output.model, "finish_reason": finish,
                               "usage": usage})
            return SeatReply(output.completion, finish)

        while requests := table.wave():
            replies = dict(zip((r.key for r in requests), await asyncio.gather(*map(seat_call, requests))))
            for run in sorted({r.run for r in requests}):
                events.append(table.take(run, [replies[(run, seat)] for seat in range(1, cell.seats + 1)]))
        result = table.result(players)
        record = session_fields(cell_name, session.index, players, result, table.cut_off(players[0]), None)
        state.store.set(RUNS_KEY, events)
        state.store.set(SESSION_KEY, record)
        entries: dict[str, dict[str, Any]] = {}
        for i, (name, model) in enumerate(roster):
            entries.setdefault(name, {"name": name, "model": str(model), "opponent": i >= len(roster) - len(opponents),
                                      "base_url": getattr(model.api, "base_url", None)})
        state.store.set(PLAYERS_KEY, list(entries.values()))
        state.store.set(USAGE_KEY, calls_made)
        state.metadata["metrics"] = result[players[0]]
        return state

    return solve


@scorer(metrics={metric: [mean()] for metric in METRICS})
def eas_scorer():
    async def score(state: TaskState, target: Target) -> Score:
        metrics = state.metadata.get("metrics")
        if metrics is None:
            raise RuntimeError("the session was not played")
        return Score(value={m: float(metrics[m]) for m in METRICS},
                     explanation=f"EAS {metrics['eas']:.3f} for {state.store.get(SESSION_KEY)['player']}")

    return score


def cell_task(cell_name: str, split: str = "dev", seed: Any = None, temperature: Any = None,
              max_tokens: Any = None, pass_seed: Any = None, root: Optional[Path] = None) -> Task:
    """The task of one cell of the registry at ``root`` (the package's by default); the args ``-T`` can
    set, each as the plugin's eval arg of that name."""
    args = cells.cell_args(cell_name, split, root)
    overrides = {k: v for k, v in (("temperature", temperature), ("max_tokens", max_tokens),
                                   ("pass_seed", pass_seed)) if v is not None}
    args.update(overrides)
    seed = cells.eval_seed(seed)
    try:
        load_game(args.get("game"))  # a game outside the package, named by the registry's args
        cell = config.build("cell", args)
        sampling = config.build("sampling", args)
    except ValueError as exc:
        print(f"econarena: {exc}", file=sys.stderr)
        raise
    opponents = [str(n) for n in (args.get("opponents") or [])]
    dataset = MemoryDataset([Sample(input=f"EconArena {cell_name}, session {s['session']}", id=int(s["session"]),
                                    metadata={"sample": s}) for s in cells.samples(args["samples_jsonl"], root)],
                            name=cells.eval_name(cell_name, split))
    spec = {"eval_name": cells.eval_name(cell_name, split), "args": args, "seed": seed}
    return Task(dataset=dataset, solver=play_session(cell_name, cell, sampling, seed, opponents),
                scorer=eas_scorer(), metadata={SPEC_KEY: spec}, name=cell_name)


def _register(cell_name: str) -> Any:
    def make(split: str = "dev", seed: Optional[float] = None, temperature: Optional[float] = None,
             max_tokens: Optional[int] = None, pass_seed: Optional[bool] = None) -> Task:
        return cell_task(cell_name, split, seed, temperature, max_tokens, pass_seed)

    make.__name__ = make.__qualname__ = cell_name
    make.__doc__ = f"EconArena cell {cell_name} (the registry's econarena.{cell_name}), one Sample per session."
    return task(name=cell_name)(make)


TASKS = {name: _register(name) for name in cells.cells()}
globals().update(TASKS)


@task(name="cell")
def any_cell(name: str, registry: Optional[str] = None, split: str = "dev", seed: Optional[float] = None,
             temperature: Optional[float] = None, max_tokens: Optional[int] = None,
             pass_seed: Optional[bool] = None) -> Task:
    """Any cell of any registry: ``inspect eval econarena_evals/cell -T name=CELL -T registry=ROOT``, as
    ``oaieval ... econarena.CELL --registry_path ROOT`` plays it; a game outside the package is found
    by its cell's ``game`` arg, its module's import path (on PYTHONPATH)."""
    return cell_task(name, split, seed, temperature, max_tokens, pass_seed, Path(registry) if registry else None)
