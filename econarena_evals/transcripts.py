"""What the seats said: a log's ``sampling`` events filed under (session, run, seat), read streaming.

The report shows how a model played (``report_html``): each seat's prompt and reply for a bounded
number of sessions per log, and why every rule break broke the rules (``utils.rule_break_kind``),
counted over every session. Logs can be hundreds of MB, so a log is read line by line, only
``sampling`` lines are decoded, and only the calls the report keeps are held in memory.

Which (session, run, seat) a ``sampling`` event belongs to:

1. Its ``data["econarena"]`` tag (``cell``, ``session``, ``run``, ``seat``, ``player``), where the
   eval recorded one.
2. Otherwise its prompt: the seat and run it names ("You are Player j", "run k of N"), and the
   game facts it states (c̄, or the assets and the seat's private value), which must match the
   run event of the session; among the sessions that match, the one whose logged action for that
   seat is the reply's parsed choice, the session of the event's ``sample_id`` first. evals may
   file a call made on a worker thread under another session's sample id, so the sample id alone
   is not trusted.

Nothing here imports evals; a reply is only ever parsed (``utils``), never evaluated.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from .games import get as get_game
from .logs import EvalLog
from .prompts import prompt_text, read_prompt, seat_and_run
from .utils import NO_ANSWER, RULE_BREAK_KINDS, answer_object, number_of, rule_break_kind

Slot = tuple[int, int, int]  # (session, run 0-based, seat 1-based)
EXAMPLES_PER_KIND = 3
MAX_REPLY_CHARS = 20_000  # a longer reply is shown cut, saying how much is left out
MAX_EXAMPLE_CHARS = 2_000


@dataclass
class Call:
    """One seat call as the log has it."""

    prompt: Any  # chat messages (list of {role, content}) or a string
    reply: Optional[str]
    finish_reason: Optional[str] = None

    def fields(self) -> dict[str, Optional[str]]:
        """``understanding``, ``choice`` and ``reason`` of the object that decides, as text."""
        obj = answer_object(self.reply)
        if obj is None:
            return {}
        return {k: (v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str))
                for k, v in obj.items() if k in ("understanding", "choice", "reason")}


@dataclass
class LogCalls:
    """What one log's seats said: the kept calls, and the kind of every rule break."""

    calls: dict[Slot, Call] = field(default_factory=dict)  # the sessions chosen for transcripts
    kinds: dict[Slot, str] = field(default_factory=dict)  # every invalid seat of an evaluated player
    examples: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (player, kind)
    sampling_events: int = 0


def transcript_sessions(log: EvalLog, limit: Optional[int]) -> list[int]:
    """The sessions whose transcripts are kept: the first ``limit`` by index (None: all)."""
    sessions = sorted({int(s["session"]) for s in log.sessions})
    return sessions if limit is None else sessions[: max(0, limit)]


def _close(a: Optional[float], b: Optional[float]) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _reply_action(reply: Optional[str]) -> Optional[float]:
    """The action the eval logs for a reply: its parsed choice if finite, else None."""
    obj = answer_object(reply)
    x = None if obj is None else number_of(obj["choice"])
    return x if x is not None and math.isfinite(x) else None


def _sample_session(sample_id: Any) -> Optional[int]:
    try:
        return int(str(sample_id).rsplit(".", 1)[1])
    except (IndexError, ValueError):
        return None


def _reply_and_reason(data: Mapping[str, Any]) -> tuple[Optional[str], Optional[str]]:
    sampled = data.get("sampled")
    reply = sampled[0] if isinstance(sampled, list) and sampled else sampled
    reason = data.get("finish_reason")
    if isinstance(reason, list):  # one per choice, should an endpoint send several
        reason = reason[0] if reason else None
    return (reply if isinstance(reply, str) else None), (str(reason) if reason is not None else None)


def _event_key(event: Mapping[str, Any], seat: int) -> Optional[tuple[float, Optional[float]]]:
    """What a prompt of this run and seat states that tells sessions apart: the top of the valid
    range (c̄ or the assets) and, in an auction, the seat's private value."""
    try:
        _, hi = get_game(event["game"]).action_range(event)
    except (KeyError, ValueError, TypeError):
        return None
    values = event.get("values")
    value = float(values[seat - 1]) if isinstance(values, list) and len(values) >= seat else None
    return float(hi), value


