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

Read as a hostile file, as evals logs are (docs/reliability.md, "Bad files"): every member and a
whole ``.json`` log are read with a bound in bytes, whatever their compression and whatever the zip's
size fields say; the JSON through ``jsonl.decode_row`` (its depth limit); every field typed before
use. What is wrong with the file as a whole (its header, several epochs) refuses it in one line; what
is wrong with one sample skips that sample, named, and a log missing samples is not finished.
The log is held against itself: a sample the header lists but the log lacks, and a model the header
claims that its calls did not run, are named.

The evaluated player is named ``<model> (inspect)``, so that a model run under both front ends is
two rows of a report, each saying which front end ran it.
"""
from __future__ import annotations

import os
import re
import shlex
import struct
import zipfile
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Optional

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
    metric_key,
    split_metric_key,
)
from .jsonl import NOT_AN_EVALS_LOG, Reading, decode_row, open_regular

# What the inspect front end (``on_inspect.tasks``) stores: in the task's metadata, the run's spec;
# in each sample's store, the session's run events, its session event, who played, each call's usage.
# The session and players entries hold what the events of those names hold in an evals log.
SPEC_KEY = "econarena_spec"
RUNS_KEY = "econarena_runs"
SESSION_KEY = SESSION_EVENT
PLAYERS_KEY = PLAYERS_EVENT
USAGE_KEY = "econarena_calls"

# a row of this reader's own: what the log claims that its calls contradict (``EvalLog.contradicted``)
CONTRADICTION_EVENT = "econarena_contradiction"
FRONT_END = "inspect"
SUFFIX = f" ({FRONT_END})"  # the evaluated player's name in a report: a row of its own
# One member of a .eval file (a sample: about 170 KB for 10 runs of 5 seats), decompressed; and a
# whole .json log. Past it the member is skipped, the .json log refused, each named, never held whole.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_JSON_LOG_BYTES = 256 * 2**20
# The zip's directory, which zipfile reads whole before any member: one entry per sample and a few more
MAX_DIRECTORY_BYTES = 64 * 2**20
MAX_MEMBERS = 100_000
_CHUNK = 2**20
_JSON_LOG = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_ZIP_ZSTD = 93  # what inspect writes; Python's zipfile reads it from 3.14 only, so it is read here
_ZIPFILE_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
                    zipfile.ZIP_LZMA: "lzma"}
_ZSTD_WINDOW = 2**27  # the largest window a zstd frame may ask for (128 MiB; zstd's default cap is 2 GiB)
_EPOCH_MEMBER = re.compile(r"^samples/.+_epoch_(\d+)\.json$")
# inspect's own statuses: a run that ended with an error or was cancelled (``inspect eval-retry`` takes it)
RETRYABLE = ("error", "cancelled")


class Refused(ValueError):
    """Why a file is not read at all (its header, its size, several epochs): one line, nothing yielded."""


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


def _bounded(stream: Any, limit: int, what: str) -> bytes:
    """All of ``stream``, read in chunks; ValueError as soon as it passes ``limit`` bytes."""
    chunks, size = [], 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise ValueError(f"{what} holds more than {limit // 2**20} MiB: skipped unread")


class _Slice:
    """``size`` bytes of ``f`` from ``start``, as a stream (a zip member's compressed data)."""

    def __init__(self, f: BinaryIO, start: int, size: int) -> None:
        f.seek(start)
        self.f, self.left = f, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n) if n > 0 else b""
        self.left -= len(data)
        return data


