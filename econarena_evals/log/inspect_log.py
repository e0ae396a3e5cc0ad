"""An inspect_ai log of the inspect front end (``.eval`` or ``.json``), read as the rows of an evals
JSONL log: the same records ``evallog.read_log`` reads from ``oaieval``'s, so the summary, the report
and ``econarena-run``'s folders take both kinds of log alike.

What the front end (``on_inspect.tasks``) stores: in the task's metadata, the run's spec (eval
name, args, seed); in each sample's store, the session's ``econarena_run`` events, its
``econarena_session`` event, who played and each seat call's usage. From those this module yields
a spec row, one ``econarena_players`` row, the events, a ``sampling`` row per seat call (its seat
tag and usage), and the final report (a finished run) or an ``econarena_stop`` row (a run inspect
ended with an error or that was cancelled). inspect_ai itself is not needed: a ``.eval`` file is a
zip whose members are zstd-compressed JSON, read with ``zstandard``.

The evaluated player is named ``<model> (inspect)``, so that a model run under both front ends is
two rows of a report, each saying which front end ran it.
"""
from __future__ import annotations

import json
import re
import struct
import zipfile
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

import zstandard

from ..fns.identity import endpoint_label, registry_class
from ..score.metrics import METRICS
from .format import (
    PLAYERS_EVENT,
    RUN_EVENT,
    SEAT_TAG,
    SESSION_EVENT,
    STOP_EVENT,
    final_report,
    player_metrics,
    split_metric_key,
)
from .jsonl import NOT_AN_EVALS_LOG, Reading, _escape_surrogates

# What the inspect front end (``on_inspect.tasks``) stores: in the task's metadata, the run's spec;
# in each sample's store, the session's run events, its session event, who played, each call's usage.
# The session and players entries hold what the events of those names hold in an evals log.
SPEC_KEY = "econarena_spec"
RUNS_KEY = "econarena_runs"
SESSION_KEY = SESSION_EVENT
PLAYERS_KEY = PLAYERS_EVENT
USAGE_KEY = "econarena_calls"

FRONT_END = "inspect"
SUFFIX = f" ({FRONT_END})"  # the evaluated player's name in a report: a row of its own
MAX_MEMBER_BYTES = 256 * 2**20  # one sample of a .eval file, decompressed; past that it is skipped, named
_JSON_LOG = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_ZIP_STORED, _ZIP_DEFLATED, _ZIP_ZSTD = 0, 8, 93


def is_inspect_log(path: Path) -> bool:
    """A ``.eval`` zip, or a ``.json`` file that opens as an inspect log does (``{"version": N, "status": ...``)."""
    path = Path(path)
    try:
        if path.suffix == ".eval":
            return path.is_file() and zipfile.is_zipfile(path)
        if path.suffix == ".json" and path.is_file():
            with open(path, "rb") as f:
                return bool(_JSON_LOG.match(f.read(256)))
    except OSError:
        return False
    return False


