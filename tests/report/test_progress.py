"""Progress of long reads: a line at most every few seconds, with the stage, logs and bytes done."""
from __future__ import annotations

import io

from econarena_evals.report.read_progress import Progress


def test_a_line_when_one_is_due_naming_the_stage_files_and_bytes():
    now = [0.0]
    out = io.StringIO()
    progress = Progress("econarena-report", stream=out, every_s=5, clock=lambda: now[0])
    progress.start("reading logs", 750, "logs", 1_700_000_000)
    for i in range(750):
        now[0] += 0.0625  # 46.9 s in all (a step a binary fraction: no rounding)
        progress.step(2_266_666)
    lines = out.getvalue().splitlines()
    assert len(lines) == 9  # one every 5 s: none silent for longer
    assert lines[0] == "econarena-report: reading logs: 80/750 logs, 181/1,700 MB, 5 s"
    progress.start("fitting each row's diagnostics", 10, "rows")
    now[0] += 6
    progress.step()
    assert out.getvalue().splitlines()[-1] == "econarena-report: fitting each row's diagnostics: 1/10 rows, 53 s"


def test_a_short_read_prints_nothing():
    out = io.StringIO()
    progress = Progress("econarena-summary", stream=out, every_s=5, clock=lambda: 1.0)
    progress.start("reading logs", 3, "logs", 3000)
    for _ in range(3):
        progress.step(1000)
    assert out.getvalue() == ""
