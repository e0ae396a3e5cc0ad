"""The one reader of evals JSONL logs: streaming, bounded, never raising on a bad file.

Every reader of a log (``evallog``, ``filing``, ``transcripts``, the resume's plan) goes through
``iter_lines`` / ``iter_rows``, and every other JSON-lines file the package reads (a verifiers
run's ``traces.jsonl``: ``verifiers_log``; the verifiers front end's journal of answered calls)
through the same ``bounded_lines`` (and ``json_rows``): lines are read with a bound
(``MAX_LINE_BYTES``), a file whose first line is not a run spec is refused at that line, and a
lone surrogate is read as the text ``\\udXXX`` (docs/reliability.md, "Bad files"). So a 1 GB
garbage file costs one bounded line, and a hand-edited log never crashes a tool. What the rows
mean is ``format``'s; this module only frames them.
"""
from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Optional, Sequence

# No line the eval writes comes near this (a sampling event stores at most 64 KB of each reply);
# a longer one is named and skipped unread, so no line is ever held whole past it.
MAX_LINE_BYTES = 16 * 2**20
SKIP_CHUNK = 2**20
NAMED_PROBLEMS = 20  # lines named one by one; past that only counted, so a garbage file cannot fill memory
NOT_AN_EVALS_LOG = "not an evals log"
NOT_JSON = "not JSON"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Reading:
    """What reading a log met besides its rows: problems (each naming its line), lines that were
    not JSON, the run ids seen, and why the file is not an evals log (then nothing was yielded)."""

    problems: list[str] = field(default_factory=list)
    not_json: int = 0
    run_ids: dict[str, None] = field(default_factory=dict)  # in order of first sight
    refused: Optional[str] = None
    # the first line is no JSON at all (or too long to be any): a damaged log, or no log, never another
    # tool's JSON lines, so ``--strict`` fails on it
    garbled: bool = False
    offset: int = 0  # where the line last yielded starts in the file (bytes)
    size: int = 0  # bytes read so far
    _unnamed: int = 0

    def note(self, problem: str) -> None:
        if len(self.problems) < NAMED_PROBLEMS:
            self.problems.append(problem)
        else:
            self._unnamed += 1

    def finish(self) -> None:
        if self._unnamed:
            self.problems.append(f"{self._unnamed} more bad line(s) not named")
            self._unnamed = 0

    @property
    def mixed(self) -> Optional[str]:
        """Why the log cannot be used as one run's record, or None."""
        if len(self.run_ids) < 2:
            return None
        ids = list(self.run_ids)
        return (f"holds {len(ids)} runs (run ids {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}): "
                "two runs wrote this file at once; none of it is used")


def _escape_surrogates(x: Any) -> Any:
    if isinstance(x, str):
        return x.encode("utf-8", "backslashreplace").decode("utf-8") if _LONE_SURROGATE.search(x) else x
    if isinstance(x, dict):
        return {_escape_surrogates(k): _escape_surrogates(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_escape_surrogates(v) for v in x]
    return x


try:  # the same JSON read about twice as fast (reading is most of what the report tools do); else json
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency; a venv without it still reads every log
    _fast_loads = None
# What orjson reads otherwise than json, so that such a line goes to json: a lone surrogate escape (json
# reads it, orjson refuses the line) and an integer past 64 bits (json reads it exactly, orjson as a
# float), found as a run of 19 digits (a regular expression would take longer than the decoding).
# The same pass counts the line's brackets for ``_bounded``: "[" and "{" become "(", so one count of the
# translated bytes is the two counts of the text (no byte of a character past ASCII is either of them).
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x28 if i in (0x5B, 0x7B) else 0x20
                for i in range(256))  # every digit 0, every opening bracket (, all else a space
_LONG_RUN = b"0" * 19


def _scanned(text: str) -> bytes:
    """``text``'s UTF-8 through ``_DIGITS``: its runs of digits and its opening brackets."""
    return text.encode("utf-8", "surrogatepass").translate(_DIGITS)


def _json_only(text: str, scanned: Optional[bytes] = None) -> bool:
    return bool(_SURROGATE_ESCAPE.search(text)) or _LONG_RUN in (_scanned(text) if scanned is None else scanned)


