"""The one wrapper on evals' recorder: every change the plugin makes to an event before evals
stores it is a step run here.

``record_event(type, data=None, sample_id=None)`` is the call every event goes through, whoever
records it (the eval, evals' own completion fns through ``record_sampling``). Wrapping it once per
recorder, with a list of steps, keeps the order of the changes in one place and stops two wrappers
from each deciding on their own whether they already ran. ``write_events_quickly`` makes evals
write the same lines without its deep copy of every event.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

Step = Callable[[str, Any], Any]  # (event type, data) -> the data to record


def edit_events(recorder: Any, step: Step) -> None:
    """Make ``recorder`` pass the data of every event it records through ``step`` first.

    A step added later runs earlier (as an outer wrapper would): each step sees the data as the
    steps added after it left it. Adding a step twice adds it once.
    """
    steps = getattr(recorder, "_econarena_steps", None)
    if steps is None:
        steps = recorder._econarena_steps = []
        record = recorder.record_event

        def record_event(type, data=None, sample_id=None):  # noqa: A002 - evals' own signature
            for each in steps:
                data = each(type, data)
            return record(type, data, sample_id=sample_id)

        recorder.record_event = record_event
    if step not in steps:
        steps.insert(0, step)


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
