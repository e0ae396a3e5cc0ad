"""What the seats said: a log's ``sampling`` events filed under (session, run, seat), read streaming.

The report shows how a model played (``report_html``): each seat's prompt and reply for a bounded
number of sessions per log, and why every rule break broke the rules (``answers.rule_break_kind``),
counted over every session. Logs can be hundreds of MB, so a log is read line by line, only
``sampling`` lines are decoded, and only the calls the report keeps are held in memory.

A ``sampling`` event belongs to the (session, run, seat) of its ``data["econarena"]`` tag
(``cell``, ``session``, ``run``, ``seat``, ``player``), which every seat call this version logs
carries: the calls are grouped by it. The log's one full read (``evallog.read_log``) noted where
each tagged call starts in the file, so the calls wanted are read at those offsets, each checked to
be the call its tag promised (else one stream over the log), and a report reads each log once, not
twice. Old logs, written before the tag, are read by ``old_logs``, which places a call by what its
prompt states.

Nothing here imports evals; a reply is only ever parsed (``core.answers``), never evaluated.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..core.answers import NO_ANSWER, answer_object, rule_break_kind
from ..games import get as get_game
from . import old_logs
from .evallog import EvalLog, HeldCalls
from .jsonl import iter_lines, lines_at
from .seat_tag import SeatKey, reply_and_reason, sampling_row, tagged_seat_key

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
        return {k: (v if isinstance(v, str) else _json_text(v))
                for k, v in obj.items() if k in ("understanding", "choice", "reason")}


def _json_text(v: Any) -> str:
    """``json.dumps(v, ensure_ascii=False, default=str)``; a plain int or finite float (most choices) as json
    writes it, without a JSON encoder made for it (one per call: every kept call of every log)."""
    if type(v) is int or (type(v) is float and math.isfinite(v)):
        return repr(v)
    return json.dumps(v, ensure_ascii=False, default=str)


@dataclass
class LogCalls:
    """What one log's seats said: the kept calls, and the kind of every rule break."""

    calls: dict[SeatKey, Call] = field(default_factory=dict)  # the sessions chosen for transcripts
    kinds: dict[SeatKey, str] = field(default_factory=dict)  # every invalid seat of an evaluated player
    examples: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (player, kind)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (player, kind) -> rule breaks
    seats: dict[str, int] = field(default_factory=dict)  # player -> seats played (scored runs)
    sampling_events: int = 0


def transcript_sessions(log: EvalLog, limit: Optional[int]) -> list[int]:
    """The sessions whose transcripts are kept: the first ``limit`` by index (None: all)."""
    sessions = sorted({int(s["session"]) for s in log.sessions})
    return sessions if limit is None else sessions[: max(0, limit)]


class Filing:
    """What one read of a log's seat calls is after, and what it found: shared by the tagged read
    here and the old-log read (``old_logs``)."""

    def __init__(self, log: EvalLog, players: Sequence[str], keep_sessions: Iterable[int]) -> None:
        self.out = LogCalls()
        self.keep = set(keep_sessions)
        wanted_players = set(players)
        self.events: dict[tuple[int, int], Mapping[str, Any]] = {}  # (session, run) -> run event
        self.seat_rows: dict[SeatKey, Mapping[str, Any]] = {}
        self.invalid: set[SeatKey] = set()
        for event in log.runs:
            session, run = int(event["session"]), int(event["run"])
            self.events[(session, run)] = event
            for seat in event["seats"]:
                seat_key = (session, run, int(seat["seat"]))
                self.seat_rows[seat_key] = seat
                player = seat["player"]
                self.out.seats[player] = self.out.seats.get(player, 0) + 1
                if not seat["valid"] and player in wanted_players:
                    self.invalid.add(seat_key)
        self.needed = {seat_key for seat_key in self.seat_rows if seat_key[0] in self.keep} | self.invalid
        self.found: set[SeatKey] = set()
        self.waiting: dict[tuple[int, int], set[int]] = defaultdict(set)  # (run, seat) -> wanted sessions not found
        for session, run, number in self.needed:
            self.waiting[(run, number)].add(session)

    def free(self, seat_key: SeatKey) -> Optional[SeatKey]:
        return seat_key if seat_key in self.needed and seat_key not in self.found else None

    def done(self) -> bool:
        return self.found >= self.needed

    def file(self, seat_key: SeatKey, data: Mapping[str, Any]) -> None:
        """The call of ``seat_key`` is ``data``: kept for the transcripts, and its rule break filed."""
        self.found.add(seat_key)
        self.waiting[seat_key[1:]].discard(seat_key[0])
        reply, finish = reply_and_reason(data)
        if seat_key[0] in self.keep:
            self.out.calls[seat_key] = Call(data.get("prompt"), reply, finish)
        if seat_key in self.invalid:
            _file_rule_break(self.out, seat_key, self.seat_rows, self.events, reply, finish)


