"""Resuming a stopped run: what an earlier log of the same condition already holds.

``resume_from=PATH`` (or ``ECONARENA_RESUME=PATH``) reads an earlier log of the same condition,
copies each session that finished there into the new log and lets the eval play only the others.
What is done is decided from the old log alone (``plan``, which gives a ``Resumption``); the eval
copies a done session's events instead of playing it. A session counts as done when its
``econarena_session`` event says it did not error and all of its runs are in the log; anything else
(cut off by a stop, errored) goes on from its first unfinished run, and each seat call the log
answered there is reused when the new run would send the very same request (``reusable_reply``).

Every copied ``econarena_run`` and ``econarena_session`` event, and every reused ``sampling``
event, gets ``resumed_from``: the log it was copied from. The ``sampling`` events of copied runs are
copied unchanged, all under their original sample id. Nothing here writes: the eval records what
the resumption says (``eval.py``), ``durable`` puts it on disk, and ``resume_command`` tells the
user how to resume.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from ..integration.log_file import RESUME_ENV  # the one spelling: the log's opening reads it too
from ..log.evallog import SAME_FIGURE
from ..log.format import (
    BATCH_EVENT,
    RESUMED_FROM,
    RUN_EVENT,
    SEAT_TAG,
    SESSION_EVENT,
    metric_fields,
    player_metrics,
    split_metric_key,
)
from ..log.jsonl import Reading, iter_rows, not_regular
from ..log.old_logs import untagged_seat
from ..score.metrics import METRICS, rescore_sessions
from .conditions import condition_of, differences

MARK = RESUMED_FROM  # the field a copied econarena_run / econarena_session / reused sampling event carries

SessionResult = Optional[dict[str, dict[str, float]]]


class ResumeRefused(ValueError):
    """The log named by resume_from cannot be resumed by this run; raised before any call."""


@dataclass
class DoneSession:
    index: int
    sample_id: str
    events: list[tuple[str, Any]]  # (type, data) in log order; run and session events marked
    result: SessionResult  # player -> metrics, from the econarena_session event


@dataclass
class PartSession:
    """A session the old log started but did not finish: the runs it finished, to keep."""

    index: int
    sample_id: str
    runs: dict[int, dict[str, Any]]  # run -> its econarena_run event (marked)
    events: list[tuple[str, Any]]  # those runs' run and sampling events, in log order
    # (run, seat) -> the sampling event of an answered seat call of another run, reused when the
    # resumed run would send the very same prompt (``reusable_reply``)
    calls: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)


@dataclass
class Resumption:
    """What a resume takes from an earlier log: the sessions it finished, the runs and answered calls
    of the others, and what the eval must say about it. (Not ``run.plan``, the estimate before the first call.)"""

    source: str  # the log resumed from (absolute)
    done: dict[int, DoneSession] = field(default_factory=dict)  # by session index
    replay: list[int] = field(default_factory=list)  # sessions the old log started but did not finish
    parts: dict[int, PartSession] = field(default_factory=dict)  # their finished runs, by session index
    torn_lines: int = 0
    # finished sessions whose logged figures are not what their runs score: the derived ones are carried
    forged: list[str] = field(default_factory=list)
    # custom_id -> {batch_id, input_file_id, bought} of each batch line the log says was sent (batch
    # mode): waited for in that batch again instead of being sent anew
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def kept_runs(self) -> int:
        return sum(len(p.runs) for p in self.parts.values())

    @property
    def kept_calls(self) -> int:
        """Answered seat calls of unfinished runs that the log holds, reusable as they are."""
        return sum(len(p.calls) for p in self.parts.values())


def read_rows(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The run spec, the event rows in order, and how many lines were not JSON (a torn last line)."""
    spec: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    reading = Reading()
    for _, row in iter_rows(path, reading):
        if "spec" in row:
            spec = row["spec"] or {}
        elif "type" in row and row.get("sample_id") is not None:
            rows.append(row)
    if reading.mixed:
        raise ResumeRefused(f"resume_from={path} {reading.mixed}: resume from a log one run wrote")
    return spec, rows, reading.not_json


def spec_of(run_spec: Any) -> dict[str, Any]:
    """A RunSpec (with its EvalSpec inside) as the plain dict the log's first line holds."""
    if isinstance(run_spec, Mapping):
        return dict(run_spec)
    return json.loads(json.dumps(dataclasses.asdict(run_spec), default=str))


def result_of(data: Mapping[str, Any], players: Sequence[str]) -> SessionResult:
    """The session's metrics per player, as eval_sample returned them, from its session event."""
    return player_metrics(data, players)


def first_spec(path: Path) -> dict[str, Any]:
    for _, row in iter_rows(path):
        return row["spec"]  # iter_rows yields a spec line first, or nothing
    return {}


