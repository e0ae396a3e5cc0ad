"""Seat calls of old logs: those written before every ``sampling`` event carried its seat tag.

Such a call is placed under (session, run, seat) by what its prompt states: the seat and run it
names ("You are Player j", "run k of N") and the game facts it states (c̄, or the assets and the
seat's private value), which must match the run event of the session; among the sessions that
match, the one whose logged action for that seat is the reply's parsed choice, the session of the
event's ``sample_id`` first. evals may file a call made on a worker thread under another session's
sample id, so the sample id alone is not trusted. A tagged line in such a log is filed by its tag.

Most lines are not wanted, so a line is first looked at undecoded: the seat and run its prompt
names, and whether its prompt states the numbers of a wanted session. Only then is it decoded.
Should a wanted seat be missed that way (a prompt that writes its numbers otherwise), a second pass
reads every line of those seats in full. Logs this version writes never come here: their calls are
grouped by their tag (``transcripts.read_calls``).
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping, Optional

from ..core.answers import answer_object, number_of
from ..core.prompts import HISTORY_HEADING, fmt, prompt_text, seat_and_run
from ..games import get as get_game
from ..games import read_prompt
from .format import SEAT_TAG
from .jsonl import iter_lines
from .seat_tag import SeatKey, reply_and_reason, sampling_row, states_number, tagged_seat_key

if TYPE_CHECKING:
    from .evallog import EvalLog
    from .transcripts import Filing


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
_RAW_SEAT_TAG = f'"{SEAT_TAG}": {{'  # how a tagged line holds its tag, as evals' recorder writes JSON


@lru_cache(maxsize=65536)
def _tokens(key: Optional[tuple[float, Optional[float]]]) -> tuple[str, ...]:
    """The numbers a prompt with these facts (the top of the range, the seat's value) states, as the prompts write them
    (``prompts.fmt``), the one most telling first: the seat's value, then c̄ or the assets."""
    if key is None:
        return ()
    return tuple(fmt(x) for x in reversed(key) if x is not None and x >= 0)


def read_untagged(log: EvalLog, filing: Filing) -> None:
    """File the wanted calls of an old log (``filing``): a quick pass, then a thorough one if any is missing."""
    events, seat_rows = filing.events, filing.seat_rows
    by_facts: dict[tuple[int, int, Any], list[int]] = defaultdict(list)  # (run, seat, facts) -> sessions
    by_action: dict[tuple[int, int], dict[Optional[float], list[int]]] = defaultdict(dict)  # -> sessions
    tokens_of: dict[SeatKey, tuple[str, ...]] = {}
    for (session, run), event in events.items():
        top = _range_top(event)
        for seat in event["seats"]:
            number = int(seat["seat"])
            key = None if top is None else (top, _seat_value(event, number))
            by_facts[(run, number, key)].append(session)
            action = seat["action"]
            by_action[(run, number)].setdefault(None if action is None else float(action), []).append(session)
            tokens_of[(session, run, number)] = _tokens(key)

    def states(head: str, seat_key: SeatKey) -> bool:
        tokens = tokens_of[seat_key]
        return bool(tokens) and all(states_number(head, t) for t in tokens)

    def exact(data: Mapping[str, Any], sample_id: Any, run: int, seat: int, text: str,
              action: Optional[float]) -> Optional[SeatKey]:
        """The seat key by the facts the game reads in the prompt, and the reply's action where they tie."""
        try:
            facts = read_prompt(text)
            sessions = by_facts.get((run, seat, (float(facts.upper), facts.value)), [])
        except ValueError:
            sessions = [s for ss in by_action.get((run, seat), {}).values() for s in ss]
        seat_keys = [(s, run, seat) for s in sessions if filing.free((s, run, seat))]
        if len(sessions) > 1 and seat_keys:  # sessions alike in what the prompt states: the reply's action decides
            seat_keys = [seat_key for seat_key in seat_keys if _close(action, seat_rows[seat_key]["action"])]
            first = _sample_session(sample_id)
            seat_keys.sort(key=lambda seat_key: seat_key[0] != first)
        return seat_keys[0] if seat_keys else None

    def place(line: str, thorough: bool) -> tuple[Optional[SeatKey], Optional[Mapping[str, Any]]]:
        """The seat key of a sampling line that is still wanted, and its decoded data; (None, None) for any other."""
        seat_m, run_m = _RAW_SEAT.search(line), _RAW_RUN.search(line)
        quick = seat_m is not None and run_m is not None and _RAW_SEAT_TAG not in line
        head = line
        if quick:
            seat, run = int(seat_m.group(1)), int(run_m.group(1)) - 1  # type: ignore[union-attr]
            wanted = filing.waiting.get((run, seat))
            if not wanted:
                return None, None
            # the prompt's own statement: from its seat line to the history (other runs' numbers) or the reply
            start = seat_m.start()  # type: ignore[union-attr]
            ends = [i for i in (line.find(HISTORY_HEADING, start), line.find('"sampled"', start)) if i > 0]
            head = line[start:min(ends)] if ends else line[start:]
            if not thorough and not any(states(head, (s, run, seat)) for s in wanted):
                return None, None  # its prompt states none of the wanted sessions' numbers
        row = sampling_row(line)
        if row is None:
            return None, None
        data = row["data"]
        if isinstance(data.get(SEAT_TAG), Mapping) and data[SEAT_TAG].get("session") is not None:
            seat_key = filing.free(tagged_seat_key(data))  # type: ignore[arg-type]
            return (seat_key, data) if seat_key else (None, None)
        text = prompt_text(data.get("prompt") or "")
        if not quick:
            try:
                seat, run1, _ = seat_and_run(text)
                run = run1 - 1
            except ValueError:
                return None, None
        action = _reply_action(reply_and_reason(data)[0])
        if not thorough:
            # the sessions whose logged action this reply is; where several, those whose numbers it states
            sessions = by_action.get((run, seat), {}).get(action, [])
            if len(sessions) > 1:
                sessions = [s for s in sessions if states(head, (s, run, seat))]
            if len(sessions) == 1:  # one session fits: the prompt's own
                seat_key = filing.free((sessions[0], run, seat))
                return (seat_key, data) if seat_key else (None, None)
        return exact(data, row.get("sample_id"), run, seat, text, action), data

    def stream(thorough: bool) -> None:
        for _, line in iter_lines(log.path):
            if '"sampling"' not in line:  # a cheap test before anything else
                continue
            if not thorough:
                filing.out.sampling_events += 1
            seat_key, data = place(line, thorough)
            if seat_key is None or data is None:
                continue
            filing.file(seat_key, data)
            if filing.done():
                break

    stream(thorough=False)
    if not filing.done() and filing.out.sampling_events:
        stream(thorough=True)


def untagged_seat(data: Mapping[str, Any]) -> Optional[tuple[int, int]]:
    """(run 0-based, seat) an untagged seat call's prompt names, for the filing check and a resume of
    an old log; None for a prompt that names none."""
    try:
        seat, run1, _ = seat_and_run(prompt_text(data.get("prompt") or ""))
    except ValueError:
        return None
    return run1 - 1, seat
