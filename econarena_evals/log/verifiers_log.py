"""A run of the verifiers front end (``vf-eval econarena_evals``: its ``traces.jsonl``), read as the
rows of an evals log: the same records ``evallog.read_log`` reads from ``oaieval``'s, so the summary,
the report and ``econarena-run``'s folders take it beside evals and inspect logs.

What the front end (``on_verifiers.plugin``) stores, under ``trace.info["econarena"]`` of each seat's
trace (one line of ``traces.jsonl`` is one episode, one session): the cell, split, session and seat,
the seat's calls (run, answering model, usage, finish reason); on its first seat's trace also the run spec
(eval name, args, seed), the session's ``econarena_run`` events, its ``econarena_session`` record and
who played. From those this module yields a spec row, the events, a ``sampling`` row per seat call,
one ``econarena_players`` row, and the final report once every session the run's config selected
has a finished episode (else the log reads as partial: the missing sessions are flagged).

Every line is read with ``jsonl``'s bound and typed before use; a bad line is named and skipped, a
file that is no run of the front end is refused. One run holds the cells its taskset named; a log is
one cell, so the file's first cell is read and the others are named (one cell per run reads whole).
The evaluated player is named ``<model> (verifiers)``: a row of its own in a report.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Optional

from ..fns.identity import endpoint_label, registry_class
from ..fns.registry_files import packaged_registries
from .format import PLAYERS_EVENT, RUN_EVENT, SEAT_TAG, SESSION_EVENT, VERIFIERS_INFO_KEY, final_report, player_metrics
from .inspect_log import _renamed
from .jsonl import NOT_AN_EVALS_LOG, Reading, json_rows, open_regular, text_lines

# What the front end stores on each seat's trace, under ``trace.info[INFO_KEY]``:
INFO_KEY = VERIFIERS_INFO_KEY
SPEC_KEY = "spec"
RUNS_KEY = "runs"
SESSION_KEY = SESSION_EVENT
PLAYERS_KEY = "players"
CALLS_KEY = "calls"

TRACES_FILE = "traces.jsonl"  # what vf-eval writes in a run's folder
CONFIGS = ("configs/resolved/eval.json", "configs/eval.json")  # the run's config, as vf-eval saves it
MAX_CONFIG_BYTES = 2**20
MAX_SAMPLES_BYTES = 16 * 2**20
FRONT_END = "verifiers"
SUFFIX = f" ({FRONT_END})"


def seat_infos(cell: str, split: str, session: int, spec: dict[str, Any], events: list[dict[str, Any]],
               record: dict[str, Any], players: list[dict[str, Any]], seats: list[int], own: list[dict[str, float]],
               calls: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """What the front end stores under ``trace.info[INFO_KEY]`` of the trace of each of the model's
    ``seats``: ``own[i]`` that seat's own metrics, ``calls[i]`` its calls; the session's facts once,
    on the first seat's."""
    infos = [{"cell": cell, "split": split, "session": session, "seat": seat, "seat_metrics": seat_own,
              CALLS_KEY: seat_calls} for seat, seat_own, seat_calls in zip(seats, own, calls)]
    infos[0].update({RUNS_KEY: events, SESSION_KEY: record, SPEC_KEY: spec, PLAYERS_KEY: players})
    return infos


def is_verifiers_log(path: Path) -> bool:
    """A ``traces.jsonl`` whose first bytes open as a verifiers episode does."""
    path = Path(path)
    if path.name != TRACES_FILE:
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"env"' in head


