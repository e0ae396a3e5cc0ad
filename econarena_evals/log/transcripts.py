"""What the seats said: a log's ``sampling`` events filed under (session, run, seat), read streaming.

The report shows how a model played (``report_html``): each seat's prompt and reply for a bounded
number of sessions per log, and why every rule break broke the rules (``answers.rule_break_kind``),
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

Where every seat call of a log carries the tag, the log's one full read (``evallog.read_log``) noted
where each tagged call starts in the file: the calls wanted are then read at those offsets, each
checked to be the call its tag promised (else the log is streamed as above), so that a report reads
each log once, not twice.

Nothing here imports evals; a reply is only ever parsed (``core.answers``), never evaluated.
"""
from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..core.answers import NO_ANSWER, answer_object, number_of, rule_break_kind
from ..core.prompts import fmt, prompt_text, seat_and_run
from ..games import get as get_game
from ..games import read_prompt
from .evallog import EvalLog
from .format import SEAT_TAG
from .jsonl import decode_row, iter_lines, lines_at

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
    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (player, kind) -> rule breaks
    seats: dict[str, int] = field(default_factory=dict)  # player -> seats played (scored runs)
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


def _range_top(event: Mapping[str, Any]) -> Optional[float]:
    """The top of a run's valid range (c̄ or the assets), which every prompt of the run states."""
    try:
        return float(get_game(event["game"]).action_range(event)[1])
    except (KeyError, ValueError, TypeError):
        return None


def _seat_value(event: Mapping[str, Any], seat: int) -> Optional[float]:
    """The seat's own value that its prompt states, where the game has one (None otherwise)."""
    try:
        value = get_game(event["game"]).seat_facts(event, seat).get("value")
        return None if value is None else float(value)
    except (KeyError, IndexError, ValueError, TypeError):
        return None


# On the raw line, before any decoding: the seat and run a prompt names, and where its history starts.
_RAW_SEAT, _RAW_RUN = re.compile(r"You are Player (\d+)"), re.compile(r"This is run (\d+) of")
HISTORY_HEADING = "Results of the last "  # prompts.history_block
_RAW_SEAT_TAG = f'"{SEAT_TAG}": {{'  # how a tagged line holds its tag, as evals' recorder writes JSON


def _states(line: str, number: str) -> bool:
    """Does ``line`` hold ``number`` as a whole number (not a part of 147 or 4.75)?"""
    start = line.find(number)
    while start >= 0:
        end = start + len(number)
        before = line[start - 1] if start else " "
        after, next_ = line[end:end + 1], line[end + 1:end + 2]
        if not (before.isdigit() or before == "." or after.isdigit() or (after == "." and next_.isdigit())):
            return True
        start = line.find(number, start + 1)
    return False


@lru_cache(maxsize=65536)
def _tokens(key: Optional[tuple[float, Optional[float]]]) -> tuple[str, ...]:
    """The numbers a prompt with these facts (the top of the range, the seat's value) states, as the prompts write them
    (``prompts.fmt``), the one most telling first: the seat's value, then c̄ or the assets."""
    if key is None:
        return ()
    return tuple(fmt(x) for x in reversed(key) if x is not None and x >= 0)


