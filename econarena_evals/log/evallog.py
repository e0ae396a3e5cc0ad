"""Reading evals JSONL logs back: the run spec, the EconArena events and the final report.

Never raises on a bad file: what could not be read is reported in ``EvalLog.problems``. The lines
come through the one bounded reader (``jsonl.iter_rows``); what each event holds is checked here
before anything uses it, so a hand-edited log never crashes a tool.

Figures are derived, never trusted: every finished session's metrics, and the final report's, are
computed again from the run events by the scorer (``derive_figures``). A logged figure that differs
is named in ``EvalLog.forged`` (and ``problems``) and replaced by the derived one, so no tool that
reads a log through here shows or carries a figure the runs do not give.
"""
from __future__ import annotations

import json
from array import array
from collections.abc import Mapping as AbcMapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence

from ..core.outcome import MAX_NUMBER, RunOutcome, action_number, game_number
from ..core.sessions import unique_names
from ..fns.identity import from_spec, label, masked
from ..games import get as get_game
from ..games import outcome_from_event
from ..integration.log_file import being_written
from ..score.metrics import METRICS, rescore_sessions
from .format import (
    BATCH_EVENT,
    BATCH_ID,
    FORMAT_KEY,
    LOG_FORMAT,
    PLAN_EVENT,
    PLAYERS_EVENT,
    RESUMED_FROM,
    RUN_EVENT,
    SEAT_TAG,
    SESSION_EVENT,
    STOP_EVENT,
    final_report,
    metric_fields,
    split_metric_key,
)
from .inspect_log import CONTRADICTION_EVENT, is_inspect_log, iter_inspect_rows
from .jsonl import NAMED_PROBLEMS, NOT_AN_EVALS_LOG, Reading, iter_rows
from .verifiers_log import is_verifiers_log, iter_verifiers_rows


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
    # seat tag's player -> its seat calls' token counts (``USAGE_FIELDS``), from the sampling events
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    # the part of ``usage`` a resumed run kept from the log it resumed from (sent and paid by that run)
    kept_usage: dict[str, dict[str, int]] = field(default_factory=dict)
    # the part of ``calls`` a resumed run kept from the log it resumed from (answered by that run)
    kept_calls: int = 0
    plan: Optional[dict[str, Any]] = None  # the econarena_plan event: what the plan line estimated
    resumed_from: Optional[str] = None  # the log this run resumed from (its plan event says), if any
    stop: Optional[dict[str, Any]] = None  # the econarena_stop event: why the run stopped early
    # batch mode: the batches the run sent or re-attached to (paid for, even with no answer in the log yet)
    batches: list[str] = field(default_factory=list)
    # the log's format as its players event states it (``format.LOG_FORMAT``); 1 for a log that states none
    format: int = 1
    run_ids: list[str] = field(default_factory=list)
    mixed: Optional[str] = None  # why the log holds more than one run (then none of it is used)
    # why none of the log could be read as what it is (a format this version does not read, a worker
    # that died reading it): then it holds nothing but its path and the problem, and --strict fails
    unread: Optional[str] = None
    garbled: bool = False  # its first line is no JSON (``jsonl.Reading.garbled``): skipped, and --strict fails
    size: int = 0  # bytes read
    # where each seat call tagged with its (session, run, seat) starts in the file, in the file's order
    # (``call_at``): the transcripts read those lines again, one by one, instead of the whole log
    call_keys: array = field(default_factory=lambda: array("q"))
    call_offsets: array = field(default_factory=lambda: array("q"))
    untagged_calls: int = 0  # sampling events without the seat tag (a log from before it)
    # what a tool worked out of this log where it read it (``report.prepare``: the report's per-log work,
    # done in the worker process that read the log); not part of the log's content
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def call_at(self, wanted: Iterable[tuple[int, int, int]]) -> dict[tuple[int, int, int], int]:
        """The offset of the first seat call tagged with each of ``wanted`` (session, run, seat) that has one."""
        want = {_seat_key_number(*seat_key): seat_key for seat_key in wanted if _seat_key_number(*seat_key) is not None}
        out: dict[tuple[int, int, int], int] = {}
        for key, offset in zip(self.call_keys, self.call_offsets):
            seat_key = want.get(key)
            if seat_key is not None and seat_key not in out:
                out[seat_key] = offset
        return out
    # logged figures that are not what the runs score to (hand-edited, forged): named, never used
    forged: list[str] = field(default_factory=list)
    # what the log claims that its own calls contradict (an inspect log's model): named, the calls' word used
    contradicted: list[str] = field(default_factory=list)

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


