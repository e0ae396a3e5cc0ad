"""Logs for the report's tests, made in this process from the fixture logs of tests/fixtures/old_logs/9b70382:
a player with its completion args and endpoint (an ``econarena_players`` event), seat tags and
usage on its seat calls, and sessions a resume copied. No process, no server."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from econarena_evals.games import read_prompt
from econarena_evals.log.format import PLAN_EVENT, PLAYERS_EVENT, RESUMED_FROM, RUN_EVENT, SEAT_TAG, SESSION_EVENT

OLDLOGS = Path(__file__).resolve().parent / "fixtures" / "old_logs" / "9b70382"
RANDOM_BEAUTY_L = OLDLOGS / "econarena_random.econarena.beauty_L.jsonl"
ENDPOINT = "127.0.0.1:8765"
SCHEMA = {"type": "json_object", "schema": {"type": "object", "properties": {"choice": {"type": "number"}},
                                            "required": ["choice"]}}


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def chat_player(path: Path, told: Mapping[str, Any], src: Path = RANDOM_BEAUTY_L, usage: bool = False,
                copied: Iterable[int] = (), reused: Iterable[tuple[int, int, int]] = (),
                plan: Optional[dict[str, Any]] = None) -> Path:
    """``src`` as played by a chat fn at ``ENDPOINT`` that was told ``told`` (its completion args):
    the seats keep their player's name (econarena/random), its label gains the endpoint. ``usage``:
    every seat call tagged with its seat and reporting 100 prompt and 10 completion tokens;
    ``copied``: sessions a resume copied from an earlier log, ``reused``: (session, run, seat) of seat
    calls it reused one by one (marked on the call itself); ``plan``: the plan event."""
    rows = rows_of(src)
    run_id = rows[0]["spec"]["run_id"]
    entry = {"name": "econarena/random", "cli_name": "econarena/chat:m", "opponent": False,
             "class": "econarena_evals.fns.chat:ChatCompletionFn", "model": "m", "completion_args": dict(told),
             "condition_args": dict(told), "base_url": f"http://{ENDPOINT}/v1", "endpoint_label": ENDPOINT}
    out = [rows[0], {"run_id": run_id, "event_id": 10_000, "sample_id": "econarena.players", "type": PLAYERS_EVENT,
                     "data": {"players": [entry], "format": 2}}]
    if plan is not None:
        out.append({"run_id": run_id, "event_id": 10_001, "sample_id": PLAN_EVENT, "type": PLAN_EVENT, "data": plan})
    # a session by its c̄, which each prompt states (this old log filed some calls under another sample id)
    session_of = {r["data"]["c_bar"]: r["data"]["session"] for r in rows if r.get("type") == RUN_EVENT}
    copied, reused = set(copied), set(reused)
    for r in rows[1:]:
        r = json.loads(json.dumps(r))
        data = r.get("data")
        if usage and r.get("type") == "sampling":
            facts = read_prompt(data["prompt"])
            data[SEAT_TAG] = {"cell": "beauty_L", "session": session_of[facts.upper], "run": facts.run - 1,
                              "seat": facts.seat, "player": "econarena/random"}
            data["usage"] = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
            if (data[SEAT_TAG]["session"], data[SEAT_TAG]["run"], data[SEAT_TAG]["seat"]) in reused:
                data[RESUMED_FROM] = "/earlier/log.jsonl"
        if r.get("type") in (RUN_EVENT, SESSION_EVENT) and data.get("session") in copied:
            data[RESUMED_FROM] = "/earlier/log.jsonl"
        out.append(r)
    return write(path, out)
