"""Reading evals JSONL logs back: the run spec, the EconArena events and the final report.

Never raises on a bad file: what could not be read is reported in ``EvalLog.problems``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from .fnsettings import from_spec, label, masked
from .metrics import rescore_events
from .sessions import unique_names


@dataclass
class EvalLog:
    path: Path
    spec: dict[str, Any] = field(default_factory=dict)
    final_report: Optional[dict[str, Any]] = None
    runs: list[dict[str, Any]] = field(default_factory=list)  # econarena_run event data
    sessions: list[dict[str, Any]] = field(default_factory=list)  # econarena_session event data
    problems: list[str] = field(default_factory=list)
    settings: list[dict[str, Any]] = field(default_factory=list)  # the econarena_players event's entries
    # requested model -> {model a response named instead: calls}, from sampling events
    answered_as: dict[str, dict[str, int]] = field(default_factory=dict)
    calls: int = 0  # answered seat calls: sampling events with the seat tag
    stop: Optional[dict[str, Any]] = None  # the econarena_stop event: why the run stopped early

    @property
    def eval_name(self) -> str:
        return str(self.spec.get("eval_name", ""))

    @property
    def cell(self) -> str:
        parts = self.eval_name.split(".")
        return parts[1] if len(parts) > 1 else ""

    @property
    def game(self) -> Optional[str]:
        """The game's name: from the run events, else from the eval's args (a log with no finished run)."""
        if self.runs:
            return str(self.runs[0]["game"])
        args = ((self.spec.get("run_config") or {}).get("eval_spec") or {}).get("args") or {}
        return str(args["game"]) if "game" in args else None

    @cached_property
    def players(self) -> list[str]:
        """The command line's players as the eval named them in its events (the first is the
        evaluated one), then any other player that sat in a logged run (a cell's opponents)."""
        if self.settings:
            names = [str(e["name"]) for e in self.settings if not e.get("opponent")]
        else:  # a log from before the econarena_players event: the eval used the command line's names
            names = unique_names([str(p) for p in self.spec.get("completion_fns", [])])
        seated = (s["player"] for r in self.runs for s in r.get("seats", []))
        return list(dict.fromkeys(names + list(seated)))

    @cached_property
    def player_settings(self) -> list[dict[str, Any]]:
        """Every player's settings: the econarena_players event, else what the command line tells."""
        return self.settings or from_spec(self.spec)

    @cached_property
    def labels(self) -> dict[str, str]:
        """Row label of each player (its name, and its endpoint when not the API's default)."""
        cli = self.players[: len([e for e in self.player_settings if not e.get("opponent")])]
        out = {name: name for name in self.players}
        entries = [e for e in self.player_settings if not e.get("opponent")]
        for name, entry in zip(cli, entries):
            out[name] = label(entry)
        for entry in self.player_settings:
            if entry.get("opponent") and entry.get("name") in out:
                out[entry["name"]] = label(entry)
        return out

    @property
    def is_econarena(self) -> bool:
        return self.eval_name.startswith("econarena.") or bool(self.runs)

    def rescore(self) -> tuple[dict[int, Any], dict[str, Any]]:
        """Per-session metrics and the final report, recomputed from the run events alone."""
        return rescore_events(self.runs, self.players, sessions=[int(s["session"]) for s in self.sessions])


def read_log(path: Path) -> EvalLog:
    """Read a whole log; the EvalLog is complete when returned (``players`` is cached from it)."""
    log = EvalLog(path=Path(path))
    try:
        # errors="replace": a log torn inside a multi-byte character (a kill mid-write of model
        # text), or a stray binary file, is a bad line to report, never a crash of the whole folder
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        log.problems.append(f"cannot open: {exc}")
        return log
    with handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                log.problems.append(f"line {lineno}: not JSON (truncated log?)")
                continue
            if not isinstance(row, dict):
                continue
            if "spec" in row:
                log.spec = row["spec"] if isinstance(row["spec"], dict) else {}
            elif "final_report" in row:
                log.final_report = row["final_report"] if isinstance(row["final_report"], dict) else None
            elif row.get("type") in ("econarena_run", "econarena_session") and isinstance(row.get("data"), dict):
                (log.runs if row["type"] == "econarena_run" else log.sessions).append(row["data"])
            elif row.get("type") == "econarena_players" and isinstance(row.get("data"), dict):
                log.settings = [masked(e) for e in row["data"].get("players") or []
                                if isinstance(e, dict) and "name" in e]
            elif row.get("type") == "econarena_stop" and isinstance(row.get("data"), dict):
                log.stop = row["data"]
            elif row.get("type") == "sampling" and isinstance(row.get("data"), dict):
                log.calls += "econarena" in row["data"]
                if row["data"].get("requested_model"):
                    seen = log.answered_as.setdefault(str(row["data"]["requested_model"]), {})
                    answered = str(row["data"].get("model"))
                    seen[answered] = seen.get(answered, 0) + 1
    if not log.spec:
        log.problems.append("no run spec line: not an evals log")
    if log.final_report is None:
        log.problems.append("no final report: the run did not finish")
    return log


def find_logs(paths: Iterable[Path]) -> Iterator[Path]:
    for p in paths:
        p = Path(p)
        if p.is_dir():
            yield from sorted(p.rglob("*.jsonl"))
        else:
            yield p