@dataclass
class HeldCalls:
    """The data of the seat calls of a log's first ``sessions`` sessions by index (None: of every session),
    kept by ``read_log`` as it decodes them: the calls a report's transcripts show (``transcripts.read_calls``),
    which then need not be read and decoded from the file a second time. Bounded as those transcripts are: a
    session's calls are let go as soon as ``sessions`` lower sessions have calls (it cannot be among the first)."""

    sessions: Optional[int]
    # session -> (session, run, seat) -> the first call tagged with it (``EvalLog.call_at``'s)
    by_session: dict[int, dict[tuple[int, int, int], dict[str, Any]]] = field(default_factory=dict)
    top: int = -1  # the highest session held: a call of a higher one, once ``sessions`` are held, is not kept

    def add(self, seat_key: tuple[int, int, int], data: dict[str, Any]) -> None:
        held = self.by_session.get(seat_key[0])
        if held is None:
            if self.sessions is not None and len(self.by_session) >= self.sessions:
                if seat_key[0] > self.top:
                    return
                self.by_session.pop(self.top, None)
            held = self.by_session[seat_key[0]] = {}
            self.top = max(self.by_session)
        held.setdefault(seat_key, data)

    def get(self, seat_key: tuple[int, int, int]) -> Optional[dict[str, Any]]:
        return self.by_session.get(seat_key[0], {}).get(seat_key)


def rescore_events(run_events: Iterable[Mapping[str, Any]], players: Sequence[str],
                   sessions: Iterable[int] = ()) -> tuple[dict[int, Any], dict[str, Any]]:
    """Per-session metrics (``metrics.rescore_sessions``) and the final report they make, as the
    eval recorded them, from a log's ``econarena_run`` events alone."""
    per_session = rescore_sessions(run_events, players, sessions)
    return per_session, final_report(list(per_session.values()), players)


def _seat_key_number(session: Any, run: Any, seat: Any) -> Optional[int]:
    """(session, run, seat) as one number, for ``EvalLog.call_keys``; None if any is out of its range."""
    if not (_index(session, high=2**30) and _index(run, high=2**15) and _index(seat, high=2**15)):
        return None
    return (session << 32) | (run << 16) | seat
# Two figures are the same when they differ by float noise at most (the eval rounds to 12 decimals).
SAME_FIGURE = 1e-9


def _same_figure(logged: Any, derived: Any) -> bool:
    if derived is None or logged is None:
        return derived is None and logged is None
    return _is_num(logged) and abs(float(logged) - float(derived)) <= SAME_FIGURE


def _figure_text(x: Any) -> str:
    return "null" if x is None else f"{x:.6g}" if _is_num(x) else repr(x)


NOT_RESCORABLE = "its runs are not all in the log: its figures cannot be derived from them"