# No line the eval or oaieval writes nests deeper than 6 (a players event with a JSON schema among its
# completion args, a few more); a deeper line is refused, whichever parser reads it. Without the bound
# the verdict was the parser's: orjson reads 1,024 levels, this Python's json fewer (3.11) or more
# (3.13), and a row too deep to pickle cannot come back from a worker process.
MAX_DEPTH = 64


class TooDeep(ValueError):
    """A line nested deeper than ``MAX_DEPTH``."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")


def _too_deep(row: Any) -> bool:
    """Whether ``row`` nests lists and objects deeper than ``MAX_DEPTH`` (the row itself is level 1)."""
    if not (type(row) is dict or type(row) is list):
        return False
    stack = [(row, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in (value.values() if type(value) is dict else value):
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


def _bounded(row: Any, text: str, scanned: Optional[bytes] = None) -> Any:
    """``row`` if no deeper than ``MAX_DEPTH``, else ``TooDeep``; the walk is skipped when the line has
    too few brackets to be that deep (all but a few lines). ``scanned``: ``_scanned(text)``, if made."""
    brackets = text.count("[") + text.count("{") if scanned is None else scanned.count(b"(")
    if brackets > MAX_DEPTH and _too_deep(row):
        raise TooDeep()
    return row


def _json_row(text: str) -> Any:
    """json's reading of a line (the reading where orjson is not installed, and of what orjson refuses)."""
    try:
        row = _bounded(json.loads(text), text)
    except RecursionError:
        raise TooDeep() from None
    return _escape_surrogates(row) if _SURROGATE_ESCAPE.search(text) else row


def decode_row(text: str) -> Any:
    """One line's JSON, a lone surrogate anywhere in it read as its 6-character escape (as the
    recorder stores one); raises ValueError for anything that is not JSON, or nested deeper than
    ``MAX_DEPTH``.

    The row is json's (``_json_row``), to the type and the bit, whether orjson is installed or not:
    orjson reads the lines it reads as json does, and what it refuses (NaN, Infinity, 1e400, deep
    nesting, what is no JSON) json reads, or refuses, as always; both are held to one depth."""
    if _fast_loads is not None:
        scanned = _scanned(text)
        if not _json_only(text, scanned):
            try:
                row = _fast_loads(text)
            except ValueError:
                pass
            else:
                return _bounded(row, text, scanned)
    return _json_row(text)


def _not_spec(text: str) -> Optional[str]:
    """Why a first line is not a run spec, or None."""
    try:
        row = decode_row(text)
    except TooDeep as exc:  # JSON, but no line of a log is that deep: said as it is, not as "not JSON"
        return f"JSON {exc}"
    except ValueError:
        return NOT_JSON
    return None if isinstance(row, dict) and isinstance(row.get("spec"), dict) else "JSON but not a run spec"