def resumption(path: str, spec_now: Mapping[str, Any], runs: int, players: Sequence[str],
               own_log: Optional[str] = None) -> Resumption:
    """What a run of ``spec_now`` can take from the log at ``path``. Raises ResumeRefused.

    ``path`` may be a directory (``oaievalset``'s whole set at once): its logs of this run's
    condition are candidates, the one with the most finished sessions is resumed, and a directory
    with none plays everything; logs of other conditions are passed over, not refused.
    """
    source = Path(path).expanduser().resolve()
    if source.is_dir():
        own = Path(own_log).expanduser().resolve() if own_log else None
        now = condition_of(spec_now)
        found = [resumption(str(p), spec_now, runs, players) for p in sorted(source.rglob("*.jsonl"))
                 if p.resolve() != own and not differences(condition_of(first_spec(p)), now)]
        return max(found, key=lambda r: len(r.done), default=Resumption(source=str(source)))
    if own_log is not None and Path(own_log).expanduser().resolve() == source:
        raise ResumeRefused(
            f"resume_from={path} is this run's own --record_path: the earlier log was overwritten when "
            "this run started. Resume into a new log (a different --record_path).")
    if not source.is_file():
        try:
            what = not_regular(os.stat(source).st_mode)
        except OSError:
            what = None
        raise ResumeRefused(f"resume_from={path} is {what}, not a log" if what else f"resume_from={path}: no such log file")
    spec, rows, torn = read_rows(source)
    if not spec:
        raise ResumeRefused(f"resume_from={path}: no run spec line, not an evals log")
    diff = differences(condition_of(spec), condition_of(spec_now))
    if diff:
        raise ResumeRefused(
            f"resume_from={path} is another condition (the log's vs this run's): " + "; ".join(diff)
            + ". Resume a log with this run's eval, players, args and seed, or run without resume_from.")
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_sample.setdefault(str(row["sample_id"]), []).append(row)
    out = Resumption(source=str(source), torn_lines=torn, batches=sent_in_batches(rows))
    for sample_id, events in by_sample.items():
        sessions = [r["data"] for r in events if r["type"] == SESSION_EVENT]
        run_events = [r["data"] for r in events if r["type"] == RUN_EVENT]
        tags = [r["data"].get(SEAT_TAG) for r in events if r["type"] == "sampling" and isinstance(r["data"], Mapping)]
        # a session cut off before its first run finished is known by its answered seat calls alone
        indices = {int(d["session"]) for d in sessions + run_events + [t for t in tags if isinstance(t, Mapping)]
                   if isinstance(d.get("session"), int)}
        if len(indices) != 1:
            continue
        index = indices.pop()
        finished = (len(sessions) == 1 and not sessions[0].get("errored")
                    and sorted(int(d["run"]) for d in run_events) == list(range(runs)))
        result: SessionResult = None
        if finished:  # its figures derived from its runs by the scorer, never taken from the log
            result = derived_result(index, run_events, players)
            finished = result is not None
        if finished:
            try:
                logged = result_of(sessions[0], players)
            except (KeyError, TypeError):  # a session event without every metric
                logged = None
            if not same_figures(logged, result):
                out.forged.append(f"session {index}")
        if not finished:
            out.replay.append(index)
            part = _finished_runs(index, sample_id, events, source)
            if part.runs or part.calls:
                out.parts[index] = part
            continue
        answered = sum(r["type"] == "sampling" for r in events)
        copied = [(r["type"], {**r["data"], MARK: str(source)} if r["type"] == RUN_EVENT else
                   {**_without_figures(r["data"]), **metric_fields(result, players), MARK: str(source),
                    "reused_calls": answered} if r["type"] == SESSION_EVENT
                   else r["data"]) for r in events]
        out.done[index] = DoneSession(index=index, sample_id=sample_id, events=copied,
                                      result=result)
    out.replay = sorted(set(out.replay) - set(out.done))
    for index in set(out.parts) - set(out.replay):
        del out.parts[index]
    return out


def derived_result(index: int, run_events: Sequence[Mapping[str, Any]], players: Sequence[str]) -> SessionResult:
    """A finished session's metrics per player, as the scorer derives them from its run events;
    None if they cannot be (a run event the scorer cannot read)."""
    try:
        return rescore_sessions(run_events, players).get(index)
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
        return None


def same_figures(logged: SessionResult, derived: SessionResult) -> bool:
    if logged is None or derived is None or set(logged) != set(derived):
        return False
    return all(isinstance(logged[p].get(m), (int, float)) and abs(logged[p][m] - derived[p][m]) <= SAME_FIGURE
               for p in derived for m in derived[p])


def _without_figures(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if split_metric_key(str(k))[0] not in METRICS}


MAX_NAMED = 10  # batches a line's record names, at most (a line is bought twice at most: ``calls.batches``)


