"""A leaderboard of many models: how long ``econarena-summary`` and ``econarena-report`` take on 750
logs, against the time it takes to read every line of them once, and how much memory.

    python bench/report_scale.py [--models 50] [--data /tmp/econarena-scale] [--write-docs]

1. Plays four built-in players (``nash``, ``random``, ``level1``, ``human``) in every cell of
   ``econarena-full`` (dev split, 20 sessions each) with the real ``oaieval``, once, into
   ``DATA/base``.
2. Copies them to ``--models`` models × 15 cells (``DATA/logs-N``): model i is player i mod 4's logs
   with the evaluated player renamed ``model-NN`` (in the run spec, the players event, the seats,
   the session events and the seat calls' tags; the opponents of an opponent cell keep their
   names) and a new run id, so that every model is a row of the same 15 columns.
3. In one run, one after the other: the one-pass floor (every line of every log read and decoded
   with ``json.loads``, in this process), ``econarena-summary``, ``econarena-summary
   --leaderboard`` and ``econarena-report``, each timed (wall and CPU) with its peak memory (max
   RSS, from ``os.wait4``: the tool alone), and the size of ``report.html`` and ``report.json``.
4. Opens ``report.html`` in headless Chromium from ``file://`` (``--dump-dom``) and counts the
   models whose names its leaderboard shows, and the time that takes.

``--write-docs`` writes the figures into docs/benchmarks.md, between its two
``report-scale`` markers. Targets: summary within 2 times and report within 3 times the floor, each
under 1 GiB; report.html at most 15 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("nash", "random", "level1", "human")
PLACEHOLDER, RUN_PLACEHOLDER = "@@MODEL@@", "@@RUNID@@"
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- report-scale: begin -->", "<!-- report-scale: end -->"


def tool_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(PYTHONPATH=str(ROOT), EVALS_SHOW_EVAL_PROGRESS="")
    return env


def make_base(base: Path) -> list[Path]:
    """The real logs: every built-in player of PLAYERS in every cell of econarena-full (made once)."""
    bindir = Path(sys.executable).parent
    env = tool_env()
    evals = subprocess.run([str(bindir / "python"), "-m", "econarena_evals.run.evalset", "econarena-full"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    base.mkdir(parents=True, exist_ok=True)
    out = []
    for player in PLAYERS:
        for name in evals:
            log = base / f"{player}_{name}.jsonl"
            if not log.exists():
                print(f"playing econarena/{player} {name}", file=sys.stderr)
                tmp = log.with_suffix(".part")
                subprocess.run([str(bindir / "oaieval"), f"econarena/{player}", name, "--record_path", str(tmp)],
                               env=env, check=True, capture_output=True)
                tmp.rename(log)
            out.append(log)
    return out


def template(log: Path) -> bytes:
    """The log with its evaluated player's name and its run id replaced by placeholders."""
    lines = []
    old: Optional[str] = None
    for raw in log.read_text(encoding="utf-8").splitlines():
        row = json.loads(raw)
        if "spec" in row:
            spec = row["spec"]
            old = spec["completion_fns"][0]
            spec["completion_fns"][0] = spec["run_config"]["completion_fns"][0] = PLACEHOLDER
            spec["run_config"]["command"] = spec["run_config"]["command"].replace(f" {old} ", f" {PLACEHOLDER} ", 1)
            spec["run_id"] = RUN_PLACEHOLDER
        else:
            if "run_id" in row:
                row["run_id"] = RUN_PLACEHOLDER
            data = row.get("data")
            kind = row.get("type")
            if kind == "econarena_players":
                for entry in data["players"]:
                    if not entry.get("opponent"):
                        entry["name"] = entry["cli_name"] = PLACEHOLDER
            elif kind == "econarena_run":
                for seat in data["seats"]:
                    if seat["player"] == old:
                        seat["player"] = PLACEHOLDER
            elif kind == "econarena_session" and data.get("player") == old:
                data["player"] = PLACEHOLDER
            elif kind == "sampling" and isinstance(data.get("econarena"), dict) and data["econarena"]["player"] == old:
                data["econarena"]["player"] = PLACEHOLDER
                if data.get("model") == old:
                    data["model"] = PLACEHOLDER
        lines.append(json.dumps(row))
    return ("\n".join(lines) + "\n").encode("utf-8")


def make_copies(base_logs: list[Path], models: int, dest: Path) -> list[Path]:
    """``models`` models x the cells: model i is PLAYERS[i % 4] renamed, with a run id of its own per log."""
    if dest.exists() and len(list(dest.glob("*.jsonl"))) == models * len(base_logs) // len(PLAYERS):
        return sorted(dest.glob("*.jsonl"))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    by_player: dict[str, list[Path]] = {p: sorted(b for b in base_logs if b.name.startswith(p + "_"))
                                        for p in PLAYERS}
    out = []
    for p, logs in by_player.items():
        for log in logs:
            text = template(log)
            cell = log.name.split("_", 1)[1]
            for i in range(PLAYERS.index(p), models, len(PLAYERS)):
                name = f"model-{i + 1:02d}"
                run_id = f"{i + 1:02d}{zlib.crc32(cell.encode()):010d}SCALE"
                path = dest / f"{name}_{cell}"
                path.write_bytes(text.replace(PLACEHOLDER.encode(), name.encode())
                                 .replace(RUN_PLACEHOLDER.encode(), run_id.encode()))
                out.append(path)
    return sorted(out)
