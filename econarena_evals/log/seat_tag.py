"""A ``sampling`` event as the readers of seat calls see it: the row decoded from its line, the
seat it is filed under (its tag), and its reply with the finish reason.

A call's place is its tag's, never what its prompt says: the prompt's wording is the game's, and
rewording a sentence must not move a call. Only logs written before the tag (``old_logs``) are
placed by their prompts."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from .format import SEAT_TAG
from .jsonl import decode_row

SeatKey = tuple[int, int, int]  # (session, run 0-based, seat 1-based): one seat call's place in a log


def sampling_row(line: str) -> Optional[dict[str, Any]]:
    try:
        row = decode_row(line)
    except ValueError:
        return None
    if not isinstance(row, dict) or row.get("type") != "sampling" or not isinstance(row.get("data"), dict):
        return None
    return row


def reply_and_reason(data: Mapping[str, Any]) -> tuple[Optional[str], Optional[str]]:
    sampled = data.get("sampled")
    reply = sampled[0] if isinstance(sampled, list) and sampled else sampled
    reason = data.get("finish_reason")
    if isinstance(reason, list):  # one per choice, should an endpoint send several
        reason = reason[0] if reason else None
    return (reply if isinstance(reply, str) else None), (str(reason) if reason is not None else None)


def tagged_seat_key(data: Mapping[str, Any]) -> Optional[SeatKey]:
    """A tagged call's ``SeatKey``: its tag's session, run and seat; None for an untagged call or a
    tag without all three as integers."""
    tag = data.get(SEAT_TAG)
    if not isinstance(tag, Mapping):
        return None
    key = tuple(tag.get(k) for k in ("session", "run", "seat"))
    if not all(isinstance(k, int) and not isinstance(k, bool) for k in key):
        return None
    return key  # type: ignore[return-value]


def states_number(text: str, number: str) -> bool:
    """Does ``text`` hold ``number`` as a whole number (not a part of 147 or 4.75)? A check that a
    prompt states what its run's event says, without reading the prompt's wording."""
    start = text.find(number)
    while start >= 0:
        end = start + len(number)
        before = text[start - 1] if start else " "
        after, next_ = text[end:end + 1], text[end + 1:end + 2]
        if not (before.isdigit() or before == "." or after.isdigit() or (after == "." and next_.isdigit())):
            return True
        start = text.find(number, start + 1)
    return False
