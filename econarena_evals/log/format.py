"""The log format, spelled once: the EconArena event names, the seat tag and the metric keys.

An EconArena log is evals' JSONL (one spec line, one row per event, one final report). Next to
evals' own ``sampling`` events the eval records the events named here; docs/contract.md §8 says what
each holds. Every module that writes or reads them takes the names from here, and lays out the
metrics of a session event and of the final report with ``metric_fields`` / ``final_report``.
Reading a log's lines is ``jsonl``'s job; this module never touches a file.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Optional, Sequence

from ..score.metrics import METRICS, mean_metrics

# The log's format, stated in the players event (``{"players": [...], "format": LOG_FORMAT}``), so a
# reader knows what to expect instead of guessing from what is there. 1: every log written before it
# was stated (no "format"); such logs may hold sampling events without the seat tag and no players
# event, and are read by ``old_logs``. 2: every sampling event of a seat call carries the seat tag,
# and the players event comes first.
LOG_FORMAT = 2
FORMAT_KEY = "format"

RUN_EVENT = "econarena_run"  # one scored run of one session
SESSION_EVENT = "econarena_session"  # a session's metrics per player, or why it errored
PLAYERS_EVENT = "econarena_players"  # who played, with what args, against which endpoint
VERIFIERS_INFO_KEY = "econarena"  # a verifiers trace's info[...] the verifiers front end fills (log.verifiers_log)
PLAYERS_SAMPLE_ID = "econarena.players"  # the players event belongs to no session
STOP_EVENT = "econarena_stop"  # the run stopped early (quota, signal, full disk) and why
UNRECORDABLE_EVENT = "econarena_unrecordable"  # an event that could not be written as it was
PLAN_EVENT = "econarena_plan"  # what the run's plan line estimated before the first call
# a batch of seat calls uploaded, submitted, re-attached to or ended (batch mode), under this sample id
BATCH_EVENT = "econarena_batch"
EVENTS = (RUN_EVENT, SESSION_EVENT, PLAYERS_EVENT, STOP_EVENT, UNRECORDABLE_EVENT, PLAN_EVENT, BATCH_EVENT)
# data["resumed_from"] of an econarena_run, econarena_session or sampling event: the log a resumed run
# copied it from (kept, not played or sent again); a copied session's or run's seat calls are kept too
RESUMED_FROM = "resumed_from"
# data["batch_id"] of a sampling event: the batch that answered the seat call (batch mode only)
BATCH_ID = "batch_id"

# data[SEAT_TAG] of a sampling event: {cell, session, run, seat, player}, the seat call it answered
SEAT_TAG = "econarena"
# data["recorded_by"] of the sampling event the eval records itself for a completion fn that records none
EVAL_RECORDER = "econarena"


def batch_custom_id(sample_id: str, run: int, seat: int, body: Mapping[str, Any]) -> str:
    """The custom_id of a seat call's batch line: the call, and a hash of its request, so a resumed
    run only takes a line for the very request it answered."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]
    return f"{sample_id}/run{run}/seat{seat}/{digest}"


def metric_key(metric: str, player: str, players: Sequence[str]) -> str:
    """The key of one player's metric in a session event and the final report: the metric's own
    name for the first player (a self-play log reads like any eval's), ``metric/player`` for the rest."""
    return metric if not players or player == players[0] else f"{metric}/{player}"


def split_metric_key(key: str) -> tuple[str, Optional[str]]:
    """Inverse of ``metric_key``: (metric, player), the player None for the first player's key."""
    metric, sep, player = key.partition("/")
    return (metric, player) if sep else (metric, None)


def metric_fields(per_player: Mapping[str, Optional[Mapping[str, Any]]], players: Sequence[str]) -> dict[str, Any]:
    """Every player's metrics under their keys, players in order: the fields of a session event and
    of the final report. A player without figures (it sat nowhere, or the session errored) gets None."""
    return {metric_key(metric, player, players): (None if per_player.get(player) is None
                                                  else per_player[player][metric])  # type: ignore[index]
            for player in players for metric in METRICS}


def session_fields(cell: str, session: int, players: Sequence[str],
                   result: Optional[Mapping[str, Mapping[str, Any]]], cut_off: int, error: Optional[str]) -> dict[str, Any]:
    """An ``econarena_session`` event's fields, the same under every front end: ``players[0]`` is the
    evaluated player, ``cut_off`` its replies cut at the token limit, ``result`` None if the session errored."""
    return {"cell": cell, "session": session, "player": players[0], **metric_fields(result or {}, players),
            "cut_off": cut_off, "errored": error is not None, "error": error}


def player_metrics(data: Mapping[str, Any], players: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Inverse of ``metric_fields``: player -> metrics, for the players with figures (an ``eas``).
    Raises KeyError for a player with an ``eas`` but not every metric."""
    return {player: {metric: data[metric_key(metric, player, players)] for metric in METRICS}
            for player in players if data.get(metric_key("eas", player, players)) is not None}


def final_report(session_results: Sequence[Optional[Mapping[str, Mapping[str, float]]]],
                 players: Sequence[str]) -> dict[str, Any]:
    """The final report: each player's means over the finished sessions (``metrics.mean_metrics``;
    ``session_results[i]`` maps player -> metrics, None if the session errored), then the counts."""
    finished = [s for s in session_results if s is not None]
    return {**metric_fields(mean_metrics(finished, players), players),
            "sessions": len(finished), "errored_sessions": len(session_results) - len(finished)}