def _member_bytes(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One member's bytes, decompressed with a bound (``MAX_MEMBER_BYTES``) on what comes out, whatever
    the size fields say; a compression method this reader does not know is refused by name."""
    what = f"{info.filename[:200]} (inflated)"
    if info.compress_type in _ZIPFILE_METHODS:
        with z.open(info) as f:
            return _bounded(f, MAX_MEMBER_BYTES, what)
    if info.compress_type != _ZIP_ZSTD:
        raise ValueError(f"{info.filename[:200]}: compression method {info.compress_type}, which this reader "
                         "does not read (it reads stored, deflate, bzip2, lzma and zstd)")
    assert z.fp is not None
    z.fp.seek(info.header_offset)
    header = z.fp.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise ValueError(f"{info.filename[:200]}: no local header where the zip's directory puts it")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    data = _Slice(z.fp, info.header_offset + 30 + name_len + extra_len, info.compress_size)
    reader = zstandard.ZstdDecompressor(max_window_size=_ZSTD_WINDOW).stream_reader(data, read_across_frames=True)
    with reader:
        return _bounded(reader, MAX_MEMBER_BYTES, what)


def _json(raw: bytes, what: str) -> Any:
    """JSON as every log is read (``jsonl.decode_row``: one depth limit, one reading of numbers)."""
    try:
        return decode_row(raw.decode("utf-8", errors="replace"))
    except RecursionError:
        raise ValueError(f"{what}: nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"{what}: not JSON ({str(exc)[:100]})") from None


def _member(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    return _json(_member_bytes(z, info), info.filename[:200])


def _sample_key(name: str) -> tuple[int, str]:
    stem = name.rsplit("/", 1)[-1].split("_", 1)[0]
    return (int(stem), name) if stem.isdigit() and len(stem) < 10 else (10**9, name)


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _count(x: Any) -> Optional[int]:
    return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None


def _text(x: Any) -> Optional[str]:
    return x if isinstance(x, str) else None


def _samples_of_eval(z: zipfile.ZipFile, names: dict[str, zipfile.ZipInfo], reading: Reading) -> Iterator[Any]:
    for name in sorted((n for n in names if n.startswith("samples/") and n.endswith(".json")), key=_sample_key):
        try:
            yield _member(z, names[name])
        except (ValueError, RuntimeError, NotImplementedError, OSError, EOFError, zipfile.BadZipFile,
                zstandard.ZstdError) as exc:  # RuntimeError: an encrypted member
            reading.note(f"{name[:200]}: skipped: {str(exc)[:300]}")
            yield None


def load(path: Path, reading: Reading) -> Optional[tuple[dict[str, Any], Iterator[Any]]]:
    """(header, samples) of an inspect log: the header holds ``eval``, ``status``, ``error``; the
    samples are read one by one as the iterator is (None for one that could not be read, named in
    ``reading``). None, and why in ``reading``, if the file is not read at all."""
    path = Path(path)
    try:
        if path.suffix == ".json":
            header, samples = _load_json(path, reading)
        else:
            header, samples = _load_eval(path, reading)
        if not isinstance(header, dict):
            raise Refused(f"its header is {type(header).__name__}, not an object: not an inspect log")
        return header, samples
    except (Refused, OSError, ValueError, KeyError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile,
            zstandard.ZstdError) as exc:
        if reading.refused is None:
            reading.refused = (str(exc) if isinstance(exc, Refused)
                               else f"not a readable inspect log: {type(exc).__name__}: {str(exc)[:300]}")
            reading.problems.append(reading.refused)
        return None


def _load_json(path: Path, reading: Reading) -> tuple[Any, Iterator[Any]]:
    handle = open_regular(path, reading)
    if handle is None:
        raise Refused(reading.refused or "cannot open")
    with handle:  # never more than the bound, whatever the file's size says or becomes
        too_big = os.fstat(handle.fileno()).st_size > MAX_JSON_LOG_BYTES
        raw = b"" if too_big else handle.read(MAX_JSON_LOG_BYTES + 1)
    reading.size = len(raw)
    if too_big or len(raw) > MAX_JSON_LOG_BYTES:
        raise Refused(f"an inspect .json log of more than {MAX_JSON_LOG_BYTES // 2**20} MiB: not read (this "
                      "reader holds a .json log whole; `inspect log convert` writes it as a .eval, read sample "
                      "by sample)")
    whole = _json(raw, path.name)
    del raw
    if not isinstance(whole, dict):
        return whole, iter(())
    samples = whole.get("samples")
    if samples is not None and not isinstance(samples, list):
        reading.note(f"its samples are {type(samples).__name__}, not a list: none read")
    return whole, iter(samples if isinstance(samples, list) else [])


def _directory_refused(path: Path) -> Optional[str]:
    """Why the zip's directory is not read (larger than ``MAX_DIRECTORY_BYTES`` or more than
    ``MAX_MEMBERS`` entries, as its end record says), or None: zipfile would read it whole."""
    with open(path, "rb") as f:
        end = zipfile._EndRecData(f)  # the end record as zipfile itself reads it, the directory unread
    if end is None:
        return None  # no zip: zipfile says so
    size, entries = end[zipfile._ECD_SIZE], end[zipfile._ECD_ENTRIES_TOTAL]
    if size > MAX_DIRECTORY_BYTES or entries > MAX_MEMBERS:
        return (f"its zip directory holds {entries} entries in {size} bytes, past {MAX_MEMBERS} entries or "
                f"{MAX_DIRECTORY_BYTES // 2**20} MiB: not read")
    return None


def _load_eval(path: Path, reading: Reading) -> tuple[Any, Iterator[Any]]:
    why = _directory_refused(path)
    if why:
        raise Refused(why)
    z = zipfile.ZipFile(path)
    try:
        names = {i.filename: i for i in z.infolist()}
        epochs = sorted({int(m.group(1)) for n in names if (m := _EPOCH_MEMBER.match(n)) and len(m.group(1)) < 10})
        if any(e != 1 for e in epochs):
            raise Refused(_epochs_refused(max(epochs)))
        head = "header.json" if "header.json" in names else "_journal/start.json"
        header = _member(z, names[head]) if head in names else {}
        if head != "header.json" and isinstance(header, dict):  # still running, or killed: what it started with
            header = {**header, "status": "started"}
        reading.size = path.stat().st_size
    except BaseException:
        z.close()
        raise

    def samples() -> Iterator[Any]:
        with z:
            yield from _samples_of_eval(z, names, reading)

    return header, samples()


def _epochs_refused(epochs: int) -> str:
    return (f"holds {epochs} epochs of its samples (inspect eval --epochs {epochs}): this reader takes one "
            "session per sample and does not merge epochs; run with --epochs 1 (inspect's default), one log "
            "per epoch: not read")


# What the front end stores nests a few levels (a run event's seats, a call's usage); deeper is no
# store of its, and is skipped before anything walks it (``_renamed`` recurses)
MAX_STORE_DEPTH = 32


def _deeper_than(x: Any, limit: int) -> bool:
    """Does ``x`` nest lists and objects more than ``limit`` levels deep? (walked without recursion)"""
    level = [x]
    for _ in range(limit + 1):
        level = [v for item in level if isinstance(item, (dict, list))
                 for v in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return True


def _renamed(x: Any, old: str, new: str) -> Any:
    """Every ``player`` field naming ``old`` in an event, renamed ``new``."""
    if isinstance(x, dict):
        return {k: (new if k == "player" and v == old else _renamed(v, old, new)) for k, v in x.items()}
    if isinstance(x, list):
        return [_renamed(v, old, new) for v in x]
    return x


def _command(evaluation: dict[str, Any], model: str) -> str:
    """The ``inspect eval`` line that runs this log's task again as it ran (task, model, roles, -T
    args, limit), as far as its header says; each part typed before use."""
    task = _text(evaluation.get("task_registry_name")) or _text(evaluation.get("task")) or "TASK"
    args = ["inspect", "eval", task, "--model", model or "MODEL"]
    for role, spec in _dict(evaluation.get("model_roles")).items():
        role_model = _text(_dict(spec).get("model")) or _text(spec)
        if role_model:
            args += ["--model-role", f"{role}={role_model}"]
    for name, value in _dict(evaluation.get("task_args_passed")).items():
        if isinstance(value, (str, int, float, bool)):
            args += ["-T", f"{name}={value}"]
    limit = _count(_dict(evaluation.get("config")).get("limit"))
    if limit:
        args += ["--limit", str(limit)]
    return shlex.join(args)


def _called_models(sample: dict[str, Any]) -> dict[str, int]:
    """model -> calls, of the sample's model events without a role (the ``--model`` player's calls,
    and a cell's fixed opponents'): what inspect called, whatever the header says."""
    out: dict[str, int] = {}
    events = sample.get("events")
    for event in events if isinstance(events, list) else ():
        if isinstance(event, dict) and event.get("event") == "model" and event.get("role") is None:
            name = _text(event.get("model"))
            if name is not None:
                out[name] = out.get(name, 0) + 1
    return out


def _sample_problem(sample: Any, wanted: Optional[set[Any]], seen_ids: set[Any]) -> Optional[str]:
    """Why a sample is not one of the log's sessions (its type, id or epoch), or None."""
    if not isinstance(sample, dict):
        return f"{type(sample).__name__}, not an object"
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    if not isinstance(sample_id, (int, str)) or isinstance(sample_id, bool):
        return f"its id is {type(sample_id).__name__}, not a number or a text"
    if epoch != 1 or isinstance(epoch, bool):
        return f"epoch {epoch if type(epoch) is int else type(epoch).__name__}, where the log holds epoch 1 only"
    if wanted is not None and sample_id not in wanted:
        return "not among the samples the log's header lists"
    return "a second sample of that id" if sample_id in seen_ids else None