def derive_figures(log: EvalLog, reading: Reading,
                   outcome_of: Callable[[Mapping[str, Any]], RunOutcome] = outcome_from_event) -> None:
    """Replace every logged figure by what the scorer derives from the run events: each finished
    session's metrics (``metrics.rescore_sessions``) and the final report's means over them. A
    logged figure that differs is named (``log.forged``); a session said to be finished whose runs
    are not all in the log cannot be checked, so it counts as errored, and says why. A second
    session event for one session is named and left out."""
    players = log.players
    sessions: list[dict[str, Any]] = []
    seen: set[int] = set()
    for event in log.sessions:
        if event["session"] in seen:
            reading.note(f"session {event['session']}: a second econarena_session event, left out")
            continue
        seen.add(event["session"])
        sessions.append(dict(event))
    per_session = rescore_sessions(log.runs, players, sessions=[s["session"] for s in sessions],
                                   outcome_of=outcome_of)
    results: list[Optional[dict[str, Any]]] = []
    for event in sessions:
        logged = {k: v for k, v in event.items() if _metric_field(str(k))}
        for key in logged:
            del event[key]
        if event.get("errored"):
            event.update(metric_fields({}, players))
            results.append(None)
            continue
        derived = per_session.get(event["session"])
        if derived is None:
            log.forged.append(f"session {event['session']}: the log says it finished, but {NOT_RESCORABLE}; "
                              "counted as errored")
            event.update(metric_fields({}, players), errored=True, error=f"not re-scorable: {NOT_RESCORABLE}")
            results.append(None)
            continue
        fields = metric_fields(derived, players)
        wrong = [k for k in dict.fromkeys(list(fields) + list(logged)) if not _same_figure(logged.get(k), fields.get(k))]
        if wrong:
            log.forged.append(f"session {event['session']}: logged " + ", ".join(
                f"{k} {_figure_text(logged.get(k))}" for k in wrong[:3]) + (", ..." if len(wrong) > 3 else "")
                + " are not what its runs score (" + ", ".join(f"{k} {_figure_text(fields.get(k))}" for k in wrong[:3])
                + "): the derived figures are used")
        event.update(fields)
        results.append(derived)
    log.sessions = sessions
    if log.final_report is not None:
        report = dict(log.final_report)
        derived_report = final_report(results, players)
        counts = ("sessions", "errored_sessions")
        logged = {k: v for k, v in report.items() if _metric_field(str(k)) or k in counts}
        wrong = [k for k in dict.fromkeys(list(derived_report) + list(logged))
                 if not _same_figure(logged.get(k), derived_report.get(k))]
        if wrong:
            log.forged.append("the logged means " + ", ".join(f"{k} {_figure_text(logged.get(k))}" for k in wrong[:3])
                              + (", ..." if len(wrong) > 3 else "") + " are not what its sessions score ("
                              + ", ".join(f"{k} {_figure_text(derived_report.get(k))}" for k in wrong[:3])
                              + "): the derived means are used")
        # in the eval's order: the means and counts first, then what oaieval added (token usage)
        log.final_report = {**derived_report, **{k: v for k, v in report.items() if k not in logged}}


def _is_num(x: Any) -> bool:
    kind = type(x)
    return kind is float or kind is int or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _number(x: Any) -> bool:
    """A game's number as the eval writes one: the writer's bound (``core.outcome``)."""
    return game_number(x)


def _index(x: Any, low: int = 0, high: int = 10**6) -> bool:
    if type(x) is int:  # what a log holds: decided without the isinstance tests (millions of calls a report)
        return low <= x <= high
    return isinstance(x, int) and not isinstance(x, bool) and low <= x <= high


def _metric_field(key: str) -> bool:
    return split_metric_key(key)[0] in METRICS


_NONE = type(None)
_TEXT = (str, _NONE)
# What oaieval writes in the spec, and the eval in its players event, as far as the tools read them.
SPEC_SHAPE = {"eval_name": str, "run_id": str, "created_at": str, "completion_fns": [str],
              "run_config": {"command": _TEXT, "seed": (int, _NONE), "max_samples": (int, _NONE),
                             "completion_fns": [str],
                             "eval_spec": {"args": (dict, _NONE), "registry_path": _TEXT, "key": _TEXT}}}
PLAYER_SHAPE = {"name": str, "cli_name": _TEXT, "opponent": (bool, _NONE), "class": _TEXT, "model": _TEXT,
                "completion_args": (dict, _NONE), "condition_args": (dict, _NONE), "base_url": _TEXT,
                "endpoint_label": _TEXT}


def shape_problem(x: Any, shape: Any, where: str = "") -> Optional[str]:
    """The first field of ``x`` not of ``shape`` (a type or types, ``[type]`` a list of them, or a
    dict of the fields that matter; a field left out is not checked), or None."""
    if isinstance(shape, dict):
        if not isinstance(x, dict):
            return f"{where or 'it'} is not an object"
        for key, sub in shape.items():
            if key in x and (why := shape_problem(x[key], sub, f"{where}.{key}" if where else key)):
                return why
        return None
    if isinstance(shape, list):
        bad = not isinstance(x, list) or any(shape_problem(v, shape[0]) for v in x)
        return f"{where} is not a list of {shape[0].__name__}" if bad else None
    types = shape if isinstance(shape, tuple) else (shape,)
    if not isinstance(x, types) or (isinstance(x, bool) and bool not in types):
        return f"{where} is not {' or '.join('null' if t is _NONE else t.__name__ for t in types)}"
    return None


