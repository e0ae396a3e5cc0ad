"""Reading a seat's answer (contract §5). Nothing here executes or evaluates model output.

``parse_choice`` returns the number the answer commits to, or None. Whether that number is a
legal move (finite, in range) is the game's business, not the parser's.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Optional

# A longer answer (after reasoning blocks are dropped) is a rule break rather than a parse: with the
# eval's max_tokens no honest answer comes near it, and it bounds the parser's work per reply.
MAX_ANSWER_CHARS = 100_000
# Failed JSON decode attempts per answer; each '{' that opens no object costs one.
MAX_DECODE_ATTEMPTS = 5_000

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
# ASCII digits only: float() would also take Arabic-Indic or full-width digits.
_NUMBER = re.compile(r"[ \t]*[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[ \t]*")
# strict=False: a literal newline or tab inside a JSON string (real models write them in "reason")
# leaves the object unambiguous, so it is no rule break (contract §5).
_DECODER = json.JSONDecoder(strict=False)


def _past_int_digits(digits: str) -> float:
    """An integer literal longer than Python's int() reads (4,300 digits): a number, far out of range."""
    try:
        return int(digits)
    except ValueError:
        return -math.inf if digits.startswith("-") else math.inf


# For the rule-break kinds only: an object the decoder above refuses for an integer too long to read
# is still an answer with a number (out of range), not "no JSON object". The score reads neither.
_LENIENT = json.JSONDecoder(strict=False, parse_int=_past_int_digits)
_LONG_DIGITS = re.compile(r"[0-9]{4300}")


def strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` blocks with their contents.

    An unclosed ``<think>`` hides everything after it (the answer never came); a lone ``</think>``
    (chat templates that open the block themselves) hides everything before it.
    """
    if "<" not in text:  # every tag the patterns below look for starts with it: the usual answer
        return text
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened is not None:
        text = text[: opened.start()]
    return text


def top_level_objects(text: str, decoder: json.JSONDecoder = _DECODER) -> list[dict[str, Any]]:
    """The JSON objects in ``text`` that are not nested in another one, left to right."""
    objects: list[dict[str, Any]] = []
    pos, failures = 0, 0
    while failures < MAX_DECODE_ATTEMPTS:
        start = text.find("{", pos)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            failures += 1
            pos = start + 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        pos = end
    return objects


def number_of(value: Any) -> Optional[float]:
    """A JSON number, or a string that holds exactly one number; anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer too large for a float
            return math.inf
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return float(value)
    return None


def answer_object(text: Any, decoder: json.JSONDecoder = _DECODER) -> Optional[dict[str, Any]]:
    """The last top-level JSON object with a ``choice`` key, the one that decides (contract §5)."""
    if not isinstance(text, str):
        return None
    text = strip_reasoning(text)
    if "```" in text:
        text = _FENCE.sub("", text)
    if len(text) > MAX_ANSWER_CHARS:
        return None
    for obj in reversed(top_level_objects(text, decoder)):
        if "choice" in obj:
            return obj
    return None


def what_scores(text: Any) -> Any:
    """A reply cut to what its score reads: a short one as it is; a long one (past
    ``MAX_ANSWER_CHARS``) as the answer it gives, ``{"choice": ...}``, or ``""`` when it gives none.
    ``parse_choice`` reads both alike, so an eval can hold this instead of megabytes until it scores
    the run."""
    if not isinstance(text, str) or len(text) <= MAX_ANSWER_CHARS:
        return text
    obj = answer_object(text)
    return "" if obj is None else json.dumps({"choice": obj["choice"]})


def parse_choice(text: Any) -> Optional[float]:
    """The ``choice`` of the last top-level JSON object that has one, as a float; None if none.

    Never raises: whatever a model sends is either a number or a rule break.
    """
    obj = answer_object(text)
    return None if obj is None else number_of(obj["choice"])


# The kinds of rule break the report tells apart (``rule_break_kind``), in the order it lists them.
NO_JSON, NOT_A_NUMBER, OUT_OF_RANGE = "no JSON object", "not a number", "out of range"
CUT_OFF, NO_ANSWER = "cut off at token limit", "no answer or error"
RULE_BREAK_KINDS = (NO_JSON, NOT_A_NUMBER, OUT_OF_RANGE, CUT_OFF, NO_ANSWER)


def rule_break_kind(reply: Any, lo: float, hi: float, finish_reason: Optional[str] = None) -> Optional[str]:
    """Why a reply breaks the rules of a game whose valid actions are [lo, hi]; None if it does not.

    The same reading as the eval's (``parse_choice``): a reply the endpoint cut off at its token
    limit (``finish_reason`` "length") that still holds a valid choice is no rule break; one that
    does not is "cut off at token limit" whatever else is wrong with it. No reply at all (the call
    failed, or an empty text) is "no answer or error"; no object with ``choice`` (or an answer over
    ``MAX_ANSWER_CHARS``) is "no JSON object"; a boolean, non-numeric, NaN or infinite choice is
    "not a number"; a finite number outside [lo, hi] is "out of range", and so is an integer too
    long for a float or for Python to read (it is a number, however large).
    """
    if not isinstance(reply, str) or not reply.strip():
        return NO_ANSWER
    obj = answer_object(reply)
    choice = None if obj is None else number_of(obj["choice"])
    if choice is not None and math.isfinite(choice) and lo <= choice <= hi:
        return None
    if finish_reason == "length":
        return CUT_OFF
    if obj is None:
        if _LONG_DIGITS.search(reply) and answer_object(reply, _LENIENT) is not None:
            return OUT_OF_RANGE  # a well-formed answer whose integer is too long to read
        return NO_JSON
    huge_int = isinstance(obj["choice"], int) and not isinstance(obj["choice"], bool)
    if choice is None or math.isnan(choice) or (math.isinf(choice) and not huge_int):
        return NOT_A_NUMBER
    return OUT_OF_RANGE
