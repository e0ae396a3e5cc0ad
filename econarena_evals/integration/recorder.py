"""The one wrapper on evals' recorder: every change the plugin makes to an event before evals
stores it is a step run here.

``record_event(type, data=None, sample_id=None)`` is the call every event goes through, whoever
records it (the eval, evals' own completion fns through ``record_sampling``). Wrapping it once per
recorder, with a list of steps, keeps the order of the changes in one place and stops two wrappers
from each deciding on their own whether they already ran.
"""
from __future__ import annotations

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