def run_event_problem(data: dict[str, Any]) -> Optional[str]:
    """Why an ``econarena_run`` event cannot be used (a hand-edited field), or None."""
    return _run_event_check(data)[0]


_INF = float("inf")


def _game_number(x: Any) -> bool:
    """``_number``, decided for a float (what an outcome holds) without its calls."""
    return -MAX_NUMBER <= x <= MAX_NUMBER if type(x) is float else _number(x)


def _within_bound(values: Iterable[Any]) -> bool:
    """``_number`` of every number (int or float, not bool) among ``values`` (a list among them is no
    number): the same test, made without a call per number (a run event holds hundreds). NaN fails
    both comparisons; so does infinity."""
    for x in values:
        kind = type(x)
        if kind is float or kind is int:
            if not -MAX_NUMBER <= x <= MAX_NUMBER:
                return False
        elif kind is not bool and isinstance(x, (int, float)) and not _number(x):
            return False
    return True


def _run_event_check(data: dict[str, Any]) -> tuple[Optional[str], Optional[RunOutcome]]:
    """``run_event_problem``'s answer, and for a usable event its outcome (``outcome_from_event``)."""
    if not (_index(data.get("session")) and _index(data.get("run")) and _index(data.get("runs"), 1)):
        return "session, run and runs must be whole numbers", None
    seats = data.get("seats")
    if not isinstance(seats, list) or not seats or not all(isinstance(seat, dict) for seat in seats):
        return "seats must be a list of objects", None
    for i, seat in enumerate(seats, start=1):
        action = seat.get("action")
        # a float action is a number when finite (NaN fails both comparisons): action_number's answer, without its call
        if seat.get("seat") != i or not isinstance(seat.get("player"), str) or not isinstance(seat.get("valid"), bool) \
                or not ((-_INF < action < _INF) if type(action) is float else
                        (action_number(action) or (action is None and not seat["valid"]))):
            return f"seat {i}: seat, player, valid or action is not what the eval writes", None
    # the numbers of the event's fields and of its lists' items (one level down, as the eval writes them)
    if not _within_bound(data.values()) or not all(_within_bound(v) for v in data.values() if isinstance(v, list)):
        return f"a number that is not finite or past {MAX_NUMBER:g}", None
    try:  # the game's own reading of the event: what the report and the re-score need of it
        outcome = outcome_from_event(data)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError, ZeroDivisionError) as exc:
        return f"{type(exc).__name__}: {exc}", None
    if not outcome.scale > 0 or not all(_game_number(s.payoff) and _game_number(s.ne_action) for s in outcome.seats):
        return "its range or a payoff is not a positive finite number", None
    low, high = get_game(outcome.game).action_range(data)
    if any(s.valid and s.action is not None and not low <= s.action <= high for s in outcome.seats):
        return f"a valid action outside the game's range [{low:g}, {high:g}]", None
    return None, outcome


def _disagreeing_sessions(runs: list[dict[str, Any]]) -> dict[int, str]:
    """Sessions whose run events disagree on what every run of one session shares (its number of
    runs, its game, who sits where): no eval writes that, so such a session is not re-scored."""
    first: dict[int, dict[str, Any]] = {}
    out: dict[int, str] = {}
    for event in runs:
        one = first.setdefault(event["session"], event)
        seats = [s["player"] for s in event["seats"]]
        if (event["runs"], event["game"], seats) != (one["runs"], one["game"], [s["player"] for s in one["seats"]]):
            out[event["session"]] = "its run events disagree on runs, game or seats"
    return out


SESSION_SHAPE = {"cell": _TEXT, "player": _TEXT, "cut_off": (int, _NONE), "errored": (bool, _NONE),
                 "error": _TEXT}


