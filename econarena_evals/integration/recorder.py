"""The one wrapper on evals' recorder, and the only module that knows the recorder's insides.

Everything the plugin changes in how evals records and writes a log happens here, once per
recorder, in one order (``wrap``):

* **events** (``record_event``, the call every event goes through, whoever records it: the eval, or
  a completion fn through ``record_sampling``), in this order: a ``sampling`` event recorded while
  a seat call runs (``calls.seat_call.current``) gets that call's tag and notes its finish reason
  and tokens on it (``SeatCall.noted``); a ``usage`` is stored flat (``fns.usage``); the data is
  made storable (``storable_event``); and a seat call's event is on disk before the fn returns
  (``durable``), so a ``kill -9`` loses only the calls in flight. The steps are this module's own,
  fixed: the run hands ``wrap`` only the log format's names (``LogNames``), and nothing here calls
  back up into the run;
* **writes** (``_flush_events_internal``, evals' private write of a flush, and
  ``record_final_report``): a flush that cannot serialise its events together writes them one by
  one, with a placeholder row for any that still fails (``unrecordable``), and a write that fails
  with an ``OSError`` (a full disk) calls ``on_write_error`` once and writes nothing more to that
  log; evals' ``Logged N rows ...`` line, once per flush and so once per seat call, is off unless
  ``oaieval --debug``;
* **durability** (``durable``): what was recorded is written to the OS before the call returns;
* **lines** (``write_events_quickly``): evals' ``jsondumps`` without its deep copy of each event.

What the log stores of each event (``storable_event``): anything a server sent, in a form that can
be written. evals' ``LocalRecorder`` serialises every event of a flush, then writes them together.
One string that UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``: valid JSON, which a
buggy server or a model can send) made that flush raise, and every event of it was lost, the
finished sessions' included. And a reply of 10 MB was stored whole, 50 times a session. So:

* a string UTF-8 cannot encode is stored escaped, ``\\ud800`` as those six characters
  (``str.encode("utf-8", "backslashreplace")``); a ``sampling`` event whose reply was escaped says
  so with ``"sampled_escaped": true``;
* a ``sampling`` event stores at most ``MAX_STORED_CHARS`` characters of each reply; when one was
  cut, ``"sampled_full_chars"`` lists the full length of every reply;
* a flush that still cannot serialise an event writes the others, and in that event's place a
  row of the ``unrecordable`` type naming its type and what failed.

The score never sees any of this: it reads the reply the completion fn returned, whole. The form
is documented in docs/contract.md §8.

``samples_in_order`` is evals' private order of the samples (it shuffles, then applies
``--max_samples``), asked here so no other module names it. The layering test fails on any of
evals' private names outside ``integration/``.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
import time
import urllib.parse
from typing import Any, Callable, Optional, Sequence

from ..calls.seat_call import current as current_seat_call
from ..fns.usage import usage_fields

_flush_lock = threading.Lock()
_failed_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class LogNames:
    """The log format's names the wrapper writes (``log.format``'s, handed down by the run)."""

    seat_tag: str  # the key of a sampling event's seat tag
    unrecordable: str  # the type of the row written in place of an event that cannot be serialised
    session: str  # the type of a session's event (counted as written: ``sessions_written``)


@dataclasses.dataclass
class Wrapped:
    """What ``wrap`` keeps on a recorder: the names it writes, and whether a write to its log failed."""

    names: LogNames
    failed: bool = False
    sessions_written: int = 0  # events of ``names.session`` type on disk
    # seat calls whose sampling event was recorded (and made durable at once): counted here, as each is
    # recorded, so a stop that comes before a wave of calls is handed back counts its answered calls
    seat_calls: int = 0
    # of those, the ones whose event gave completion tokens, and their sum: what the plan's "the first
    # replies used ..." line reads as soon as they are in
    usage: tuple[int, int] = (0, 0)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def wrap(recorder: Any, names: LogNames, on_write_error: Callable[[OSError], None]) -> Wrapped:
    """Wrap ``recorder`` once (a second call only replaces the names): every event through the
    steps in order; every write guarded as the module says."""
    _quiet_flush_lines()
    wrapped: Optional[Wrapped] = getattr(recorder, "_econarena_wrapped", None)
    if wrapped is not None:
        wrapped.names = names
        return wrapped
    wrapped = recorder._econarena_wrapped = Wrapped(names)
    record = recorder.record_event

    def record_event(type, data=None, sample_id=None):  # noqa: A002 - evals' own signature
        seat_call = current_seat_call() if type == "sampling" else None
        tag = wrapped.names.seat_tag
        if seat_call is not None and isinstance(data, dict) and tag not in data:
            seat_call.noted(data)  # what the fn recorded: the run reads it off the call
            if seat_call.recorded == 1:  # a call's first event: one answered seat call
                with wrapped.lock:
                    wrapped.seat_calls += 1
                    if seat_call.completion_tokens is not None:
                        wrapped.usage = (wrapped.usage[0] + 1, wrapped.usage[1] + seat_call.completion_tokens)
            data = {**data, tag: seat_call.tag}
        else:
            seat_call = None  # not this call's own event: nothing to make durable at once
        if type == "sampling" and isinstance(data, dict) and data.get("usage") is not None:
            data = {**data, **usage_fields(data["usage"])}
        out = record(type, storable_event(type, data), sample_id=sample_id)
        if seat_call is not None:  # on disk before the fn returns: a kill -9 loses only the calls in flight
            durable(recorder)
        return out

    recorder.record_event = record_event
    flush = getattr(recorder, "_flush_events_internal", None)
    if flush is None:  # not a LocalRecorder (a DummyRecorder, a test's): only the events are edited
        return wrapped
    flush = local_flush(recorder) or flush
    final = recorder.record_final_report

    def failed(exc: OSError) -> None:
        with _failed_lock:
            if wrapped.failed:
                return
            wrapped.failed = True
        on_write_error(exc)

    def each_on_failure(events: Sequence[Any]) -> None:
        try:
            return flush(events)
        except (TypeError, ValueError):  # UnicodeEncodeError is a ValueError; an OSError is not ours here
            pass
        done_before = getattr(recorder, "_flushes_done", 0)
        for event in events:
            try:
                flush([event])
            except (TypeError, ValueError) as exc:
                flush([unrecordable(event, exc, wrapped.names)])
        if hasattr(recorder, "_flushes_done"):  # evals counts one flush per flush started
            recorder._flushes_done = done_before + 1

    def _flush_events_internal(events: Any) -> None:
        if wrapped.failed:
            return  # a line after a torn one would only be harder to read back
        try:
            each_on_failure(events)
        except OSError as exc:
            failed(exc)
            return
        wrapped.sessions_written += sum(getattr(e, "type", None) == wrapped.names.session for e in events)

    def record_final_report(report: Any) -> None:
        if wrapped.failed:
            return
        try:
            final(report)
        except OSError as exc:
            failed(exc)

    recorder._flush_events_internal = _flush_events_internal
    recorder.record_final_report = record_final_report
    return wrapped


def local_flush(recorder: Any) -> Optional[Callable[[Sequence[Any]], None]]:
    """evals' ``LocalRecorder._flush_events_internal`` for a log on the local disk, with the file opened
    by ``open`` instead of ``blobfile.BlobFile``; None for any other recorder or path (a bucket's: evals'
    own). The same lines, bytes, log line and counters as evals': only the open is cheaper. The log is
    flushed once per answered seat call (``durable``), and ``BlobFile`` spent about 30 µs of CPU
    guessing what the path is on each open, against 9 µs for the whole open, write and close here."""
    import evals.record  # here, not at the top: the report tools use this module without evals

    path = getattr(recorder, "event_file_path", None)
    if type(recorder) is not evals.record.LocalRecorder or not isinstance(path, str) or not path:
        return None
    parsed = urllib.parse.urlparse(path)
    if parsed.scheme or parsed.netloc:  # blobfile's own test of a local path; a bucket is its to write
        return None
    logger = evals.record.logger

    def _flush_events_internal(events_to_write: Sequence[Any]) -> None:
        start = time.time()
        try:
            lines = [evals.record.jsondumps(event, exclude_keys=recorder.hidden_data_fields) + "\n"
                     for event in events_to_write]
        except TypeError as e:
            logger.error(f"Failed to serialize events: {events_to_write}")
            raise e
        with open(path, "ab") as f:
            f.write(b"".join([line.encode("utf-8") for line in lines]))
        if logger.isEnabledFor(logging.INFO):
            logger.info(f"Logged {len(lines)} rows of events to {path}: "
                        f"insert_time={evals.record.t(time.time() - start)}")
        recorder._last_flush_time = time.time()
        recorder._flushes_done += 1

    return _flush_events_internal


# ---- what the log stores of each event ----

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


def unrecordable(event: Any, exc: BaseException, names: LogNames) -> Any:
    """The row written in place of an event that cannot be serialised: its type, seat tag if it
    had one, and why (so a reader can name the gap; the sampling check reports the missing call)."""
    data = event.data if isinstance(event.data, dict) else {}
    note: dict[str, Any] = {"event_type": escape(str(event.type)),
                            "error": escape(f"{type(exc).__name__}: {exc}")[:500]}
    tag = data.get(names.seat_tag)
    if isinstance(tag, dict) and all(isinstance(v, (str, int)) for v in tag.values()):
        note[names.seat_tag] = storable(tag)[0]
    return dataclasses.replace(event, type=names.unrecordable, data=note)


def _quiet_flush_lines() -> None:
    """evals' recorder logs ``Logged N rows of events to <log>`` at INFO once per flush, and this
    eval flushes once per answered seat call: off, unless ``oaieval --debug`` put the root logger at
    DEBUG. Decided when a run wraps its recorder (oaieval has set its logging by then), as a level,
    so no line is made and filtered per flush; evals' other runs keep their lines."""
    debugging = logging.getLogger().getEffectiveLevel() <= logging.DEBUG
    logging.getLogger("evals.record").setLevel(logging.NOTSET if debugging else logging.WARNING)


