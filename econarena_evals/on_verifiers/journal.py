"""The seat calls a verifiers run has answered, kept beside its ``traces.jsonl`` so that ``vf-eval
--resume`` does not pay for them again.

verifiers writes an episode (one session) only once it ends, and its resume plays every episode it
does not hold from the start: the calls an unfinished session had answered are in no file of its
own. The front end appends each answered seat call to ``RUN/econarena_calls.jsonl`` as it lands,
under the exact request it answers (cell, split, session, run, seat, model, endpoint, messages and
sampling args with the seed) and its episode's id, which the episode's traces carry too
(``EPISODE_KEY``). A resumed run reads the calls of the episodes ``traces.jsonl`` does not hold
finished (what vf-eval plays again) and answers each identical request from them once, as the
plugin's ``resume_from`` reuses an evals log's answered calls; every other request goes to the
model. A fresh run (no ``--resume``) starts the file afresh.

The file is read as hostile: each line within ``MAX_LINE_BYTES`` (``log.jsonl.bounded_lines``, the
package's one bounded line reader) and typed; a bad line (a kill tears the last one) is named on
stderr and skipped, and its call is sent again.
"""
from __future__ import annotations

import hashlib
import json
import sys
import threading
import uuid
from collections import defaultdict, deque
from pathlib import Path
from typing import Any, Optional

from ..log.format import VERIFIERS_INFO_KEY
from ..log.jsonl import bounded_lines

FILE = "econarena_calls.jsonl"
TRACES = "traces.jsonl"  # vf-eval's episodes, beside it
EPISODE_KEY = "journal_episode"  # in each seat's trace info: the id its calls are recorded under
ANSWER_FIELDS = ("text", "finish_reason", "model", "usage")


def request_key(**request: Any) -> str:
    """The identity of a seat call: a hash of everything that decides its answer."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()


def _answer(row: Any) -> Optional[dict[str, Any]]:
    """A recorded answer typed as the front end writes it, else None."""
    if not (isinstance(row, dict) and isinstance(row.get("key"), str) and isinstance(row.get("episode"), str)
            and isinstance(row.get("text"), str)):
        return None
    if not all(row.get(k) is None or isinstance(row[k], str) for k in ("finish_reason", "model")):
        return None
    usage = row.get("usage")
    if usage is not None and not (isinstance(usage, dict) and all(
            v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in usage.values())):
        return None
    return row


class Journal:
    """One run's answered seat calls: ``take`` a kept answer, ``record`` a new one, ``finished`` an episode."""

    def __init__(self, folder: Path, resume: bool) -> None:
        self.path = Path(folder) / FILE
        self.kept: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self.reused = 0
        if resume:
            self._read()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a line is written whole or torn by a kill, never mixed with another: one writer, one lock
        self._lock = threading.Lock()
        self._file = open(self.path, "ab" if resume else "wb", buffering=0)  # each line reaches the OS at once
        if resume and self.path.stat().st_size and not self._ends_a_line():
            self._file.write(b"\n")  # a kill tore the last line: the next starts on its own

    def _finished(self) -> set[str]:
        """The ids of the episodes vf-eval keeps (``traces.jsonl``'s finished ones): their calls are
        theirs, and a session played again (-r above 1) asks the model afresh."""
        done: set[str] = set()
        try:
            handle = open(self.path.parent / TRACES, "rb")
        except OSError:
            return done
        with handle:
            for _, raw in bounded_lines(handle):
                if raw is None or EPISODE_KEY.encode() not in raw:  # too long: not one it keeps
                    continue
                try:
                    row = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(row, dict) or row.get("ok") is not True or not isinstance(row.get("traces"), list):
                    continue
                for trace in row["traces"]:
                    info = trace.get("info") if isinstance(trace, dict) else None
                    ours = info.get(VERIFIERS_INFO_KEY) if isinstance(info, dict) else None
                    if isinstance(ours, dict) and isinstance(ours.get(EPISODE_KEY), str):
                        done.add(ours[EPISODE_KEY])
        return done

    def _read(self) -> None:
        answers: list[dict[str, Any]] = []
        bad = 0
        try:
            handle = open(self.path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            print(f"econarena: {self.path}: unreadable ({exc}); every call is sent again", file=sys.stderr)
            return
        with handle:
            for lineno, raw in bounded_lines(handle):
                if raw is None:  # too long: no recorded call
                    row = None
                else:
                    try:
                        row = json.loads(raw)
                    except (ValueError, RecursionError):
                        row = None
                if (answer := _answer(row)) is not None:
                    answers.append(answer)
                elif raw is None or raw.strip():
                    bad += 1
                    if bad <= 3:
                        print(f"econarena: {self.path}: line {lineno} is no recorded call (torn by a kill?), "
                              "skipped: its call is sent again", file=sys.stderr)
        if bad > 3:
            print(f"econarena: {self.path}: {bad} lines in all are no recorded call, skipped", file=sys.stderr)
        done = self._finished()
        for answer in answers:
            if answer["episode"] not in done:
                self.kept[answer["key"]].append({k: answer.get(k) for k in ANSWER_FIELDS})

    def _ends_a_line(self) -> bool:
        with open(self.path, "rb") as f:
            f.seek(-1, 2)
            return f.read(1) == b"\n"

    def take(self, key: str) -> Optional[dict[str, Any]]:
        """A kept answer to the request ``key`` (each answers once), or None."""
        kept = self.kept.get(key)
        if not kept:
            return None
        self.reused += 1
        return kept.popleft()

    def _write(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, separators=(",", ":")).encode() + b"\n"
        with self._lock:
            self._file.write(line)

    def record(self, episode: str, key: str, answer: dict[str, Any]) -> None:
        self._write({"key": key, "episode": episode, **{k: answer.get(k) for k in ANSWER_FIELDS}})

    def close(self) -> None:
        self._file.close()


def new_episode() -> str:
    return uuid.uuid4().hex