def session_event_problem(data: dict[str, Any]) -> Optional[str]:
    """Why an ``econarena_session`` event cannot be used, or None."""
    if not _index(data.get("session")):
        return "session must be a whole number"
    why = shape_problem(data, SESSION_SHAPE)
    if why or not _index(data.get("cut_off") or 0):
        return why or "cut_off is not a count"
    bad = [k for k, v in data.items() if _metric_field(str(k)) and not (v is None or _number(v))]
    return f"metric(s) {', '.join(map(str, bad[:3]))} not numbers" if bad else None


# What a seat call's usage counts, under evals' flat keys (``fns.usage``), as the report names them.
# ``calls`` counts the seat calls, ``reported`` those whose usage came with the reply, ``reasoning``
# those that said how many reasoning tokens (a part of the completion tokens) they used.
USAGE_KEYS = (("prompt_tokens", "prompt_tokens"), ("completion_tokens", "completion_tokens"),
              ("reasoning_tokens", "completion_tokens_details_reasoning_tokens"))
# ``batch_*``: the same of the calls a batch answered (batch mode), priced at the batch discount
BATCH_USAGE = ("batch_calls", "batch_prompt_tokens", "batch_completion_tokens")
USAGE_FIELDS = ("calls", "reported", "reasoning") + tuple(name for name, _ in USAGE_KEYS) + BATCH_USAGE
PLAN_SHAPE = {"calls": int, "sessions": int, "prompt_tokens": int, "completion_reserved": int, "kept": int,
              "counted": str, RESUMED_FROM: str}


def call_counts(data: Mapping[str, Any]) -> Optional[tuple[str, tuple[int, ...]]]:
    """One seat call's player (its seat tag's) and what it adds to each of ``USAGE_FIELDS``, in that
    order; None for a seat tag that names no player. A usage field that is no count adds nothing."""
    tag = data[SEAT_TAG]
    if not (type(tag) is dict or isinstance(tag, AbcMapping)) or not isinstance(tag.get("player"), str):
        return None
    by_batch = 1 if data.get(BATCH_ID) else 0
    reported = data.get("usage")
    # no usage at all (a built-in player's call) is the common case: decided before the slower Mapping test
    if reported is None or not (type(reported) is dict or isinstance(reported, AbcMapping)) \
            or not _index(reported.get("prompt_tokens"), high=10**9):
        return tag["player"], (1, 0, 0, 0, 0, 0, by_batch, 0, 0)
    prompt, completion, reasoning = (reported[key] if _index(reported.get(key), high=10**9) else 0
                                     for _, key in USAGE_KEYS)
    said = 1 if _index(reported.get(USAGE_KEYS[2][1]), high=10**9) else 0
    return tag["player"], (1, 1, said, prompt, completion, reasoning, by_batch, prompt * by_batch,
                           completion * by_batch)


def summed_counts(calls: Sequence[tuple[int, ...]]) -> dict[str, int]:
    """``USAGE_FIELDS``' counts of ``calls`` (``call_counts``' tuples), summed a field at a time: a log's
    thousands of calls added once, where it has been read through, rather than field by field as read."""
    return dict(zip(USAGE_FIELDS, map(sum, zip(*calls)))) if calls else dict.fromkeys(USAGE_FIELDS, 0)


RUNNING = "running"  # status_of: a live run still writes the log


def status_of(log: EvalLog) -> str:
    """``stopped: <cause>`` when the run recorded why it stopped early (quota, interrupted, ...);
    ``running`` when it has neither and a live run still writes it; ``partial`` when it ended
    without a final report and without saying why (a kill); else ``errored`` if any session
    errored (every one, or some), ``finished`` if none did."""
    if log.stop is not None:
        return f"stopped: {log.stop.get('stopped') or 'early'}"
    if log.final_report is None:
        return RUNNING if being_written(log.path) else "partial"
    return "errored" if any(s.get("errored") for s in log.sessions) or not log.sessions else "finished"


