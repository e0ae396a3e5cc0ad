"""The exact search behind ``core.schedule.NO_DESIGN``, run again: bench/schedule_designs.py proves
that each shape it names has no schedule with every pair within one of the mean, and finds one for
shapes the schedule reaches (so an encoding that refused everything would fail here)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from econarena_evals.core.schedule import NO_DESIGN, Schedule, pair_band, table_count

ROOT = Path(__file__).resolve().parents[2]
# shapes with a design: the two the schedule's short tries reach, and a small one
WITH_DESIGN = [(11, 6, 9), (12, 6, 9), (8, 4, 4)]

pytestmark = pytest.mark.e2e


def _searched(shapes):
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "schedule_designs.py"), "--json",
                          *(",".join(map(str, s)) for s in shapes)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return {tuple(r["shape"]): r["design"] for r in map(json.loads, out.stdout.splitlines())}


def test_no_design_is_proved_and_designs_are_found_where_they_exist():
    found = _searched(sorted(NO_DESIGN) + WITH_DESIGN)
    assert set(found) == NO_DESIGN | set(WITH_DESIGN)
    assert all(found[shape] is None for shape in NO_DESIGN)
    for shape in WITH_DESIGN:
        players, seats, per_player = shape
        tables = found[shape]
        assert len(tables) == table_count(*shape)
        drawn = Schedule(players, seats, tuple(tuple(t) for t in tables))
        counts = drawn.seat_counts()
        assert max(counts) - min(counts) <= 1 and all(len(set(t)) == seats for t in tables)
        low, high = pair_band(*shape)
        meetings = drawn.pair_counts().values()
        assert low <= min(meetings) and max(meetings) <= high, shape
