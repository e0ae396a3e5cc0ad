"""A default recorder for tests that call the built-in players directly (they record a sampling event)."""
from __future__ import annotations

import pytest
from evals.base import RunSpec
from evals.record import DummyRecorder


@pytest.fixture
def recorder():
    """A default recorder: the built-in players record a sampling event for every answer."""
    rec = DummyRecorder(RunSpec(completion_fns=["x"], eval_name="e.s", base_eval="e", split="s",
                                run_config={}, created_by=""), log=False)
    with rec.as_default_recorder("e.s.0"):
        yield rec