def read_calls(log: EvalLog, players: Sequence[str], keep_sessions: Iterable[int],
               held: Optional[HeldCalls] = None) -> LogCalls:
    """The calls of ``keep_sessions``, and why each invalid seat of ``players`` broke the rules (every
    session), read from ``log``.

    Every seat call of a log this version writes carries its seat tag: the calls are grouped by it,
    read one by one where the log's first pass found them (``EvalLog.call_at``; those that pass kept,
    ``held``, are taken from there), else by one stream over the log's lines. A log with untagged calls
    (written before the tag) is read by placing each call from what its prompt states (``old_logs``)."""
    filing = Filing(log, players, keep_sessions)
    if filing.needed:
        if log.untagged_calls or not log.calls:
            old_logs.read_untagged(log, filing)
        elif not _at_offsets(log, filing, held):
            _stream_tagged(log, filing)
    out = filing.out
    for seat_key in sorted(filing.invalid - filing.found):  # no reply on record: the call failed, or was never recorded
        _file_rule_break(out, seat_key, filing.seat_rows, filing.events, None, None)
    return out


def _at_offsets(log: EvalLog, filing: Filing, held: Optional[HeldCalls] = None) -> bool:
    """The wanted calls read one by one where the log's first pass found them (or as that pass kept
    them: ``held``, the same calls); False, having filed nothing, if any line read is not the call its
    tag promised. Filed in the file's order either way."""
    got = []
    offsets = sorted(log.call_at(filing.needed).items(), key=lambda item: item[1])
    kept = [held.get(seat_key) if held is not None else None for seat_key, _ in offsets]
    lines = lines_at(log.path, [offset for (_, offset), data in zip(offsets, kept) if data is None])
    for (seat_key, _), data in zip(offsets, kept):
        if data is None:
            line = next(lines, None)
            row = sampling_row(line) if line is not None else None
            if row is None or tagged_seat_key(row["data"]) != seat_key:
                return False
            data = row["data"]
        got.append((seat_key, data))
    filing.out.sampling_events = log.calls
    for seat_key, data in got:
        filing.file(seat_key, data)
    return True


def _stream_tagged(log: EvalLog, filing: Filing) -> None:
    """One pass over the log's sampling lines, each filed by its tag: a group-by over the seat tag."""
    for _, line in iter_lines(log.path):
        if '"sampling"' not in line:  # a cheap test before anything else
            continue
        filing.out.sampling_events += 1
        row = sampling_row(line)
        seat_key = filing.free(tagged_seat_key(row["data"])) if row is not None else None  # type: ignore[arg-type]
        if seat_key is not None:
            filing.file(seat_key, row["data"])  # type: ignore[index]
            if filing.done():
                break

def _file_rule_break(out: LogCalls, seat_key: SeatKey, seat_rows: Mapping[SeatKey, Mapping[str, Any]],
                     events: Mapping[tuple[int, int], Mapping[str, Any]], reply: Optional[str],
                     finish: Optional[str]) -> None:
    session, run, seat = seat_key
    event = events[(session, run)]
    lo, hi = get_game(event["game"]).action_range(event)
    kind = rule_break_kind(reply, lo, hi, finish)
    if kind is None:
        # the eval found this seat invalid but the reply on record reads as valid: it is not the
        # reply that was scored (a call recorded twice), so say only what is certain
        kind = NO_ANSWER
    out.kinds[seat_key] = kind
    player = str(seat_rows[seat_key]["player"])
    out.counts[(player, kind)] = out.counts.get((player, kind), 0) + 1
    examples = out.examples.setdefault((player, kind), [])
    if len(examples) < EXAMPLES_PER_KIND:
        text = reply if reply is not None else ""
        examples.append({"session": session, "run": run, "seat": seat, "finish_reason": finish,
                         "reply": text[:MAX_EXAMPLE_CHARS], "cut": max(0, len(text) - MAX_EXAMPLE_CHARS),
                         "range": [lo, hi]})