def read_calls(log: EvalLog, players: Sequence[str], keep_sessions: Iterable[int]) -> LogCalls:
    """Stream ``log``: the calls of ``keep_sessions``, and why each invalid seat of ``players`` broke the
    rules (every session). Stops reading as soon as every wanted seat is found.

    Most lines are not wanted, so a line is first looked at undecoded: the seat and run its prompt
    names, and whether its prompt states the numbers (c̄, or the assets and the seat's value) of a
    wanted session. Only then is it decoded; the sessions whose logged action for that seat is the
    reply's, and whose numbers the prompt states, are the candidates, and where several remain the
    game reads the prompt. Should a wanted seat be missed that way (a prompt that writes its numbers
    otherwise), a second pass reads every line of those seats in full."""
    out = LogCalls()
    keep = set(keep_sessions)
    wanted_players = set(players)
    events: dict[tuple[int, int], Mapping[str, Any]] = {}  # (session, run) -> run event
    seat_rows: dict[Slot, Mapping[str, Any]] = {}
    by_facts: dict[tuple[int, int, Any], list[int]] = defaultdict(list)  # (run, seat, facts) -> sessions
    by_action: dict[tuple[int, int], dict[Optional[float], list[int]]] = defaultdict(dict)  # -> sessions
    tokens_of: dict[Slot, tuple[str, ...]] = {}
    invalid: set[Slot] = set()
    for event in log.runs:
        session, run = int(event["session"]), int(event["run"])
        events[(session, run)] = event
        for seat in event["seats"]:
            slot = (session, run, int(seat["seat"]))
            seat_rows[slot] = seat
            player = seat["player"]
            out.seats[player] = out.seats.get(player, 0) + 1
            if not seat["valid"] and player in wanted_players:
                invalid.add(slot)

    def facts() -> None:
        """What the streaming read places untagged lines by: each seat's facts, action and numbers."""
        for (session, run), event in events.items():
            top = _range_top(event)
            for seat in event["seats"]:
                number = int(seat["seat"])
                key = None if top is None else (top, _seat_value(event, number))
                by_facts[(run, number, key)].append(session)
                action = seat["action"]
                by_action[(run, number)].setdefault(None if action is None else float(action), []).append(session)
                tokens_of[(session, run, number)] = _tokens(key)
    needed = {slot for slot in seat_rows if slot[0] in keep} | invalid
    found: set[Slot] = set()
    waiting: dict[tuple[int, int], set[int]] = defaultdict(set)  # (run, seat) -> wanted sessions not found yet
    for session, run, number in needed:
        waiting[(run, number)].add(session)

    def states(head: str, slot: Slot) -> bool:
        tokens = tokens_of[slot]
        return bool(tokens) and all(_states(head, t) for t in tokens)

    def free(slot: Slot) -> Optional[Slot]:
        return slot if slot in needed and slot not in found else None

    def exact(data: Mapping[str, Any], sample_id: Any, run: int, seat: int, text: str,
              action: Optional[float]) -> Optional[Slot]:
        """The slot by the facts the game reads in the prompt, and the reply's action where they tie."""
        try:
            facts = read_prompt(text)
            sessions = by_facts.get((run, seat, (float(facts.upper), facts.value)), [])
        except ValueError:
            sessions = [s for ss in by_action.get((run, seat), {}).values() for s in ss]
        slots = [(s, run, seat) for s in sessions if free((s, run, seat))]
        if len(sessions) > 1 and slots:  # sessions alike in what the prompt states: the reply's action decides
            slots = [slot for slot in slots if _close(action, seat_rows[slot]["action"])]
            first = _sample_session(sample_id)
            slots.sort(key=lambda slot: slot[0] != first)
        return slots[0] if slots else None

    def place(line: str, thorough: bool) -> tuple[Optional[Slot], Optional[Mapping[str, Any]]]:
        """The slot of a sampling line that is still wanted, and its decoded data; (None, None) for any other."""
        seat_m, run_m = _RAW_SEAT.search(line), _RAW_RUN.search(line)
        quick = seat_m is not None and run_m is not None and _RAW_SEAT_TAG not in line
        head = line
        if quick:
            seat, run = int(seat_m.group(1)), int(run_m.group(1)) - 1  # type: ignore[union-attr]
            wanted = waiting.get((run, seat))
            if not wanted:
                return None, None
            # the prompt's own statement: from its seat line to the history (other runs' numbers) or the reply
            start = seat_m.start()  # type: ignore[union-attr]
            ends = [i for i in (line.find(HISTORY_HEADING, start), line.find('"sampled"', start)) if i > 0]
            head = line[start:min(ends)] if ends else line[start:]
            if not thorough and not any(states(head, (s, run, seat)) for s in wanted):
                return None, None  # its prompt states none of the wanted sessions' numbers
        row = _decode(line)
        if row is None:
            return None, None
        data = row["data"]
        text = prompt_text(data.get("prompt") or "")
        tag = data.get(SEAT_TAG)
        if isinstance(tag, Mapping) and tag.get("session") is not None:
            try:
                seat, run1, _ = seat_and_run(text)
                run = run1 - 1
            except ValueError:
                seat, run = None, None  # type: ignore[assignment]
            try:
                session = int(tag["session"])
                if seat is None or run is None:
                    seat, run = int(tag["seat"]), int(tag["run"])
            except (TypeError, ValueError, KeyError, OverflowError):
                return None, None
            slot = free((session, run, seat))
            return (slot, data) if slot else (None, None)
        if not quick:
            try:
                seat, run1, _ = seat_and_run(text)
                run = run1 - 1
            except ValueError:
                return None, None
        action = _reply_action(_reply_and_reason(data)[0])
        if not thorough:
            # the sessions whose logged action this reply is; where several, those whose numbers it states
            sessions = by_action.get((run, seat), {}).get(action, [])
            if len(sessions) > 1:
                sessions = [s for s in sessions if states(head, (s, run, seat))]
            if len(sessions) == 1:  # one session fits: the prompt's own
                slot = free((sessions[0], run, seat))
                return (slot, data) if slot else (None, None)
        return exact(data, row.get("sample_id"), run, seat, text, action), data

    def stream(thorough: bool) -> None:
        for _, line in iter_lines(log.path):
            if '"sampling"' not in line:  # a cheap test before anything else
                continue
            if not thorough:
                out.sampling_events += 1
            slot, data = place(line, thorough)
            if slot is None or data is None:
                continue
            found.add(slot)
            waiting[slot[1:]].discard(slot[0])
            reply, finish = _reply_and_reason(data)
            if slot[0] in keep:
                out.calls[slot] = Call(data.get("prompt"), reply, finish)
            if slot in invalid:
                _file_rule_break(out, slot, seat_rows, events, reply, finish)
            if found >= needed:
                break

    def tagged_slot(data: Mapping[str, Any]) -> Optional[Slot]:
        """A tagged call's slot as ``place`` files it: the tag's session, the seat and run its prompt names."""
        tag = data.get(SEAT_TAG)
        if not isinstance(tag, Mapping):
            return None
        try:
            seat, run1, _ = seat_and_run(prompt_text(data.get("prompt") or ""))
            session, run = int(tag["session"]), run1 - 1
        except ValueError:
            try:
                session, run, seat = int(tag["session"]), int(tag["run"]), int(tag["seat"])
            except (TypeError, ValueError, KeyError, OverflowError):
                return None
        except (TypeError, KeyError, OverflowError):
            return None
        return session, run, seat

    def at_offsets() -> bool:
        """The wanted calls read one by one where the log's first pass found them (every seat call of the
        log tagged); False, having changed nothing, if any line read is not the call its tag promised."""
        if log.untagged_calls or not log.calls:
            return False
        got = []
        offsets = sorted(log.call_at(needed).items(), key=lambda item: item[1])
        for (slot, _), line in zip(offsets, lines_at(log.path, [offset for _, offset in offsets])):
            row = _decode(line) if line is not None else None
            if row is None or tagged_slot(row["data"]) != slot:
                return False
            got.append((slot, row["data"]))
        out.sampling_events = log.calls
        for slot, data in got:
            found.add(slot)
            reply, finish = _reply_and_reason(data)
            if slot[0] in keep:
                out.calls[slot] = Call(data.get("prompt"), reply, finish)
            if slot in invalid:
                _file_rule_break(out, slot, seat_rows, events, reply, finish)
        return True

    if needed and not at_offsets():
        facts()
        stream(thorough=False)
        if not found >= needed and out.sampling_events:
            stream(thorough=True)
    for slot in sorted(invalid - found):  # no reply on record: the call failed, or was never recorded
        _file_rule_break(out, slot, seat_rows, events, None, None)
    return out


def _decode(line: str) -> Optional[dict[str, Any]]:
    try:
        row = decode_row(line)
    except ValueError:
        return None
    if not isinstance(row, dict) or row.get("type") != "sampling" or not isinstance(row.get("data"), dict):
        return None
    return row


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
    out.counts[(player, kind)] = out.counts.get((player, kind), 0) + 1
    examples = out.examples.setdefault((player, kind), [])
    if len(examples) < EXAMPLES_PER_KIND:
        text = reply if reply is not None else ""
        examples.append({"session": session, "run": run, "seat": seat, "finish_reason": finish,
                         "reply": text[:MAX_EXAMPLE_CHARS], "cut": max(0, len(text) - MAX_EXAMPLE_CHARS),
                         "range": [lo, hi]})
