"""The check that every seat call of a log is filed under its own session.

Every seat call leaves one ``sampling`` event (the prompt, the reply, usage, ``finish_reason``),
recorded by the completion fn under the sample id current in its context. What a researcher reads
as a session's transcript, and its token usage, is the set of ``sampling`` events under that
session's sample id; so for every finished session there must be exactly one per (run, seat), and
each one's prompt must state what that session's run gave the seat: the range c̄, or the seat's own
value, as the session's ``econarena_run`` event has it (``Game.seat_facts``).

``filing_problems`` checks exactly that. A call's (session, run, seat) is its seat tag's, which
every call this version logs carries whatever recorded it (a built-in player, ``econarena/chat``,
evals' own fns, a user's fn); the prompt is only checked to state its run's numbers, never read for
its wording, so rewording a prompt cannot move a call. A log written before the tag has nothing but
its prompts: the old-log reader (``old_logs``) places its calls.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

from ..core.prompts import HISTORY_HEADING, fmt, prompt_text
from ..games import get as get_game
from .evallog import read_log
from .format import RUN_EVENT, SEAT_TAG, SESSION_EVENT
from .jsonl import iter_rows
from .old_logs import untagged_seat
from .seat_tag import states_number, tagged_seat_key


@dataclass
class SeatCall:
    sample_id: str
    run: int  # 0-based, as in econarena_run events
    seat: int
    data: dict[str, Any]  # the sampling event's data: prompt, sampled, usage, finish_reason, ...
    session: Optional[int] = None  # its tag's (None: a call of a log written before the tag)


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
            key = tagged_seat_key(data)
            if key is not None:
                session, run, seat = key
                out.calls.append(SeatCall(sid, run, seat, data, session))
                continue
            # a log written before the seat tag: its prompt is all it has (the old-log reader's to read)
            placed = None if SEAT_TAG in data else untagged_seat(data)
            if placed is None:
                out.unreadable.append((sid, "no seat tag"))
                continue
            out.calls.append(SeatCall(sid, placed[0], placed[1], data))
    return out


def filing_problems(path: Path) -> list[str]:
    """Every way the log's seat calls disagree with its sessions, and every figure it states that its
    runs do not score to; empty when each finished session has exactly one sampling event per (run,
    seat), each with that session's prompt, and its metrics are its runs'."""
    log = read_sessions(path)
    # every figure the log states is what its runs score (``evallog.derive_figures``)
    problems = list(read_log(Path(path)).forged)
    problems += [f"{sid}: a sampling event that is not a seat call's ({why})" for sid, why in log.unreadable
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
            missing = _unstated(call, event)
            if missing:
                problems.append(f"session {session}: run {call.run + 1} seat {call.seat}'s prompt is another "
                                f"session's: it does not state the session's {missing}")
            if call.session is not None and call.session != session:
                problems.append(f"session {session}: run {call.run + 1} seat {call.seat} tagged session {call.session}")
        for run, event in sorted(runs.items()):
            for seat in range(1, len(event["seats"]) + 1):
                n = seen.get((run, seat), 0)
                if n != 1:
                    problems.append(f"session {session}: {n} sampling events for run {run + 1} seat {seat}")
    return problems


def _unstated(call: SeatCall, event: Mapping[str, Any]) -> dict[str, float]:
    """The facts of the call's run (``Game.seat_facts``: its range, the seat's value) that its prompt
    does not state before its history (the numbers of other runs)."""
    try:
        expected = get_game(str(event["game"])).seat_facts(event, call.seat)
    except (KeyError, IndexError, TypeError, ValueError):
        return {"run event": float("nan")}
    text = prompt_text(call.data.get("prompt") or "")
    own = text.split(HISTORY_HEADING, 1)[0]
    return {k: v for k, v in expected.items() if v is not None and not states_number(own, fmt(v))}


def seat_calls(path: Path, sample_id: Optional[str] = None) -> dict[tuple[str, int, int], SeatCall]:
    """(sample id, run, seat) -> the seat call, for a session's transcript."""
    return {(c.sample_id, c.run, c.seat): c for c in read_sessions(path).calls
            if sample_id is None or c.sample_id == sample_id}
