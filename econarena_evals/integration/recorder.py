"""The one wrapper on evals' recorder, and the only module that knows the recorder's insides.

Everything the plugin changes in how evals records and writes a log happens here, once per
recorder, in one order (``wrap``):

* **events** (``record_event``, the call every event goes through, whoever records it: the eval, or
  evals' own completion fns through ``record_sampling``): the data passes through the run's steps,
  in the order given (tag the seat call, flatten usage, make it storable);
* **writes** (``_flush_events_internal``, evals' private write of a flush, and
  ``record_final_report``): a flush that cannot serialise its events together writes them one by
  one, with a placeholder row for any that still fails (``unstorable``, the log module's), and a
  write that fails with an ``OSError`` (a full disk) calls ``on_write_error`` once and writes
  nothing more to that log;
* **durability** (``durable``): what was recorded is written to the OS before the call returns;
* **lines** (``write_events_quickly``): evals' ``jsondumps`` without its deep copy of each event.

``samples_in_order`` is evals' private order of the samples (it shuffles, then applies
``--max_samples``), asked here so no other module names it. The layering test fails on any of
evals' private names outside ``integration/``.
"""
from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any, Callable, Optional, Sequence

Step = Callable[[str, Any], Any]  # (event type, data) -> the data to record
Unstorable = Callable[[Any, BaseException], Any]  # (an evals Event, why) -> the Event written in its place

_flush_lock = threading.Lock()
_failed_lock = threading.Lock()


@dataclasses.dataclass
class Wrapped:
    """What ``wrap`` keeps on a recorder: its steps, and whether a write to its log failed."""

    steps: list[Step]
    failed: bool = False
    sessions_written: int = 0  # events of ``session_event`` type on disk


def wrap(recorder: Any, steps: Sequence[Step], unstorable: Unstorable, on_write_error: Callable[[OSError], None],
         session_event: str) -> Wrapped:
    """Wrap ``recorder`` once (a second call only replaces the steps): every event through
    ``steps`` in order; every write guarded as the module says."""
    wrapped: Optional[Wrapped] = getattr(recorder, "_econarena_wrapped", None)
    if wrapped is not None:
        wrapped.steps[:] = list(steps)
        return wrapped
    wrapped = recorder._econarena_wrapped = Wrapped(list(steps))
    record = recorder.record_event

    def record_event(type, data=None, sample_id=None):  # noqa: A002 - evals' own signature
        for step in wrapped.steps:
            data = step(type, data)
        return record(type, data, sample_id=sample_id)

    recorder.record_event = record_event
    flush = getattr(recorder, "_flush_events_internal", None)
    if flush is None:  # not a LocalRecorder (a DummyRecorder, a test's): only the events are edited
        return wrapped
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
                flush([unstorable(event, exc)])
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
        wrapped.sessions_written += sum(getattr(e, "type", None) == session_event for e in events)

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


def write_failed(recorder: Any) -> bool:
    """True once a write of ``recorder`` to its log failed."""
    wrapped = getattr(recorder, "_econarena_wrapped", None)
    return bool(wrapped is not None and wrapped.failed)


def sessions_written(recorder: Any) -> int:
    wrapped = getattr(recorder, "_econarena_wrapped", None)
    return wrapped.sessions_written if wrapped is not None else 0


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