def _store_problem(store: dict[str, Any], seen_sessions: set[int]) -> Optional[str]:
    """Why a sample's store is not what the front end writes (its depth, its session event, the
    types of its lists), or None."""
    if _deeper_than(store, MAX_STORE_DEPTH):
        return f"its store nests more than {MAX_STORE_DEPTH} levels deep"
    session = store[SESSION_KEY]
    if not isinstance(session, dict) or _text(session.get("player")) is None or _count(session.get("session")) is None:
        return "its session event names no player or session number"
    if session["session"] in seen_sessions:
        return f"session {session['session']} again (another sample held it)"
    bad = [k for k in (RUNS_KEY, PLAYERS_KEY, USAGE_KEY) if not isinstance(store.get(k, []), list)]
    return f"its store's {', '.join(bad)} not a list" if bad else None


def _error_text(error: Any) -> str:
    message = _dict(error).get("message") if isinstance(error, dict) else error
    return str(message if isinstance(message, (str, int, float)) else type(error).__name__)[:200]


def iter_inspect_rows(path: Path, reading: Optional[Reading] = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(number, row) of the evals-shaped rows of an inspect log (see the module); the number is the
    sample's place in the log (0: the spec). A file that is no log of the front end is refused in
    ``reading`` before any row; a sample that cannot be used is named there and skipped."""
    reading = reading if reading is not None else Reading()
    loaded = load(path, reading)
    if loaded is None:
        return
    header, samples = loaded
    try:
        yield from _rows(Path(path), header, samples, reading)
    finally:
        close = getattr(samples, "close", None)
        if close is not None:
            close()


def _rows(path: Path, header: dict[str, Any], samples: Iterator[Any],
          reading: Reading) -> Iterator[tuple[int, dict[str, Any]]]:
    evaluation = _dict(header.get("eval"))
    spec = _dict(evaluation.get("metadata")).get(SPEC_KEY)
    if not isinstance(spec, dict) or not isinstance(spec.get("eval_name"), str) or "." not in spec["eval_name"]:
        reading.refused = f"an inspect log of no EconArena task: {NOT_AN_EVALS_LOG} of either front end"
        reading.problems.append(reading.refused)
        return
    epochs = evaluation.get("config")
    epochs = _dict(epochs).get("epochs", 1)
    if _count(epochs) is not None and epochs > 1:
        reading.refused = _epochs_refused(epochs)
        reading.problems.append(reading.refused)
        return
    claimed = _text(evaluation.get("model")) or ""
    run_id = _text(evaluation.get("run_id")) or _text(evaluation.get("eval_id")) or str(path)
    reading.run_ids.setdefault(run_id, None)
    status = _text(header.get("status")) or ""
    wanted = _dict(evaluation.get("dataset")).get("sample_ids")
    wanted = [i for i in wanted if isinstance(i, (int, str)) and not isinstance(i, bool)] \
        if isinstance(wanted, list) else None
    listed = set(wanted) if wanted is not None else None
    args = spec.get("args") if isinstance(spec.get("args"), dict) else {}
    seed = spec.get("seed") if isinstance(spec.get("seed"), int) and not isinstance(spec.get("seed"), bool) else None

    # every sample read first (its rows kept until the evaluated player's name is known); a sample's
    # rows are small next to its member (the prompts and replies are not kept)
    players_seen: dict[str, dict[str, Any]] = {}
    called: dict[str, int] = {}
    played: list[tuple[int, str, dict[str, Any], list[Any], list[Any]]] = []  # number, player, session, runs, calls
    errored: list[tuple[int, Any, str]] = []  # number, session, error
    seen_ids: set[Any] = set()
    seen_sessions: set[int] = set()
    number = 0
    for number, sample in enumerate(samples, start=1):
        if sample is None:
            continue  # named where it was read
        epoch = sample.get("epoch") if isinstance(sample, dict) else None
        if _count(epoch) is not None and epoch > 1:  # nothing is yielded before every sample is read
            reading.refused = _epochs_refused(epoch)
            reading.problems.append(reading.refused)
            return
        why = _sample_problem(sample, listed, seen_ids)
        sample_id = sample.get("id") if isinstance(sample, dict) else None
        name = f"sample {sample_id[:40] if isinstance(sample_id, str) else sample_id}" \
            if isinstance(sample_id, (int, str)) else f"sample {number}"
        if why:
            reading.note(f"{name}: {why}: skipped")
            continue
        seen_ids.add(sample["id"])
        try:
            for model, n in _called_models(sample).items():
                called[model] = called.get(model, 0) + n
            store = sample.get("store")
            if not isinstance(store, dict) or SESSION_KEY not in store:
                error = sample.get("error")
                if error:
                    errored.append((number, sample["id"] if _count(sample["id"]) is not None else None,
                                    _error_text(error)))
                reading.note(f"{name}: errored: {_error_text(error)}" if error
                             else f"{name}: holds no session (its store has no {SESSION_KEY}): skipped")
                continue
            why = _store_problem(store, seen_sessions)
            if why:
                reading.note(f"{name}: {why}: skipped")
                continue
            session = store[SESSION_KEY]
            seen_sessions.add(session["session"])
            for entry in store.get(PLAYERS_KEY) or []:
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    players_seen.setdefault(entry["name"], entry)
            played.append((number, session["player"], session, list(store.get(RUNS_KEY) or []),
                           [c for c in store.get(USAGE_KEY) or [] if isinstance(c, dict)]))
        except RecursionError:
            reading.note(f"{name}: nested too deeply: skipped")

    # the model the header claims, held against the calls inspect made
    opponents = {_text(e.get("model")) for e in players_seen.values() if e.get("opponent") is True}
    answering = {m: n for m, n in called.items() if m not in opponents}
    model = claimed
    if answering and claimed not in answering:
        model = max(answering, key=lambda m: (answering[m], m))
        contradiction = (f"the log claims model {claimed[:100] or '(none)'}, but its calls ran "
                         + ", ".join(f"{m[:100]} ({n} call(s))" for m, n in sorted(answering.items())[:5])
                         + f": shown as {model[:100]}")
    else:
        contradiction = None
    evaluated = model + SUFFIX

    yield 0, {"spec": {
        "eval_name": spec["eval_name"], "run_id": run_id, "created_at": _text(evaluation.get("created")) or "",
        "completion_fns": [evaluated], "front_end": FRONT_END, "inspect_status": status,
        "run_config": {"command": _command(evaluation, model), "seed": seed,
                       "max_samples": len(wanted) if wanted else None, "completion_fns": [evaluated],
                       "eval_spec": {"args": args, "registry_path": None, "key": spec["eval_name"]}}}}
    if contradiction:
        yield 0, {"run_id": run_id, "type": CONTRADICTION_EVENT, "data": {"why": contradiction}}
    results: list[dict[str, Any]] = []  # the session events
    for number_of, first, session, runs, calls in played:
        for event in runs:
            yield number_of, {"run_id": run_id, "type": RUN_EVENT, "data": _renamed(event, first, evaluated)}
        event = _renamed(session, first, evaluated)
        yield number_of, {"run_id": run_id, "type": SESSION_EVENT, "data": event}
        for call in calls:
            tag = _renamed({k: call.get(k) for k in ("cell", "session", "run", "seat", "player")}, first, evaluated)
            yield number_of, {"run_id": run_id, "type": "sampling",
                              "data": {SEAT_TAG: tag, "usage": call.get("usage"), "model": call.get("model"),
                                       "finish_reason": call.get("finish_reason")}}
        results.append(event)
    cell = spec["eval_name"].split(".")[1]
    for number_of, session, error in errored:
        if session is not None and session not in seen_sessions:
            seen_sessions.add(session)
            event = {"cell": cell, "session": session, "player": evaluated, "errored": True, "error": error}
            yield number_of, {"run_id": run_id, "type": SESSION_EVENT, "data": event}
            results.append(event)
    entries = []
    for name, entry in players_seen.items():
        is_evaluated = entry.get("opponent") is not True and not entries
        entry_model = _text(entry.get("model"))
        base_url = _text(entry.get("base_url"))
        entries.append({"name": evaluated if is_evaluated else name, "cli_name": entry_model or name,
                        "opponent": entry.get("opponent") is True, "class": registry_class(str(entry_model)),
                        "model": model if is_evaluated else entry_model,
                        "completion_args": {}, "condition_args": {}, "base_url": base_url,
                        "endpoint_label": endpoint_label(base_url)})
    if entries:
        yield number + 1, {"run_id": run_id, "type": PLAYERS_EVENT, "data": {"players": entries}}
    missing = [i for i in wanted if i not in seen_ids] if wanted is not None else []
    if missing:
        reading.note(f"{len(missing)} of {len(wanted or [])} sample(s) the header lists are not in the log "
                     f"({', '.join(str(i)[:20] for i in missing[:5])}{', ...' if len(missing) > 5 else ''}): "
                     "the run is not finished")
    if status == "success" and not missing:
        # every player's means, in the session events' order (the evaluated player first, then the
        # others as their keys name them), as the plugin's final report holds them; read_log derives
        # them again from the run events, so only their presence matters here
        players = list(dict.fromkeys([evaluated] + [split_metric_key(str(k))[1] for s in results for k in s
                                                    if split_metric_key(str(k))[0] in METRICS and "/" in str(k)]))
        finished = [None if s.get("errored") else _metrics(s, players) for s in results]
        yield number + 1, {"run_id": run_id, "final_report": final_report(finished, players)}
    elif status in RETRYABLE:
        error = _dict(header.get("error"))
        message = error.get("message")
        reason = (message if isinstance(message, str) else status).strip().splitlines()
        yield number + 1, {"run_id": run_id, "type": STOP_EVENT,
                           "data": {"cell": cell, "stopped": status,
                                    "reason": (reason[-1] if reason else status)[:500]}}


def _metrics(session: dict[str, Any], players: list[str]) -> dict[str, dict[str, float]]:
    """player -> metrics of a session event, for the players with every metric a finite number."""
    out = {}
    for player in players:
        values = {m: session.get(metric_key(m, player, players)) for m in METRICS}
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
            out[player] = values
    return out
