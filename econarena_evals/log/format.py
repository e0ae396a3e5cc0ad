"""The log format, spelled once: the EconArena event names, the seat tag and the metric keys.

An EconArena log is evals' JSONL (one spec line, one row per event, one final report). Next to
evals' own ``sampling`` events the eval records the events named here; docs/contract.md §8 says what
each holds. Every module that writes or reads them takes the names from here.
"""
from __future__ import annotations

from typing import Optional, Sequence

RUN_EVENT = "econarena_run"  # one scored run of one session
SESSION_EVENT = "econarena_session"  # a session's metrics per player, or why it errored
PLAYERS_EVENT = "econarena_players"  # who played, with what args, against which endpoint
PLAYERS_SAMPLE_ID = "econarena.players"  # the players event belongs to no session
STOP_EVENT = "econarena_stop"  # the run stopped early (quota, signal, full disk) and why
UNRECORDABLE_EVENT = "econarena_unrecordable"  # an event that could not be written as it was
EVENTS = (RUN_EVENT, SESSION_EVENT, PLAYERS_EVENT, STOP_EVENT, UNRECORDABLE_EVENT)

# data[SEAT_TAG] of a sampling event: {cell, session, run, seat, player}, the seat call it answered
SEAT_TAG = "econarena"


def metric_key(metric: str, player: str, players: Sequence[str]) -> str:
    """The key of one player's metric in a session event and the final report: the metric's own
    name for the first player (a self-play log reads like any eval's), ``metric/player`` for the rest."""
    return metric if not players or player == players[0] else f"{metric}/{player}"


def split_metric_key(key: str) -> tuple[str, Optional[str]]:
    """Inverse of ``metric_key``: (metric, player), the player None for the first player's key."""
    metric, sep, player = key.partition("/")
    return (metric, player) if sep else (metric, None)