def not_regular(mode: int) -> Optional[str]:
    """What a file that is not a regular file is (a FIFO, a socket, a device), or None."""
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def open_regular(path: Path, reading: Reading) -> Optional[BinaryIO]:
    """The file opened for reading if it is a regular file; else None, and why in ``reading``.
    Opened without blocking (a FIFO with no writer would block an open for ever) and checked on
    the open descriptor, so a file swapped for a FIFO after a look is not read either."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        reading.refused = f"cannot open: {exc}"
        reading.problems.append(reading.refused)
        return None
    what = not_regular(os.fstat(fd).st_mode)
    if what is not None:
        os.close(fd)
        reading.refused = f"{what}, not a log: skipped unread"
        reading.problems.append(reading.refused)
        return None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def bounded_lines(handle: BinaryIO, reading: Optional[Reading] = None) -> Iterator[tuple[int, Optional[bytes]]]:
    """(line number, the line's bytes) of each line of ``handle``, each read within ``MAX_LINE_BYTES``:
    a longer line comes as None, and is then skipped in chunks, never held whole (not at all if the
    reader stops there). ``reading`` notes where each line starts and the bytes read so far."""
    reading = reading if reading is not None else Reading()
    lineno = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        reading.offset = reading.size
        reading.size += len(raw)
        lineno += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            yield lineno, None
            while raw and not raw.endswith(b"\n"):
                raw = handle.readline(SKIP_CHUNK)
                reading.size += len(raw)
            continue
        yield lineno, raw


def text_lines(handle: BinaryIO, reading: Reading) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line of ``handle`` (``bounded_lines``); a longer line is
    named in ``reading`` and skipped; bytes that are not UTF-8 are read as U+FFFD."""
    for lineno, raw in bounded_lines(handle, reading):
        if raw is None:
            reading.note(f"line {lineno}: longer than {MAX_LINE_BYTES // 2**20} MiB, skipped")
            continue
        text = raw.decode("utf-8", errors="replace")
        if text.strip():
            yield lineno, text


def json_rows(lines: Iterable[tuple[int, str]], reading: Reading, what: str = "log"
              ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) of each line of ``lines`` that is a JSON object (``decode_row``'s bounds);
    every other line is named in ``reading`` (a line not JSON as a cut-off ``what``'s) and skipped."""
    for lineno, text in lines:
        try:
            row = decode_row(text)
        except TooDeep as exc:
            reading.not_json += 1
            reading.note(f"line {lineno}: {exc}, skipped")
            continue
        except ValueError:
            reading.not_json += 1
            reading.note(f"line {lineno}: not JSON (truncated {what}?)")
            continue
        if not isinstance(row, dict):
            reading.note(f"line {lineno}: not a JSON object, skipped")
            continue
        yield lineno, row


def iter_lines(path: Path, reading: Optional[Reading] = None) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line, each read with a bound of ``MAX_LINE_BYTES``.

    The first non-blank line must be a ``{"spec": {...}}`` object: otherwise the file is refused
    there (``reading.refused``) and nothing is yielded. A longer line is named and skipped without
    being held; bytes that are not UTF-8 are read as U+FFFD."""
    reading = reading if reading is not None else Reading()
    handle = open_regular(path, reading)
    if handle is None:
        return
    with handle:
        first = True
        lines = bounded_lines(handle, reading)
        while True:
            try:
                lineno, raw = next(lines, (0, b""))
            except OSError as exc:  # a directory, an unreadable device
                reading.refused = f"cannot read: {exc}"
                reading.problems.append(reading.refused)
                return
            if not lineno:
                break
            if raw is None:
                if first:
                    reading.garbled = True
                    reading.refused = (f"line {lineno} is longer than {MAX_LINE_BYTES // 2**20} MiB, not a run spec: "
                                       + NOT_AN_EVALS_LOG)
                    reading.problems.append(reading.refused)
                    return
                reading.note(f"line {lineno}: longer than {MAX_LINE_BYTES // 2**20} MiB, skipped")
                continue
            text = raw.decode("utf-8", errors="replace")
            if not text or text.isspace():  # ``not text.strip()``, without a copy of every line
                continue
            if first:
                first = False
                why = _not_spec(text)
                if why:
                    reading.garbled = why == NOT_JSON
                    reading.refused = f"line {lineno} is {why}: {NOT_AN_EVALS_LOG}"
                    reading.problems.append(reading.refused)
                    return
            yield lineno, text
    reading.finish()


def lines_at(path: Path, offsets: Sequence[int]) -> Iterator[Optional[str]]:
    """The line that starts at each of ``offsets`` (as ``Reading.offset`` noted them), read with the
    same bound as ``iter_lines``; None for one that cannot be read or is longer than the bound."""
    try:
        handle = open(path, "rb")
    except OSError:
        yield from (None for _ in offsets)
        return
    with handle:
        for offset in offsets:
            try:
                handle.seek(offset)
                raw = handle.readline(MAX_LINE_BYTES + 1)
            except OSError:
                yield None
                continue
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                yield None
            else:
                yield raw.decode("utf-8", errors="replace")


def iter_rows(path: Path, reading: Optional[Reading] = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) of each JSON object line of an evals log (``iter_lines``'s bounds apply).
    A line that is not JSON is counted and named in ``reading``; the run id of every row is noted
    there. (A reader that wants few lines tests ``iter_lines``' text before decoding: transcripts.)"""
    reading = reading if reading is not None else Reading()
    for lineno, row in json_rows(iter_lines(path, reading), reading):
        spec = row.get("spec")
        run_id = spec.get("run_id") if isinstance(spec, dict) else row.get("run_id")
        if isinstance(run_id, str):
            reading.run_ids.setdefault(run_id, None)
        yield lineno, row