def _member(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    """One member's JSON: zstd (what inspect writes; Python's zipfile lacks the codec), deflated or stored."""
    if info.file_size > MAX_MEMBER_BYTES:
        raise ValueError(f"{info.filename} holds {info.file_size} bytes, past {MAX_MEMBER_BYTES // 2**20} MiB")
    if info.compress_type != _ZIP_ZSTD:
        return json.loads(z.read(info))
    assert z.fp is not None
    z.fp.seek(info.header_offset)
    header = z.fp.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    z.fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = zstandard.ZstdDecompressor().decompressobj().decompress(z.fp.read(info.compress_size))
    return json.loads(raw)


def _sample_key(name: str) -> tuple[int, str]:
    stem = name.rsplit("/", 1)[-1].split("_", 1)[0]
    return (int(stem), name) if stem.isdigit() else (10**9, name)


def load(path: Path, reading: Reading) -> Optional[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(header, samples) of an inspect log: the header holds ``eval``, ``status``, ``error``; None if unreadable."""
    path = Path(path)
    try:
        if path.suffix == ".json":
            with open(path, encoding="utf-8") as f:
                whole = json.load(f)
            return whole, list(whole.get("samples") or [])
        with zipfile.ZipFile(path) as z:
            names = {i.filename: i for i in z.infolist()}
            head = "header.json" if "header.json" in names else "_journal/start.json"
            header = _member(z, names[head]) if head in names else {}
            if head != "header.json":  # still running, or killed: what it started with
                header = {**header, "status": "started"}
            samples = []
            for name in sorted((n for n in names if n.startswith("samples/") and n.endswith(".json")), key=_sample_key):
                try:
                    samples.append(_member(z, names[name]))
                except (ValueError, zstandard.ZstdError, OSError) as exc:
                    reading.note(f"{name}: skipped: {exc}")
            return header, samples
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, zstandard.ZstdError) as exc:
        reading.refused = f"not a readable inspect log: {type(exc).__name__}: {exc}"
        reading.problems.append(reading.refused)
        return None


def _renamed(x: Any, old: str, new: str) -> Any:
    """Every ``player`` field naming ``old`` in an event, renamed ``new``."""
    if isinstance(x, dict):
        return {k: (new if k == "player" and v == old else _renamed(v, old, new)) for k, v in x.items()}
    if isinstance(x, list):
        return [_renamed(v, old, new) for v in x]
    return x


def iter_inspect_rows(path: Path, reading: Optional[Reading] = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(number, row) of the evals-shaped rows of an inspect log (see the module); the number is the
    sample's place in the log (0: the spec). A file that is no log of the front end is refused in ``reading``."""
    reading = reading if reading is not None else Reading()
    loaded = load(path, reading)
    if loaded is None:
        return
    header, samples = loaded
    evaluation = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    spec = (evaluation.get("metadata") or {}).get(SPEC_KEY) if isinstance(evaluation.get("metadata"), dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("eval_name"), str):
        reading.refused = f"an inspect log of no EconArena task: {NOT_AN_EVALS_LOG} of either front end"
        reading.problems.append(reading.refused)
        return
    model = str(evaluation.get("model") or "")
    evaluated = model + SUFFIX
    run_id = str(evaluation.get("run_id") or evaluation.get("eval_id") or path)
    reading.run_ids.setdefault(run_id, None)
    command = f"inspect eval {evaluation.get('task_registry_name') or evaluation.get('task')} --model {model}"
    yield 0, {"spec": {
        "eval_name": spec["eval_name"], "run_id": run_id, "created_at": str(evaluation.get("created") or ""),
        "completion_fns": [evaluated], "front_end": FRONT_END,
        "run_config": {"command": command, "seed": spec.get("seed"), "max_samples": None,
                       "completion_fns": [evaluated],
                       "eval_spec": {"args": spec.get("args") or {}, "registry_path": None, "key": spec["eval_name"]}}}}
    players_seen: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []  # the session events
    for number, sample in enumerate(samples, start=1):
        store = sample.get("store") if isinstance(sample, dict) else None
        if not isinstance(store, dict) or SESSION_KEY not in store:
            if isinstance(sample, dict) and sample.get("error"):
                reading.note(f"sample {sample.get('id')}: errored: {str(sample['error'].get('message', ''))[:200]}")
            continue
        store = _escape_surrogates(store)
        for entry in store.get(PLAYERS_KEY) or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                players_seen.setdefault(entry["name"], entry)
        first = store[SESSION_KEY].get("player") if isinstance(store[SESSION_KEY], dict) else None
        if not isinstance(first, str):
            reading.note(f"sample {sample.get('id')}: its session event names no player, skipped")
            continue
        for event in store.get(RUNS_KEY) or []:
            yield number, {"run_id": run_id, "type": RUN_EVENT, "data": _renamed(event, first, evaluated)}
        session = _renamed(store[SESSION_KEY], first, evaluated)
        yield number, {"run_id": run_id, "type": SESSION_EVENT, "data": session}
        for call in store.get(USAGE_KEY) or []:
            if isinstance(call, dict):
                tag = _renamed({k: call.get(k) for k in ("cell", "session", "run", "seat", "player")}, first, evaluated)
                yield number, {"run_id": run_id, "type": "sampling",
                               "data": {SEAT_TAG: tag, "usage": call.get("usage"), "model": call.get("model"),
                                        "finish_reason": call.get("finish_reason")}}
        results.append(session)
    entries = []
    for name, entry in players_seen.items():
        is_evaluated = not entry.get("opponent") and not entries
        entries.append({"name": evaluated if is_evaluated else name, "cli_name": str(entry.get("model") or name),
                        "opponent": bool(entry.get("opponent")), "class": registry_class(str(entry.get("model"))),
                        "model": entry.get("model"),
                        "completion_args": {}, "condition_args": {}, "base_url": entry.get("base_url"),
                        "endpoint_label": endpoint_label(entry.get("base_url"))})
    if entries:
        yield len(samples) + 1, {"run_id": run_id, "type": PLAYERS_EVENT, "data": {"players": entries}}
    status = str(header.get("status") or "")
    if status == "success":
        # every player's means, in the session events' order (the evaluated player first, then the
        # others as their keys name them), as the plugin's final report holds them
        players = list(dict.fromkeys([evaluated] + [split_metric_key(k)[1] for s in results for k in s
                                                    if split_metric_key(k)[0] in METRICS and "/" in k]))
        finished = [None if s.get("errored") else player_metrics(s, players) for s in results]
        yield len(samples) + 1, {"run_id": run_id, "final_report": final_report(finished, players)}
    elif status in ("error", "cancelled"):
        error = header.get("error") if isinstance(header.get("error"), Mapping) else {}
        reason = str(error.get("message") or status).strip().splitlines()
        yield len(samples) + 1, {"run_id": run_id, "type": STOP_EVENT,
                                 "data": {"cell": spec["eval_name"].split(".")[1], "stopped": status,
                                          "reason": (reason[-1] if reason else status)[:500]}}
