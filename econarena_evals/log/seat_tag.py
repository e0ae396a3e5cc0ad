"""A ``sampling`` event as the readers of seat calls see it: the row decoded from its line, the
seat it is filed under (its tag), and its reply with the finish reason."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..core.prompts import prompt_text, seat_and_run
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
    """A tagged call's ``SeatKey``: the tag's session, and the seat and run its prompt names (the tag's
    where the prompt names none)."""
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
