"""What the log stores of each event: anything a server sent, in a form that can be written.

evals' ``LocalRecorder`` serialises every event of a flush, then writes them together. One string
that UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``: valid JSON, which a buggy server
or a model can send) made that flush raise, and every event of it was lost, the finished sessions'
included. And a reply of 10 MB was stored whole, 50 times a session. So, for every event recorded:

* a string UTF-8 cannot encode is stored escaped, ``\\ud800`` as those six characters
  (``str.encode("utf-8", "backslashreplace")``); a ``sampling`` event whose reply was escaped says
  so with ``"sampled_escaped": true``;
* a ``sampling`` event stores at most ``MAX_STORED_CHARS`` characters of each reply; when one was
  cut, ``"sampled_full_chars"`` lists the full length of every reply;
* a flush that still cannot serialise an event writes the others, and in that event's place a
  ``econarena_unrecordable`` row naming its type and what failed.

The score never sees any of this: it reads the reply the completion fn returned, whole. The
recorder is wrapped to do this in ``integration.recorder`` (``storable_event`` is a step of it,
``unrecordable`` its placeholder).
The form is documented in docs/contract.md §8.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any

from .format import SEAT_TAG, UNRECORDABLE_EVENT

MAX_STORED_CHARS = 65_536
_UNENCODABLE = re.compile("[\ud800-\udfff]")  # the only code points a str holds that UTF-8 cannot encode


def escape(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def storable(value: Any) -> tuple[Any, bool]:
    """``value`` with every unencodable string (dict keys too) escaped; True if any was. Never
    changes ``value`` itself: what the caller holds stays as it was."""
    if isinstance(value, str):
        return (escape(value), True) if _UNENCODABLE.search(value) else (value, False)
    if isinstance(value, dict):
        changed, out = False, {}
        for key, item in value.items():
            key, key_changed = storable(key)
            out[key], item_changed = storable(item)
            changed = changed or key_changed or item_changed
        return (out, True) if changed else (value, False)
    if isinstance(value, (list, tuple)):
        items = [storable(item) for item in value]
        if any(changed for _, changed in items):
            return [item for item, _ in items], True
        return value, False
    return value, False


def stored_replies(sampled: Any) -> tuple[Any, list[int] | None, bool]:
    """What a sampling event stores of its replies: (stored, full lengths if any was cut, escaped)."""
    one = isinstance(sampled, str)
    replies = [sampled] if one else sampled
    if not isinstance(replies, (list, tuple)):
        stored, escaped = storable(replies)
        return stored, None, escaped
    full = [len(r) if isinstance(r, str) else None for r in replies]
    cut = any(n is not None and n > MAX_STORED_CHARS for n in full)
    kept = [r[:MAX_STORED_CHARS] if isinstance(r, str) else r for r in replies]
    kept, escaped = storable(kept)
    return (kept[0] if one else kept), (full if cut else None), escaped


# The types ``json`` writes as they are: an exact one of these is known storable without asking json.
_JSON_LEAVES = frozenset({int, float, bool, type(None)})
_LONGEST_INT_BITS = 10_000  # ~3,000 digits: below Python's 4,300-digit limit on writing an int as text


def _known_storable(value: Any) -> bool:
    """True when ``value`` is only JSON's own types (exactly: no subclass) and text UTF-8 can
    encode, so json writes it and its UTF-8 encoding cannot fail; False when not sure. One pass
    over the event with ``str.isascii`` (C, a few bytes a cycle) instead of serialising it whole:
    about 1.5 µs for a seat call's event against 5.5 µs for ``json.dumps``. Leaves are looked at
    in their container's loop: a call per string was most of the pass."""
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str or not (key.isascii() or _UNENCODABLE.search(key) is None):
                return False
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return _known_storable_leaf(value)
    for item in items:
        kind = type(item)
        if kind is str:
            if not (item.isascii() or _UNENCODABLE.search(item) is None):
                return False
        elif kind is float or kind is bool or item is None:
            continue
        elif kind is int:
            if item.bit_length() >= _LONGEST_INT_BITS:
                return False
        elif kind is dict or kind is list or kind is tuple:
            if not _known_storable(item):
                return False
        else:
            return False
    return True


def _known_storable_leaf(value: Any) -> bool:
    kind = type(value)
    if kind is str:
        return value.isascii() or _UNENCODABLE.search(value) is None
    return kind in _JSON_LEAVES and (kind is not int or value.bit_length() < _LONGEST_INT_BITS)


def _plainly_storable(type: str, data: Any) -> bool:  # noqa: A002 - evals' own name
    """True when ``data`` needs nothing done: the usual case, told without walking it in Python
    object by object through ``storable``. Anything the quick look is not sure of is asked of
    ``json`` (an object it does not know, a subclass of str or float): the answer, and so the
    stored event, is the same either way."""
    import json  # here, not at the top: kept out of the module's import block

    if type == "sampling" and isinstance(data, dict) and "sampled" in data:
        sampled = data["sampled"]
        if not isinstance(sampled, (str, list, tuple)) or any(
                isinstance(r, str) and len(r) > MAX_STORED_CHARS for r in ([sampled] if isinstance(sampled, str) else sampled)):
            return False
    if _known_storable(data):
        return True
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError: an unencodable string
        return False
    return True


def storable_event(type: str, data: Any) -> Any:  # noqa: A002 - evals' own name
    """The data an event of ``type`` is stored with (a new object when anything changed)."""
    if _plainly_storable(type, data):
        return data
    if type == "sampling" and isinstance(data, dict) and "sampled" in data:
        sampled, full, escaped = stored_replies(data["sampled"])
        rest, _ = storable({k: v for k, v in data.items() if k != "sampled"})
        data = {**rest, "sampled": sampled}
        if full is not None:
            data["sampled_full_chars"] = full
        if escaped:
            data["sampled_escaped"] = True
        return data
    return storable(data)[0]


def unrecordable(event: Any, exc: BaseException) -> Any:
    """The row written in place of an event that cannot be serialised: its type, seat tag if it
    had one, and why (so a reader can name the gap; the sampling check reports the missing call)."""
    data = event.data if isinstance(event.data, dict) else {}
    note: dict[str, Any] = {"event_type": escape(str(event.type)),
                            "error": escape(f"{type(exc).__name__}: {exc}")[:500]}
    tag = data.get(SEAT_TAG)
    if isinstance(tag, dict) and all(isinstance(v, (str, int)) for v in tag.values()):
        note[SEAT_TAG] = storable(tag)[0]
    return dataclasses.replace(event, type=UNRECORDABLE_EVENT, data=note)