def write_failed(recorder: Any) -> bool:
    """True once a write of ``recorder`` to its log failed."""
    wrapped = getattr(recorder, "_econarena_wrapped", None)
    return bool(wrapped is not None and wrapped.failed)


def sessions_written(recorder: Any) -> int:
    wrapped = getattr(recorder, "_econarena_wrapped", None)
    return wrapped.sessions_written if wrapped is not None else 0


def seat_calls_recorded(recorder: Any) -> tuple[int, tuple[int, int]]:
    """Seat calls answered in this run whose sampling event ``recorder`` recorded (``Wrapped.seat_calls``),
    and (those that said their completion tokens, the tokens) (``Wrapped.usage``)."""
    wrapped = getattr(recorder, "_econarena_wrapped", None)
    if wrapped is None:
        return 0, (0, 0)
    with wrapped.lock:
        return wrapped.seat_calls, wrapped.usage


def durable(recorder: Any = None) -> None:
    """Write every event recorded so far to the log file before returning.

    ``flush_events`` takes the buffered events under the recorder's lock but writes them after
    releasing it, so a second thread's flush can return while the first is still writing the
    events both wanted. Our own lock makes every flush we start wait for the one before it; the
    recorder's automatic flush writes under its lock, so it too is finished when we take it.
    Written to the OS, not fsynced: that survives ``kill -9`` and an OOM kill; only a lost machine
    can take back what the OS holds (bench/durability.py measures both).
    """
    import evals.record  # here, not at the top: the report tools use this module without evals

    recorder = recorder or evals.record.default_recorder()
    if recorder is None:
        return
    with _flush_lock:
        recorder.flush_events()


