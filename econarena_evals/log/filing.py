"""The check that every seat call of a log is filed under its own session.

Every seat call leaves one ``sampling`` event (the prompt, the reply, usage, ``finish_reason``),
recorded by the completion fn under the sample id current in its context. What a researcher reads
as a session's transcript, and its token usage, is the set of ``sampling`` events under that
session's sample id; so for every finished session there must be exactly one per (run, seat), and
each one's prompt must be the prompt of that session's run: the range c̄, or the seat's own value,
as the session's ``econarena_run`` event has it (``Game.seat_facts``).

``filing_problems`` checks exactly that, from the prompt text alone, so it holds whatever recorded
the event (a built-in player, ``econarena/chat``, evals' own fns, a user's fn).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from ..games import get as get_game
from ..games import read_prompt
from .evallog import read_log
from .format import RUN_EVENT, SEAT_TAG, SESSION_EVENT
from .jsonl import iter_rows


@dataclass
class SeatCall:
    sample_id: str
    run: int  # 0-based, as in econarena_run events
    seat: int
    data: dict[str, Any]  # the sampling event's data: prompt, sampled, usage, finish_reason, ...
    facts: Any = None  # PromptFacts read from the prompt


@dataclass
class LogSessions:
    """A log's finished sessions (by sample id), their run events, and every seat call."""

    runs: dict[str, dict[int, dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    finished: dict[str, int] = field(default_factory=dict)  # sample id -> session index
    calls: list[SeatCall] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (sample id, why)


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    for _, row in iter_rows(path):
        if isinstance(row.get("data"), dict):
            yield row


def read_sessions(path: Path) -> LogSessions:
    out = LogSessions()
    for row in _rows(Path(path)):
        sid, data, kind = str(row.get("sample_id")), row["data"], row.get("type")
        if kind == RUN_EVENT:
            out.runs[sid][int(data["run"])] = data
        elif kind == SESSION_EVENT and not data.get("errored"):
            out.finished[sid] = int(data["session"])
        elif kind == "sampling":
            try:
                facts = read_prompt(data.get("prompt") or "")
            except ValueError as exc:
                out.unreadable.append((sid, str(exc)))
                continue
            out.calls.append(SeatCall(sid, facts.run - 1, facts.seat, data, facts))
    return out


def filing_problems(path: Path) -> list[str]:
    """Every way the log's seat calls disagree with its sessions, and every figure it states that its
    runs do not score to; empty when each finished session has exactly one sampling event per (run,
    seat), each with that session's prompt, and its metrics are its runs'."""
    log = read_sessions(path)
    # every figure the log states is what its runs score (``evallog.derive_figures``)
    problems = list(read_log(Path(path)).forged)
    problems += [f"{sid}: a sampling event that is not a seat prompt ({why})" for sid, why in log.unreadable
                 if sid in log.finished]
    by_sample: dict[str, list[SeatCall]] = defaultdict(list)
    for call in log.calls:
        by_sample[call.sample_id].append(call)
    for sid, session in sorted(log.finished.items(), key=lambda kv: kv[1]):
        runs = log.runs.get(sid, {})
        seen: dict[tuple[int, int], int] = defaultdict(int)
        for call in by_sample.get(sid, []):
            seen[(call.run, call.seat)] += 1
            event = runs.get(call.run)
            if event is None:
                problems.append(f"session {session}: a call for run {call.run + 1} seat {call.seat}, a run it has no event for")
                continue
            expected = get_game(str(event["game"])).seat_facts(event, call.seat)
            wrong = {k: (getattr(call.facts, k), v) for k, v in expected.items() if getattr(call.facts, k) != v}
            if wrong:
                problems.append(f"session {session}: run {call.run + 1} seat {call.seat}'s prompt is another session's "
                                f"(prompt, session): {wrong}")
            tag = call.data.get(SEAT_TAG)
            if isinstance(tag, dict) and (tag.get("session"), tag.get("run"), tag.get("seat")) != (session, call.run, call.seat):
                problems.append(f"session {session}: run {call.run + 1} seat {call.seat} tagged {tag}")
        for run, event in sorted(runs.items()):
            for seat in range(1, len(event["seats"]) + 1):
                n = seen.get((run, seat), 0)
                if n != 1:
                    problems.append(f"session {session}: {n} sampling events for run {run + 1} seat {seat}")
    return problems


def seat_calls(path: Path, sample_id: Optional[str] = None) -> dict[tuple[str, int, int], SeatCall]:
    """(sample id, run, seat) -> the seat call, for a session's transcript."""
    return {(c.sample_id, c.run, c.seat): c for c in read_sessions(path).calls
            if sample_id is None or c.sample_id == sample_id}