def read_calls(log: EvalLog, players: Sequence[str], keep_sessions: Iterable[int]) -> LogCalls:
    """Stream ``log`` once: the calls of ``keep_sessions``, and why each invalid seat of ``players`` broke
    the rules (every session). Stops reading as soon as every wanted seat is found."""
    out = LogCalls()
    keep = set(keep_sessions)
    wanted_players = set(players)
    events: dict[tuple[int, int], Mapping[str, Any]] = {}  # (session, run) -> run event
    seat_rows: dict[Slot, Mapping[str, Any]] = {}
    by_facts: dict[tuple[int, int, Any], list[int]] = defaultdict(list)  # (run, seat, key) -> sessions
    invalid: set[Slot] = set()
    for event in log.runs:
        session, run = int(event["session"]), int(event["run"])
        events[(session, run)] = event
        for seat in event["seats"]:
            slot = (session, run, int(seat["seat"]))
            seat_rows[slot] = seat
            by_facts[(run, slot[2], _event_key(event, slot[2]))].append(session)
            if not seat["valid"] and seat["player"] in wanted_players:
                invalid.add(slot)
    needed = {slot for slot in seat_rows if slot[0] in keep} | invalid
    found: set[Slot] = set()

    def place(data: Mapping[str, Any], sample_id: Any) -> Optional[Slot]:
        """The slot of a sampling event that the report still needs; None for any other."""
        text = prompt_text(data.get("prompt") or "")
        try:
            seat, run1, _ = seat_and_run(text)
            run: Optional[int] = run1 - 1
        except ValueError:
            seat = run = None  # type: ignore[assignment]
        tag = data.get("econarena")
        if isinstance(tag, Mapping) and tag.get("session") is not None:
            try:
                session = int(tag["session"])
                if seat is None or run is None:
                    seat, run = int(tag["seat"]), int(tag["run"])
            except (TypeError, ValueError, KeyError):
                return None
            slot = (session, run, seat)
            return slot if slot in needed and slot not in found else None
        if seat is None or run is None:
            return None
        try:
            facts = read_prompt(text)
            sessions = by_facts.get((run, seat, (float(facts.upper), facts.value)), [])
        except ValueError:
            sessions = [s for (r, st, _), ss in by_facts.items() if (r, st) == (run, seat) for s in ss]
        open_slots = [(s, run, seat) for s in sessions if (s, run, seat) in needed and (s, run, seat) not in found]
        if not open_slots:
            return None
        if len(sessions) > 1:  # sessions alike in what the prompt states: the reply's action decides
            reply, _ = _reply_and_reason(data)
            action = _reply_action(reply)
            open_slots = [slot for slot in open_slots if _close(action, seat_rows[slot]["action"])]
            first = _sample_session(sample_id)
            open_slots.sort(key=lambda slot: slot[0] != first)
        return open_slots[0] if open_slots else None

    try:
        handle = open(log.path, encoding="utf-8", errors="replace")
    except OSError:
        return out
    with handle:
        for line in handle:
            if '"sampling"' not in line:  # a cheap test before decoding the line
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict) or row.get("type") != "sampling" or not isinstance(row.get("data"), dict):
                continue
            out.sampling_events += 1
            data = row["data"]
            slot = place(data, row.get("sample_id"))
            if slot is None:
                continue
            found.add(slot)
            reply, finish = _reply_and_reason(data)
            if slot[0] in keep:
                out.calls[slot] = Call(data.get("prompt"), reply, finish)
            if slot in invalid:
                _file_rule_break(out, slot, seat_rows, events, reply, finish)
            if found >= needed:
                break
    for slot in sorted(invalid - found):  # no reply on record: the call failed, or was never recorded
        _file_rule_break(out, slot, seat_rows, events, None, None)
    return out


def _file_rule_break(out: LogCalls, slot: Slot, seat_rows: Mapping[Slot, Mapping[str, Any]],
                     events: Mapping[tuple[int, int], Mapping[str, Any]], reply: Optional[str],
                     finish: Optional[str]) -> None:
    session, run, seat = slot
    event = events[(session, run)]
    lo, hi = get_game(event["game"]).action_range(event)
    kind = rule_break_kind(reply, lo, hi, finish)
    if kind is None:
        # the eval found this seat invalid but the reply on record reads as valid: it is not the
        # reply that was scored (a call recorded twice), so say only what is certain
        kind = NO_ANSWER
    out.kinds[slot] = kind
    player = str(seat_rows[slot]["player"])
    examples = out.examples.setdefault((player, kind), [])
    if len(examples) < EXAMPLES_PER_KIND:
        text = reply if reply is not None else ""
        examples.append({"session": session, "run": run, "seat": seat, "finish_reason": finish,
                         "reply": text[:MAX_EXAMPLE_CHARS], "cut": max(0, len(text) - MAX_EXAMPLE_CHARS),
                         "range": [lo, hi]})


def count_kinds(kinds: Mapping[Slot, str], seat_players: Mapping[Slot, str]) -> dict[str, dict[str, int]]:
    """{player: {kind: count}} in the order of ``RULE_BREAK_KINDS``."""
    out: dict[str, dict[str, int]] = {}
    for slot, kind in kinds.items():
        counts = out.setdefault(seat_players[slot], {k: 0 for k in RULE_BREAK_KINDS})
        counts[kind] = counts.get(kind, 0) + 1
    return out
