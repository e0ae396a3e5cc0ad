"""Print the final reports of EconArena logs as one table: ``econarena-summary [LOG_OR_DIR ...]``.

With ``--latest`` only the newest log of each (player, cell) is shown, which is what the README's
main job wants after ``oaievalset`` has written its logs under /tmp/evallogs. A partial log (the run
stopped before its final report) is shown as ``<cell> (partial)``, re-scored from the sessions it
finished, and the command that resumes it is printed on stderr.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .logs import EvalLog, find_logs, read_log
from .metrics import METRICS, rescore_events
from .resume import hint


def _fmt(x: object) -> str:
    return f"{x:.3f}" if isinstance(x, float) else "-" if x is None else str(x)


def table(logs: list[EvalLog]) -> str:
    header = ["player", "cell"] + list(METRICS) + ["sessions", "errored"]
    rows = [header]
    for log in logs:
        report = log.final_report
        if report is None:  # partial: what its finished sessions re-score to; cut-off ones left out
            done = {int(s["session"]) for s in log.sessions if not s.get("errored")}
            report = rescore_events([r for r in log.runs if int(r["session"]) in done], log.players,
                                    sessions=[int(s["session"]) for s in log.sessions])[1]
        rows.append(
            [",".join(log.players), log.cell + ("" if log.final_report is not None else " (partial)")]
            + [_fmt(report.get(m)) for m in METRICS]
            + [_fmt(report.get("sessions")), _fmt(report.get("errored_sessions"))]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("/tmp/evallogs")])
    parser.add_argument("--latest", action="store_true", help="newest log per (player, cell) only")
    parser.add_argument("--since", type=float, default=None, metavar="EPOCH_SECONDS",
                        help="only logs written after this time (e.g. $(date +%%s) before the run)")
    opts = parser.parse_args(argv)
    logs = []
    for path in find_logs(opts.paths):
        if opts.since is not None and path.stat().st_mtime < opts.since:
            continue
        log = read_log(path)
        if not log.is_econarena:
            continue
        if log.spec and log.final_report is None:  # stopped early: shown, marked, with how to finish it
            done = sum(1 for s in log.sessions if not s.get("errored"))
            print(f"{path}: partial (no final report, {done} finished sessions). {hint(log.spec, str(path))}",
                  file=sys.stderr)
            logs.append(log)
            continue
        if log.problems:
            print(f"{path}: skipped: {'; '.join(log.problems)}", file=sys.stderr)
            continue
        logs.append(log)
    if opts.latest:
        newest: dict[tuple[str, str], EvalLog] = {}
        # a finished log beats a partial one (SPEC 9), then the newest wins
        for log in sorted(logs, key=lambda lg: (lg.final_report is not None, str(lg.spec.get("created_at", "")))):
            newest[(",".join(log.players), log.cell)] = log
        logs = list(newest.values())
    if not logs:
        print("no EconArena logs found in " + " ".join(map(str, opts.paths)), file=sys.stderr)
        return 1
    logs.sort(key=lambda lg: (",".join(lg.players), lg.cell))
    print(table(logs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