def sent_in_batches(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """custom_id -> where the log says it went: the input file uploaded, then the batch made of it
    (a later record of the same line wins: a retry in a new batch, or a re-attach), and ``bought``:
    how many batches it has been in, this log's and those it resumed (the records' own counts; a
    log without them counts its batches), and ``batches``: those batches' ids, to name them."""
    sent: dict[str, dict[str, Any]] = {}
    for row in rows:
        data = row.get("data")
        if row.get("type") != BATCH_EVENT or not isinstance(data, Mapping) or not isinstance(data.get("custom_ids"), list):
            continue
        status, ids = data.get("status"), data["custom_ids"]
        where = {k: str(data[k]) for k in ("batch_id", "input_file_id") if data.get(k)}
        counts = data.get("bought")
        counts = counts if isinstance(counts, list) and len(counts) == len(ids) else [None] * len(ids)
        earlier = data.get("earlier") if status == "attached" else None
        named = [b[:200] for b in (earlier if isinstance(earlier, list) else [])[:MAX_NAMED] if isinstance(b, str)]
        named += [where["batch_id"][:200]] if status in ("submitted", "attached") and "batch_id" in where else []
        for custom_id, count in zip(ids, counts):
            before = sent.get(str(custom_id), {})
            n = before.get("bought", 0)
            if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 1_000_000:
                count = n + 1 if status == "submitted" else n if status == "uploaded" else max(n, 1)
            batches = list(dict.fromkeys([*before.get("batches", []), *named]))[-MAX_NAMED:]
            sent[str(custom_id)] = {**where, "bought": max(n, count), "batches": batches}
    return sent


def _seat_call_run(data: Mapping[str, Any]) -> Optional[int]:
    """The run (0-based) a sampling event was a seat call of: its tag's; a log written before the tag
    has only its prompt to say it, read by the old-log reader."""
    tag = data.get(SEAT_TAG)
    if isinstance(tag, Mapping):
        return tag["run"] if isinstance(tag.get("run"), int) else None
    placed = untagged_seat(data)
    return None if placed is None else placed[0]


def _finished_runs(index: int, sample_id: str, events: Sequence[Mapping[str, Any]], source: Path) -> PartSession:
    """The runs of a cut-off or errored session that finished (every seat answered and was scored):
    a resumed run keeps them and plays only the others, so no finished run is paid for twice."""
    runs: dict[int, dict[str, Any]] = {}
    for r in events:
        if r["type"] == RUN_EVENT:
            runs.setdefault(int(r["data"]["run"]), {**r["data"], MARK: str(source)})
    kept: list[tuple[str, Any]] = [(RUN_EVENT, runs[run]) for run in sorted(runs)]
    kept += [("sampling", r["data"]) for r in events
             if r["type"] == "sampling" and _seat_call_run(r["data"]) in runs]
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    for r in events:
        data = r["data"]
        tag = data.get(SEAT_TAG) if r["type"] == "sampling" and isinstance(data, Mapping) else None
        if not isinstance(tag, Mapping) or tag.get("session") != index or tag.get("run") in runs:
            continue
        if not isinstance(tag.get("run"), int) or not isinstance(tag.get("seat"), int):
            continue
        # a reply the log holds altered (cut to its first 64 KB, or with escaped characters) is
        # not the reply that was scored: that call is sent again
        if data.get("sampled_full_chars") or data.get("sampled_escaped"):
            continue
        calls.setdefault((tag["run"], tag["seat"]), {**data, MARK: str(source)})
    return PartSession(index=index, sample_id=sample_id, runs=runs, events=kept, calls=calls)


def reusable_reply(data: Mapping[str, Any], prompt: Any, player: str) -> Optional[str]:
    """The reply of a recorded seat call, if the resumed run would send exactly its request: the
    same prompt (as the completion fn records it) from the same player. The condition (model,
    completion args, sampling args, seed) is the same already: ``plan`` refuses another one."""
    tag = data.get(SEAT_TAG) or {}
    if tag.get("player") != player or _canonical(data.get("prompt")) != _canonical(prompt):
        return None
    sampled = data.get("sampled")
    if isinstance(sampled, list):
        return str(sampled[0]) if sampled else ""
    return None if sampled is None else str(sampled)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def check_samples(done: Mapping[int, DoneSession], sessions: Sequence[Any],
                  game_params: Callable[[Any, int], Mapping[str, Any]]) -> None:
    """A done session must be the same session in today's samples file: every game parameter the
    eval would log for its runs (``c_bar``, ``values``, ...) equals the logged one."""
    by_index = {s.index: s for s in sessions}
    for index, d in done.items():
        session = by_index.get(index)
        if session is None:
            continue
        for type_, data in d.events:
            if type_ != RUN_EVENT:
                continue
            run = int(data["run"])
            for key, value in game_params(session, run).items():
                if key in data and json.loads(json.dumps(value)) != data[key]:
                    raise ResumeRefused(
                        f"session {index} run {run + 1}: {key} is {data[key]} in the log, {value} in the samples "
                        "file: the samples file changed since the log was written")


def resume_path(arg: Optional[str]) -> Optional[str]:
    """The eval arg wins over the environment; empty means no resume."""
    value = arg if arg not in (None, "") else os.environ.get(RESUME_ENV, "")
    return str(value) if value else None
