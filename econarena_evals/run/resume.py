"""Durable sessions and resuming a stopped run.

A finished session is only worth keeping if it is on disk: evals' recorder buffers events and
writes them every 100 events and 10 s, so a ``kill -9`` loses finished sessions. ``durable()``
writes the buffer after each session.

``resume_from=PATH`` (or ``ECONARENA_RESUME=PATH``) reads an earlier log of the same condition,
copies each session that finished there into the new log and lets the eval play only the others.
What is done is decided from the old log alone (``plan``); the eval calls ``rerecord`` for a done
session instead of playing it. A session counts as done when its ``econarena_session`` event says
it did not error and all of its runs are in the log; anything else (cut off by a stop, errored)
goes on from its first unfinished run, and each seat call the log answered there is reused when
the new run would send the very same request (``reusable_reply``).

Every copied ``econarena_run`` and ``econarena_session`` event, and every reused ``sampling``
event, gets ``resumed_from``: the log it was copied from. The ``sampling`` events of copied runs are
copied unchanged, all under their original sample id.
"""
from __future__ import annotations

import atexit
import dataclasses
import json
import os
import shlex
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from ..core.redact import redact_command, redact_url
from ..games import read_prompt
from ..log.evallog import Reading, iter_rows
from ..log.filing import SEAT_TAG
from ..score.metrics import METRICS
from .conditions import condition_of, differences

RESUME_ENV = "ECONARENA_RESUME"
RESUME_DIR_ENV = "ECONARENA_RESUME_DIR"  # where a printed resume command puts its new log (default: beside the old)
MARK = "resumed_from"  # the field a copied econarena_run / econarena_session / reused sampling event carries
STOP_EVENT = "econarena_stop"  # why a run stopped early, under a sample id of its own (this name)

SessionResult = Optional[dict[str, dict[str, float]]]


class ResumeRefused(ValueError):
    """The log named by resume_from cannot be resumed by this run; raised before any call."""


# ---- durable sessions ----

_flush_lock = threading.Lock()


def durable(recorder: Any = None) -> None:
    """Write every event recorded so far to the log file before returning.

    ``flush_events`` takes the buffered events under the recorder's lock but writes them after
    releasing it, so a second thread's flush can return while the first is still writing the
    events both wanted. Our own lock makes every flush we start wait for the one before it; the
    recorder's automatic flush writes under its lock, so it too is finished when we take it.
    Written to the OS, not fsynced: that survives ``kill -9`` and an OOM kill; only a lost machine
    can take back what the OS holds (bench/durability.py measures both).
    """
    import evals.record  # here, not at the top: the report tools use this module without evals

    recorder = recorder or evals.record.default_recorder()
    if recorder is None:
        return
    with _flush_lock:
        recorder.flush_events()


# ---- reading the old log and deciding what is done ----

@dataclass
class DoneSession:
    index: int
    sample_id: str
    events: list[tuple[str, Any]]  # (type, data) in log order; run and session events marked
    result: SessionResult  # player -> metrics, from the econarena_session event


@dataclass
class PartSession:
    """A session the old log started but did not finish: the runs it finished, to keep."""

    index: int
    sample_id: str
    runs: dict[int, dict[str, Any]]  # run -> its econarena_run event (marked)
    events: list[tuple[str, Any]]  # those runs' run and sampling events, in log order
    # (run, seat) -> the sampling event of an answered seat call of another run, reused when the
    # resumed run would send the very same prompt (``reusable_reply``)
    calls: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)


@dataclass
class Plan:
    source: str  # the log resumed from (absolute)
    done: dict[int, DoneSession] = field(default_factory=dict)  # by session index
    replay: list[int] = field(default_factory=list)  # sessions the old log started but did not finish
    parts: dict[int, PartSession] = field(default_factory=dict)  # their finished runs, by session index
    torn_lines: int = 0

    @property
    def kept_runs(self) -> int:
        return sum(len(p.runs) for p in self.parts.values())

    @property
    def kept_calls(self) -> int:
        """Answered seat calls of unfinished runs that the log holds, reusable as they are."""
        return sum(len(p.calls) for p in self.parts.values())