def read_log(path: Path, held: Optional[HeldCalls] = None) -> EvalLog:
    """Read a whole log; the EvalLog is complete when returned (``players`` is cached from it).
    A bad line or event is named in ``problems`` and skipped; a log holding more than one run id
    keeps nothing but its spec and the problem (``mixed``). ``held``: where the calls of its first
    sessions are kept as they are read (an evals JSONL log's: its seat calls have offsets in the file)."""
    log = EvalLog(path=Path(path))
    reading = Reading()
    copied: set[Any] = set()  # sessions and (session, run)s a resume copied from the log it resumed from
    # each player's seat calls' counts (``call_counts``), and those of the calls a resume kept, summed at the end
    usage: dict[str, list[tuple[int, ...]]] = {}
    kept_usage: dict[str, list[tuple[int, ...]]] = {}
    # (session, run) -> its other seat calls (player and counts, or None for a tag naming no player)
    by_run: dict[tuple[Any, Any], list[Optional[tuple[str, tuple[int, ...]]]]] = {}
    bad_spec = None
    # an inspect_ai log of the inspect front end, a verifiers run of the verifiers one, read as the
    # same rows (``inspect_log``, ``verifiers_log``)
    rows = (iter_inspect_rows(path, reading) if is_inspect_log(path) else
            iter_verifiers_rows(path, reading) if is_verifiers_log(path) else None)
    if rows is None:
        rows = iter_rows(path, reading)
    else:  # another front end's rows: their calls are read again as ``transcripts`` reads them, never held
        held = None
    outcomes: dict[int, RunOutcome] = {}  # id of each run event kept -> its outcome, for the re-score
    for lineno, row in rows:
        kind, data = row.get("type"), row.get("data")
        # a seat call first: most of a log's lines (a line with a spec or a final report is that, whatever its type)
        if kind == "sampling" and isinstance(data, dict) and "spec" not in row and "final_report" not in row:
            log.calls += SEAT_TAG in data
            if SEAT_TAG in data:
                counted = call_counts(data)
                if counted is not None:
                    usage.setdefault(counted[0], []).append(counted[1])
                tag = data[SEAT_TAG]
                if data.get(RESUMED_FROM):
                    if counted is not None:
                        kept_usage.setdefault(counted[0], []).append(counted[1])
                    log.kept_calls += 1
                elif isinstance(tag, dict) and isinstance(tag.get("session"), int) and isinstance(tag.get("run"), int):
                    # kept if its session or its run was copied: known once the whole log is read
                    by_run.setdefault((tag["session"], tag["run"]), []).append(counted)
                key = (_seat_key_number(tag.get("session"), tag.get("run"), tag.get("seat"))
                       if isinstance(tag, dict) else None)
                if key is not None:
                    log.call_keys.append(key)
                    log.call_offsets.append(reading.offset)
                    if held is not None:
                        held.add((tag["session"], tag["run"], tag["seat"]), data)
            else:
                log.untagged_calls += 1
            if data.get("requested_model"):
                seen = log.answered_as.setdefault(str(data["requested_model"]), {})
                answered = str(data.get("model"))
                seen[answered] = seen.get(answered, 0) + 1
        elif "spec" in row:
            why = shape_problem(row["spec"], SPEC_SHAPE)
            if why:
                bad_spec = f"line {lineno}: the run spec's {why}: {NOT_AN_EVALS_LOG} as oaieval writes one"
                reading.note(bad_spec)
            else:
                log.spec = row["spec"]
        elif "final_report" in row:
            report = row["final_report"] if isinstance(row["final_report"], dict) else None
            bad = [k for k, v in (report or {}).items() if _metric_field(str(k)) and not (v is None or _number(v))]
            for k in bad:
                reading.note(f"line {lineno}: final report's {k} is not a number, skipped")
            log.final_report = None if report is None else {k: v for k, v in report.items() if k not in bad}
        elif kind == RUN_EVENT and isinstance(data, dict):
            why, outcome = _run_event_check(data)
            if why:
                reading.note(f"line {lineno}: {kind} event skipped: {why}")
            else:
                log.runs.append(data)
                outcomes[id(data)] = outcome
                if data.get(RESUMED_FROM):  # copied from the log resumed from: its seat calls too
                    copied.add((data["session"], data["run"]))
        elif kind == SESSION_EVENT and isinstance(data, dict):
            why = session_event_problem(data)
            if why:
                reading.note(f"line {lineno}: {kind} event skipped: {why}")
            else:
                log.sessions.append(data)
                if data.get(RESUMED_FROM):  # copied from the log resumed from: its seat calls too
                    copied.add(data["session"])
        elif kind == PLAYERS_EVENT and isinstance(data, dict):
            entries = data.get("players") if isinstance(data.get("players"), list) else []
            settings = []
            for entry in entries:
                why = shape_problem(entry, PLAYER_SHAPE)
                if why or "name" not in entry:
                    reading.note(f"line {lineno}: a player's settings skipped: {why or 'no name'}")
                else:
                    settings.append(masked(entry))
            log.settings = settings
            stated = data.get(FORMAT_KEY, 1)
            if isinstance(stated, int) and not isinstance(stated, bool) and 1 <= stated <= LOG_FORMAT:
                log.format = stated
            elif log.unread is None:  # never read as another version: its events may mean something else
                log.unread = (f"line {lineno}: the log states format {json.dumps(stated)[:20]}, which this version "
                              f"does not read (it reads 1 to {LOG_FORMAT}): none of it is used; "
                              "if a newer econarena-evals wrote it, upgrade")
        elif kind == STOP_EVENT and isinstance(data, dict):
            log.stop = data
        elif kind == CONTRADICTION_EVENT and isinstance(data, dict):
            log.contradicted.append(str(data.get("why"))[:500])
        elif kind == PLAN_EVENT and isinstance(data, dict):
            why = shape_problem(data, PLAN_SHAPE)
            if why:
                reading.note(f"line {lineno}: {kind} event skipped: {why}")
            else:
                log.plan = data
                log.resumed_from = data.get(RESUMED_FROM)
        elif kind == BATCH_EVENT and isinstance(data, dict):
            if data.get("status") in ("submitted", "attached") and isinstance(data.get("batch_id"), str):
                if data["batch_id"] not in log.batches:
                    log.batches.append(data["batch_id"])
    for (session, run), calls in by_run.items():
        if session in copied or (session, run) in copied:
            log.kept_calls += len(calls)
            for counted in calls:
                if counted is not None:
                    kept_usage.setdefault(counted[0], []).append(counted[1])
    log.usage = {player: summed_counts(calls) for player, calls in usage.items()}
    log.kept_usage = {player: summed_counts(calls) for player, calls in kept_usage.items()}
    for session, why in sorted(_disagreeing_sessions(log.runs).items()):
        reading.note(f"session {session}: {why}: its run events skipped")
        log.runs = [r for r in log.runs if r["session"] != session]
    if not reading.mixed and not reading.refused and not log.unread:
        derive_figures(log, reading, lambda event: outcomes[id(event)])
    outcomes.clear()
    reading.finish()
    log.problems = reading.problems + log.forged[:NAMED_PROBLEMS] + (
        [f"{len(log.forged) - NAMED_PROBLEMS} more logged figure(s) not what the runs score"]
        if len(log.forged) > NAMED_PROBLEMS else [])
    log.run_ids = list(reading.run_ids)
    log.size = reading.size
    log.garbled = reading.garbled
    if reading.mixed or log.unread:
        log.mixed = reading.mixed
        log.problems.append(reading.mixed or log.unread)  # type: ignore[arg-type]
        log.runs, log.sessions, log.final_report, log.settings, log.answered_as = [], [], None, [], {}
        log.calls, log.stop, log.usage, log.plan, log.batches = 0, None, {}, None, []
        log.kept_usage, log.kept_calls, log.forged, log.resumed_from, log.contradicted = {}, 0, [], None, []
        log.call_keys, log.call_offsets = array("q"), array("q")
        if held is not None:
            held.by_session.clear()
        return log
    if reading.refused:
        return log
    if not log.spec and not bad_spec:
        log.problems.append(f"no run spec line: {NOT_AN_EVALS_LOG}")
    if log.final_report is None:
        log.problems.append("no final report: the run did not finish")
    return log


def find_logs(paths: Iterable[Path]) -> Iterator[Path]:
    for p in paths:
        p = Path(p)
        # evals' logs, the inspect front end's (.eval, and .json that open as inspect's), verifiers' traces.jsonl
        if p.is_dir():
            yield from sorted([*p.rglob("*.jsonl"), *p.rglob("*.eval"),
                               *(j for j in p.rglob("*.json") if is_inspect_log(j))])
        else:
            yield p