def _lines(path: Path, reading: Reading) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, episode) of each JSON object line, each read within ``MAX_LINE_BYTES``."""
    handle = open_regular(path, reading)
    if handle is None:
        return
    with handle:
        yield from json_rows(text_lines(handle, reading), reading, "run")
    reading.finish()


def _config(folder: Path, reading: Reading) -> Optional[dict[str, Any]]:
    """The run's saved config (vf-eval's), read within ``MAX_CONFIG_BYTES``; None, named, if unreadable."""
    for name in CONFIGS:
        path = folder / name
        if not path.is_file():
            continue
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                raise ValueError(f"longer than {MAX_CONFIG_BYTES} bytes")
            config = json.loads(raw)
        except (OSError, ValueError, RecursionError) as exc:
            reading.note(f"{name}: unreadable ({exc}): the sessions the run selected are unknown")
            return None
        return config if isinstance(config, dict) else None
    reading.note("no configs/eval.json beside it: the sessions the run selected are unknown")
    return None


def _sample_count(samples_jsonl: Any) -> Optional[int]:
    """How many sessions the packaged samples file holds (its non-blank lines)."""
    roots = packaged_registries()
    if not roots or not isinstance(samples_jsonl, str) or ".." in Path(samples_jsonl).parts:
        return None
    try:
        with open(roots[0] / "data" / samples_jsonl, "rb") as f:
            raw = f.read(MAX_SAMPLES_BYTES)
    except OSError:
        return None
    return sum(1 for line in raw.splitlines() if line.strip())


def expected_sessions(config: Optional[dict[str, Any]], spec: dict[str, Any]) -> Optional[set[int]]:
    """The sessions of the spec's cell the run's config selected (its taskset's seeds, else every
    session of the cell's split, less what ``-n`` cut); None when the config does not say."""
    env = config.get("env") if isinstance(config, dict) else None
    taskset = env.get("taskset") if isinstance(env, dict) else None
    if not isinstance(taskset, dict):
        return None
    seeds = taskset.get("seeds")
    if isinstance(seeds, list) and all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        wanted = set(seeds)
    else:
        count = _sample_count((spec.get("args") or {}).get("samples_jsonl"))
        if count is None:
            return None
        wanted = set(range(count))
    select = config.get("select") if isinstance(config, dict) else None
    limit = select.get("limit") if isinstance(select, dict) else None
    cells = taskset.get("cells")
    if isinstance(limit, int) and not isinstance(limit, bool) and (not isinstance(cells, list) or len(cells) == 1):
        wanted = set(sorted(wanted)[:limit])
    return wanted


def _seats(episode: dict[str, Any]) -> list[dict[str, Any]]:
    """The EconArena info of each of the model's seats' traces, in seat order; [] for an episode of none."""
    traces = episode.get("traces")
    infos = []
    for trace in traces if isinstance(traces, list) else []:
        info = trace.get("info") if isinstance(trace, dict) else None
        data = info.get(INFO_KEY) if isinstance(info, dict) else None
        if isinstance(data, dict) and isinstance(data.get("seat"), int):
            infos.append(data)
    return sorted(infos, key=lambda d: d["seat"])


def iter_verifiers_rows(path: Path, reading: Optional[Reading] = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(number, row) of the evals-shaped rows of a verifiers run (see the module); the number is the
    episode's line (0: the spec). A file that is no run of the front end is refused in ``reading``."""
    reading = reading if reading is not None else Reading()
    path = Path(path)
    spec: Optional[dict[str, Any]] = None
    model = run_id = ""
    # session -> (its line, its first seat's info, every seat's)
    sessions: dict[int, tuple[int, dict[str, Any], list[dict[str, Any]]]] = {}
    other_cells: dict[str, None] = {}
    failed: dict[int, str] = {}
    for lineno, episode in _lines(path, reading):
        seats = _seats(episode)
        first = next((s for s in seats if SPEC_KEY in s), None)
        if first is None or not isinstance(first.get(SPEC_KEY), dict):
            errors = episode.get("errors")
            last = errors[-1] if isinstance(errors, list) and errors else None
            why = last.get("message") if isinstance(last, dict) else None
            if why is not None:
                task = episode.get("task")
                data = task.get("data") if isinstance(task, dict) else None
                name = data.get("name") if isinstance(data, dict) else None
                reading.note(f"line {lineno}: episode {name or '?'} errored: {str(why)[:200]}")
                failed[lineno] = str(why)
            else:
                reading.note(f"line {lineno}: an episode with no EconArena session, skipped")
            continue
        this = first[SPEC_KEY]
        if not isinstance(this.get("eval_name"), str) or not isinstance(first.get("session"), int):
            reading.note(f"line {lineno}: its run spec names no eval or session, skipped")
            continue
        if spec is None:
            spec = this
            traces = episode["traces"]
            agent = traces[0].get("agent") if isinstance(traces[0], dict) else None
            config = agent.get("config") if isinstance(agent, dict) else None
            model = str(config.get("model") if isinstance(config, dict) else "") or "?"
            run = episode.get("run")
            run_id = str(run.get("id") if isinstance(run, dict) and run.get("id") else path.parent.name)
        elif this["eval_name"] != spec["eval_name"]:
            other_cells.setdefault(this["eval_name"], None)
            continue
        if episode.get("ok") is not True:
            reading.note(f"line {lineno}: session {first['session']}'s episode did not finish, skipped")
            continue
        if first["session"] in sessions:
            reading.note(f"line {lineno}: session {first['session']} again (-r above 1?): its first episode kept")
            continue
        sessions[first["session"]] = (lineno, first, seats)
    if spec is None:
        reading.refused = f"no EconArena session in a verifiers run: {NOT_AN_EVALS_LOG} of any front end"
        reading.problems.append(reading.refused)
        return
    if other_cells:
        reading.note(f"also holds {', '.join(other_cells)}: a log is one cell; run one cell per vf-eval run "
                     "to read each")
    reading.run_ids.setdefault(run_id, None)
    evaluated = model + SUFFIX
    # the sessions the run was asked for, as the inspect reader gives them: a partial run's count says "k of n"
    wanted = expected_sessions(_config(path.parent, reading), spec)
    yield 0, {"spec": {
        "eval_name": spec["eval_name"], "run_id": run_id, "created_at": "", "completion_fns": [evaluated],
        "front_end": FRONT_END,
        "run_config": {"command": f"vf-eval econarena_evals -m {model}", "seed": spec.get("seed"),
                       "max_samples": len(wanted) if wanted else None,
                       "completion_fns": [evaluated],
                       "eval_spec": {"args": spec.get("args") or {}, "registry_path": None, "key": spec["eval_name"]}}}}
    results = []
    players_seen: dict[str, dict[str, Any]] = {}
    for session in sorted(sessions):
        lineno, first, seats = sessions[session]
        record = first.get(SESSION_KEY)
        if not isinstance(record, dict) or not isinstance(record.get("player"), str):
            reading.note(f"line {lineno}: session {session} has no session record, skipped")
            continue
        played = record["player"]
        for entry in first.get(PLAYERS_KEY) or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                players_seen.setdefault(entry["name"], entry)
        for event in first.get(RUNS_KEY) or []:
            yield lineno, {"run_id": run_id, "type": RUN_EVENT, "data": _renamed(event, played, evaluated)}
        record = _renamed(record, played, evaluated)
        yield lineno, {"run_id": run_id, "type": SESSION_EVENT, "data": record}
        for seat in seats:
            for call in seat.get(CALLS_KEY) or []:
                if isinstance(call, dict):
                    tag = {"cell": first.get("cell"), "session": session, "run": call.get("run"),
                           "seat": seat["seat"], "player": evaluated}
                    yield lineno, {"run_id": run_id, "type": "sampling",
                                   "data": {SEAT_TAG: tag, "usage": call.get("usage"), "model": call.get("model"),
                                            "finish_reason": call.get("finish_reason")}}
        results.append(record)
    entries = [{"name": evaluated if i == 0 else name, "cli_name": str(entry.get("model") or name),
                "opponent": bool(entry.get("opponent")), "class": registry_class(str(entry.get("model"))),
                "model": entry.get("model"), "completion_args": {}, "condition_args": {},
                "base_url": entry.get("base_url"), "endpoint_label": endpoint_label(entry.get("base_url"))}
               for i, (name, entry) in enumerate(players_seen.items())]
    end = max([n for n, _, _ in sessions.values()] + list(failed) + [0]) + 1
    if entries:
        yield end, {"run_id": run_id, "type": PLAYERS_EVENT, "data": {"players": entries}}
    done = {r["session"] for r in results}
    if wanted is not None and wanted <= done and not failed:
        players = [evaluated]
        finished = [None if s.get("errored") else player_metrics(s, players) for s in results]
        yield end, {"run_id": run_id, "final_report": final_report(finished, players)}
    elif wanted is not None:
        missing = sorted(wanted - done)
        reading.note(f"{len(missing)} session(s) with no finished episode: {missing[:20]}"
                     f"{' ...' if len(missing) > 20 else ''}; `vf-eval @ CONFIG --resume` plays them "
                     "(from their first run)")