def read_rows(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The run spec, the event rows in order, and how many lines were not JSON (a torn last line)."""
    spec: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    reading = Reading()
    for _, row in iter_rows(path, reading):
        if "spec" in row:
            spec = row["spec"] or {}
        elif "type" in row and row.get("sample_id") is not None:
            rows.append(row)
    if reading.mixed:
        raise ResumeRefused(f"resume_from={path} {reading.mixed}: resume from a log one run wrote")
    return spec, rows, reading.not_json


def spec_of(run_spec: Any) -> dict[str, Any]:
    """A RunSpec (with its EvalSpec inside) as the plain dict the log's first line holds."""
    if isinstance(run_spec, Mapping):
        return dict(run_spec)
    return json.loads(json.dumps(dataclasses.asdict(run_spec), default=str))


def result_of(data: Mapping[str, Any], players: Sequence[str]) -> SessionResult:
    """The session's metrics per player, as eval_sample returned them, from its session event."""
    result = {}
    for i, player in enumerate(players):
        key = (lambda m: m) if i == 0 else (lambda m, p=player: f"{m}/{p}")
        if data.get(key("eas")) is not None:
            result[player] = {m: data[key(m)] for m in METRICS}
    return result


def first_spec(path: Path) -> dict[str, Any]:
    for _, row in iter_rows(path):
        return row["spec"]  # iter_rows yields a spec line first, or nothing
    return {}


def plan(path: str, spec_now: Mapping[str, Any], runs: int, players: Sequence[str],
         own_log: Optional[str] = None) -> Plan:
    """What a run of ``spec_now`` can take from the log at ``path``. Raises ResumeRefused.

    ``path`` may be a directory (``oaievalset``'s whole set at once): its logs of this run's
    condition are candidates, the one with the most finished sessions is resumed, and a directory
    with none plays everything; logs of other conditions are passed over, not refused.
    """
    source = Path(path).expanduser().resolve()
    if source.is_dir():
        own = Path(own_log).expanduser().resolve() if own_log else None
        now = condition_of(spec_now)
        plans = [plan(str(p), spec_now, runs, players) for p in sorted(source.rglob("*.jsonl"))
                 if p.resolve() != own and not differences(condition_of(first_spec(p)), now)]
        return max(plans, key=lambda pl: len(pl.done), default=Plan(source=str(source)))
    if own_log is not None and Path(own_log).expanduser().resolve() == source:
        raise ResumeRefused(
            f"resume_from={path} is this run's own --record_path: the earlier log was overwritten when "
            "this run started. Resume into a new log (a different --record_path).")
    if not source.is_file():
        raise ResumeRefused(f"resume_from={path}: no such log file")
    spec, rows, torn = read_rows(source)
    if not spec:
        raise ResumeRefused(f"resume_from={path}: no run spec line, not an evals log")
    diff = differences(condition_of(spec), condition_of(spec_now))
    if diff:
        raise ResumeRefused(
            f"resume_from={path} is another condition (the log's vs this run's): " + "; ".join(diff)
            + ". Resume a log with this run's eval, players, args and seed, or run without resume_from.")
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_sample.setdefault(str(row["sample_id"]), []).append(row)
    out = Plan(source=str(source), torn_lines=torn)
    for sample_id, events in by_sample.items():
        sessions = [r["data"] for r in events if r["type"] == "econarena_session"]
        run_events = [r["data"] for r in events if r["type"] == "econarena_run"]
        tags = [r["data"].get(SEAT_TAG) for r in events if r["type"] == "sampling" and isinstance(r["data"], Mapping)]
        # a session cut off before its first run finished is known by its answered seat calls alone
        indices = {int(d["session"]) for d in sessions + run_events + [t for t in tags if isinstance(t, Mapping)]
                   if isinstance(d.get("session"), int)}
        if len(indices) != 1:
            continue
        index = indices.pop()
        finished = (len(sessions) == 1 and not sessions[0].get("errored")
                    and sorted(int(d["run"]) for d in run_events) == list(range(runs)))
        try:
            result = result_of(sessions[0], players) if finished else None
        except (KeyError, TypeError):  # a session event without its metrics: play it again
            finished = False
        if not finished:
            out.replay.append(index)
            part = _finished_runs(index, sample_id, events, source)
            if part.runs or part.calls:
                out.parts[index] = part
            continue
        answered = sum(r["type"] == "sampling" for r in events)
        copied = [(r["type"], {**r["data"], MARK: str(source)} if r["type"] == "econarena_run" else
                   {**r["data"], MARK: str(source), "reused_calls": answered} if r["type"] == "econarena_session"
                   else r["data"]) for r in events]
        out.done[index] = DoneSession(index=index, sample_id=sample_id, events=copied,
                                      result=result)
    out.replay = sorted(set(out.replay) - set(out.done))
    for index in set(out.parts) - set(out.replay):
        del out.parts[index]
    return out


def _seat_call_run(data: Mapping[str, Any]) -> Optional[int]:
    """The run (0-based) a sampling event was a seat call of: from its tag, else from its prompt."""
    tag = data.get("econarena")
    if isinstance(tag, Mapping) and isinstance(tag.get("run"), int):
        return int(tag["run"])
    try:
        return read_prompt(data.get("prompt") or "").run - 1
    except ValueError:
        return None


def _finished_runs(index: int, sample_id: str, events: Sequence[Mapping[str, Any]], source: Path) -> PartSession:
    """The runs of a cut-off or errored session that finished (every seat answered and was scored):
    a resumed run keeps them and plays only the others, so no finished run is paid for twice."""
    runs: dict[int, dict[str, Any]] = {}
    for r in events:
        if r["type"] == "econarena_run":
            runs.setdefault(int(r["data"]["run"]), {**r["data"], MARK: str(source)})
    kept: list[tuple[str, Any]] = [("econarena_run", runs[run]) for run in sorted(runs)]
    kept += [("sampling", r["data"]) for r in events
             if r["type"] == "sampling" and _seat_call_run(r["data"]) in runs]
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    for r in events:
        data = r["data"]
        tag = data.get(SEAT_TAG) if r["type"] == "sampling" and isinstance(data, Mapping) else None
        if not isinstance(tag, Mapping) or tag.get("session") != index or tag.get("run") in runs:
            continue
        if not isinstance(tag.get("run"), int) or not isinstance(tag.get("seat"), int):
            continue
        # a reply the log holds altered (cut to its first 64 KB, or with escaped characters) is
        # not the reply that was scored: that call is sent again
        if data.get("sampled_full_chars") or data.get("sampled_escaped"):
            continue
        calls.setdefault((tag["run"], tag["seat"]), {**data, MARK: str(source)})
    return PartSession(index=index, sample_id=sample_id, runs=runs, events=kept, calls=calls)


def reusable_reply(data: Mapping[str, Any], prompt: Any, player: str) -> Optional[str]:
    """The reply of a recorded seat call, if the resumed run would send exactly its request: the
    same prompt (as the completion fn records it) from the same player. The condition (model,
    completion args, sampling args, seed) is the same already: ``plan`` refuses another one."""
    tag = data.get(SEAT_TAG) or {}
    if tag.get("player") != player or _canonical(data.get("prompt")) != _canonical(prompt):
        return None
    sampled = data.get("sampled")
    if isinstance(sampled, list):
        return str(sampled[0]) if sampled else ""
    return None if sampled is None else str(sampled)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def check_samples(done: Mapping[int, DoneSession], sessions: Sequence[Any],
                  game_params: Callable[[Any, int], Mapping[str, Any]]) -> None:
    """A done session must be the same session in today's samples file: every game parameter the
    eval would log for its runs (``c_bar``, ``values``, ...) equals the logged one."""
    by_index = {s.index: s for s in sessions}
    for index, d in done.items():
        session = by_index.get(index)
        if session is None:
            continue
        for type_, data in d.events:
            if type_ != "econarena_run":
                continue
            run = int(data["run"])
            for key, value in game_params(session, run).items():
                if key in data and json.loads(json.dumps(value)) != data[key]:
                    raise ResumeRefused(
                        f"session {index} run {run}: {key} is {data[key]} in the log, {value} in the samples "
                        "file: the samples file changed since the log was written")


def rerecord(done: DoneSession) -> SessionResult:
    """Copy a finished session's events into the current log, under its original sample id."""
    rerecord_events(done.sample_id, done.events)
    return done.result


def rerecord_events(sample_id: str, events: Sequence[tuple[str, Any]]) -> None:
    import evals.record

    for type_, data in events:
        evals.record.record_event(type_, data, sample_id=sample_id)


# ---- telling the user how to resume ----

def _split_params(value: str) -> list[str]:
    return [kv for kv in value.split(",") if kv and not kv.startswith("resume_from=")]


def next_record_path(path: str) -> str:
    """A fresh log path next to ``path``: log.jsonl -> log.resumed.jsonl -> log.resumed2.jsonl ...;
    in ``$ECONARENA_RESUME_DIR`` instead when set (the old log's disk may be full)."""
    p = Path(path)
    elsewhere = os.environ.get(RESUME_DIR_ENV)
    if elsewhere:
        p = Path(elsewhere).expanduser().resolve() / p.name
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    base = stem.split(".resumed")[0]
    n = 1
    while True:
        candidate = p.with_name(f"{base}.resumed{'' if n == 1 else n}.jsonl")
        if not candidate.exists():
            return str(candidate)
        n += 1


def resume_command(command: str, log_path: str) -> str:
    """``command`` (an oaieval command line) turned into the one that resumes from ``log_path``.

    ``--extra_eval_params`` gets ``resume_from=`` (argparse keeps only the last copy of an option,
    so it is added to the existing one); a ``--record_path`` is moved to a fresh file next to the
    log, since reusing it would overwrite the very log being resumed before it is read.
    """
    log_path = str(Path(log_path).expanduser().resolve())
    args = shlex.split(command) if command else ["oaieval"]
    via_env = "," in log_path or "=" in log_path  # --extra_eval_params cannot carry these
    out: list[str] = []
    params: Optional[list[str]] = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if name in ("--extra_eval_params", "--record_path"):
            value = inline if eq else (args[i + 1] if i + 1 < len(args) else "")
            i += 1 if eq else 2
            if name == "--record_path":
                out += ["--record_path", next_record_path(log_path)]
            else:
                params = _split_params(value)
                out += ["--extra_eval_params", ""]  # filled in below, keeping its place
            continue
        out.append(arg)
        i += 1
    if not via_env:
        params = (params or []) + [f"resume_from={log_path}"]
    if params is not None:
        value = ",".join(params)
        if "--extra_eval_params" in out:
            at = out.index("--extra_eval_params")
            if value:
                out[at + 1] = value
            else:
                del out[at: at + 2]
        elif value:
            out += ["--extra_eval_params", value]
    line = shlex.join(out)
    return f"{RESUME_ENV}={shlex.quote(log_path)} {line}" if via_env else line


def log_path_of(recorder: Any) -> Optional[str]:
    path = getattr(recorder, "event_file_path", None) or getattr(recorder, "local_fallback_path", None)
    return str(path) if path else None


# The environment a resumed run needs to reach the same endpoint with the same code; never a key.
HINT_ENV = ("OPENAI_BASE_URL", "PYTHONPATH", "EVALS_THREADS", "ECONARENA_MAX_CONCURRENCY")


def hint(spec: Mapping[str, Any], log_path: str, env: Optional[Mapping[str, str]] = None) -> str:
    """The two lines that tell how to resume the run ``spec`` describes from its log. ``env``: the
    run's environment, when known (the eval's own process), so the command carries its endpoint."""
    # a log written before secrets were masked may hold a key in its command line: never repeat it
    command = redact_command(str((spec.get("run_config") or {}).get("command") or ""))
    try:
        shlex.split(command)
    except ValueError:  # a hand-edited command line that cannot be split: told as if there were none
        command = ""
    if not command:  # not run by oaieval (a test, a script): no command line to repeat
        return (f"To resume it, run the same eval again with resume_from={Path(log_path).resolve()} "
                "(--extra_eval_params, or ECONARENA_RESUME) and another --record_path.")
    prefix = "".join(f"{k}={shlex.quote(redact_url(env[k]) if k == 'OPENAI_BASE_URL' else env[k])} "
                     for k in HINT_ENV if env and env.get(k))
    note = "" if env is not None else "\n  (with the environment the run had, e.g. its OPENAI_BASE_URL)"
    if "***" in prefix:
        note += "\n  (OPENAI_BASE_URL's user, password and query are masked as ***: set it as the run had it)"
    if "***" in command:
        note += "\n  (a secret in the command is masked as ***: pass it through the environment, e.g. OPENAI_API_KEY)"
    if "api_base=" in command or "base_url=" in command:  # userinfo is dropped without a trace of it
        note += ("\n  (a user, password or query value in api_base is never repeated here: add it back if the "
                 "endpoint needs it)")
    return "To resume it (every answered seat call is kept; only what is missing is sent):\n  " \
           + prefix + resume_command(command, log_path) + note


_hinted = False


def hint_at_exit(recorder: Any, why: str, kept: Optional[Callable[[], Mapping[str, int]]] = None,
                 after: str = "") -> None:
    """Print the resume command on stderr when the process exits (after any traceback): one line
    with the cause and what the log keeps. ``kept()`` gives ``finished`` sessions and, where known,
    answered seat ``calls``, asked at exit: calls answered while the process wound down count too.
    ``after`` is added below the command."""
    global _hinted
    path = log_path_of(recorder)
    if path is None or _hinted:
        return
    _hinted = True
    command = hint(spec_of(recorder.run_spec), path, env=os.environ) + after

    def message() -> str:
        if kept is None:
            what = "What was answered is kept"
        else:
            n = kept()
            what = f"{n['finished']} finished session(s)" + (
                f" and {n['calls']} answered seat call(s)" if "calls" in n else "") + " are kept"
        return f"econarena: {why} {what} in {path}.\n" + command

    if os.path.basename(sys.argv[0] if sys.argv else "") in ("oaieval", "oaieval.py"):
        atexit.register(lambda: _say(message()))  # after any traceback
    else:  # run in-process (a notebook, a test): said now, where the caller's stderr is
        _say(message())


def _say(message: str) -> None:
    # one write: a log line from a thread still winding down must not land inside the command
    sys.stderr.write("\n" + message + "\n")
    sys.stderr.flush()


def resume_path(arg: Optional[str]) -> Optional[str]:
    """The eval arg wins over the environment; empty means no resume."""
    value = arg if arg not in (None, "") else os.environ.get(RESUME_ENV, "")
    return str(value) if value else None