def log_path_of(recorder: Any) -> Optional[str]:
    """Where ``recorder`` writes its log, if it writes one."""
    path = getattr(recorder, "event_file_path", None) or getattr(recorder, "local_fallback_path", None)
    return str(path) if path else None


def samples_in_order(samples: Sequence[Any]) -> list[Any]:
    """The samples evals will hand out, in its order: shuffled by its seed, then cut to ``--max_samples``."""
    import evals.eval

    return [sample for sample, _ in evals.eval._index_samples(samples)]


def write_events_quickly() -> None:
    """Make evals' ``LocalRecorder`` serialise each event without ``dataclasses.asdict``.

    evals writes an event as ``jsondumps(event)``: json asks its encoder's ``default`` for the
    ``Event``, which deep-copies it with ``asdict`` and walks the copy in Python, about 40 µs for
    a seat call's event, paid on the per-call flush of every answered call. Written directly from
    the event's fields with the same encoder settings (``ensure_ascii=False``, evals' separators)
    the line is the same, byte for byte, in 5 µs; anything the plain encoder cannot write (a
    dataclass, a ``Path``, a pydantic model in the data: evals' ``default`` knows those) and any
    call other than one event without hidden fields goes to evals' own ``jsondumps``, unchanged.
    """
    import evals.record  # here, not at the top: this module is read without evals by the log tools

    if getattr(evals.record.jsondumps, "_econarena_quick", False):
        return
    evals_jsondumps, event_type = evals.record.jsondumps, evals.record.Event
    fields = tuple(f.name for f in dataclasses.fields(event_type))
    encode = json.JSONEncoder(ensure_ascii=False).encode

    def jsondumps(o: Any, ensure_ascii: bool = False, **kwargs: Any) -> str:
        one_event = type(o) is event_type and not ensure_ascii and set(kwargs) <= {"exclude_keys"}
        if one_event and not kwargs.get("exclude_keys"):
            try:
                return encode({name: getattr(o, name) for name in fields})
            except (TypeError, ValueError):  # not json's own types, or a cycle: evals says what to do
                pass
        return evals_jsondumps(o, ensure_ascii=ensure_ascii, **kwargs)

    jsondumps._econarena_quick = True  # type: ignore[attr-defined]
    evals.record.jsondumps = jsondumps
