"""Seat calls by a provider's batch API: a round of batches per wave of the sessions, waited for, retried, re-attached.

A batch API (OpenAI's ``/v1/batches``, and the gateways that copy it) bills about half the price
and has limits of its own, but answers within a window of hours, not seconds. So the calls are not
sent one by one: every session puts its wave's calls into ``BatchRounds.call`` and waits, and once every
session still playing waits (or none came for ``LINGER_S``), the round goes as one batch per
endpoint, or as few as the API's size limits allow. A cell without history is one wave, so one
batch; a cell with history is one wave per run, since run k's prompts need run k-1's outcomes.

Nothing is paid twice: each batch's input file and then its id are recorded (``record``) before
any wait, and a resumed run passes the log's custom_id -> batch map as ``adopted``: lines already
in a batch are waited for there, a batch that finished while nobody waited is used as it is. A
custom_id names the seat call and hashes its request, so a line is only ever taken for the very
request it answered.

The batch API's own failures (5xx, timeouts, dropped connections, a batch object of the wrong
shape, a download cut short) are the API's, not the calls': a look at a batch or a download of its
files is retried with backoff for as long as the batch's window lasts (``_patient``), and never
sends a line again. Lines go again only when the provider says the batch ended without answering
them (expired, cancelled, failed), does not know the batch, or its output cannot be read (a 404, or
a completed batch whose output holds no line for the call: those lines were paid, and the user is
told). Output and error files are read as streams of lines, so memory is bounded by the longest
line, not the file; the first line for a custom_id answers it.

A line is bought at most ``MAX_BOUGHT`` times, ever: every record of a batch carries, per line, how
many batches it has been in, and a resume reads that count back with the batch map (``bought``).
A line whose answer was bought that often and still cannot be read is not bought again: the run
stops (exit 4) with one line naming the batches and how many lines each holds, and the resume asks
the last of them again, buying nothing; unless the player allows synchronous calls
(``batch_fallback=yes``: ``BatchAPI.fallback``), which then answer it.

Lines the batch did not answer (an expired or cancelled batch, a failed validation, lines in the
error file with a status a retry may cure) go again in a later batch, at most ``max_attempts``
batches per line; then the call fails with ``LineFailed`` and its session errors (or the eval
sends it synchronously, if the user allowed it). Stopping the run (Ctrl-C, SIGTERM) stops waiting,
not the batches: they are paid for, and the resume takes their results.

Rule of the folder: no evals, no HTTP client; ``BatchAPI`` is what ``fns`` implements.
"""
from __future__ import annotations

import json
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Protocol, Sequence, Union

from .errors import RunStopped, SeatCallError, fatal, is_transient, status_of
from .state import CallState

TERMINAL = ("completed", "failed", "expired", "cancelled")
MAX_LINES = 50_000  # OpenAI's limit of requests per batch
MAX_BYTES = 190 * 1024 * 1024  # under its 200 MB limit per input file
# A session not yet started cannot add its calls until a thread is free (EVALS_SEQUENTIAL, fewer
# threads than sessions): once every started session is in, and none started for this long, the
# round goes without those. (The start-up of the sessions takes milliseconds; a session that is
# busy elsewhere, scoring or calling a synchronous opponent, is waited for however long it takes.)
LINGER_S = 2.0
NO_SUCH_ROUTE = (404, 405, 501)  # what a server without a batch API answers to /v1/files or /v1/batches
# The API ends every batch within its 24-hour window; one still not ended an hour after that is
# taken for lost (a gateway that dropped it): its calls go in a new batch, so no wait is endless.
OVERDUE_S = 25 * 3600.0
FIRST_POLL_S = 1.0  # polls start fast (a small batch may finish in seconds) and double up to poll_s
MAX_BOUGHT = 2  # batches a line may be in, ever, when what they answered cannot be read


@dataclass(frozen=True)
class Line:
    custom_id: str
    body: dict[str, Any]


@dataclass
class Status:
    """What the API says of a batch (its ``request_counts`` flattened)."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: Optional[str] = None
    error_file_id: Optional[str] = None
    errors: str = ""  # why validation failed, if it did
    notes: tuple[str, ...] = ()  # fields of the batch object that had the wrong type, ignored


class LineFailed(Exception):
    """A batch line that got no answer: ``status_code`` None if it was never run, and whether a
    later batch may cure it (a 400 would fail the same way every time)."""

    def __init__(self, message: str, status_code: Optional[int] = None, transient: bool = True,
                 lost: bool = False) -> None:
        super().__init__(message)
        # lost: the batch ran the line (bought), but its answer cannot be read
        self.status_code, self.transient, self.lost = status_code, transient, lost


class BatchAPI(Protocol):
    label: str  # which endpoint, for progress lines and the log
    fallback: bool  # calls no batch answered may go synchronously (the player's batch_fallback)

    def upload(self, data: bytes) -> str: ...  # -> the input file's id

    def create(self, file_id: str, metadata: Mapping[str, str]) -> str: ...  # -> the batch's id

    def retrieve(self, batch_id: str) -> Status: ...

    def download(self, file_id: str) -> Union[bytes, Iterable[bytes]]: ...  # the file, or its lines as they come

    def find(self, file_id: str) -> Optional[str]: ...  # the batch made of this input file, if listed


@dataclass
class Answer:
    """A line's result: the response body, and the batch that answered it."""

    body: dict[str, Any]
    batch_id: str


Result = Union[Answer, BaseException]


def bought_of(where: Mapping[str, Any]) -> int:
    """How many batches a line has been in, by a resumed log's batch map (an old log's: 1 if any)."""
    n = where.get("bought")
    if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        return n
    return 1 if where.get("batch_id") or where.get("input_file_id") else 0


def jsonl(lines: Sequence[Line], endpoint: str) -> bytes:
    return b"".join(json.dumps({"custom_id": line.custom_id, "method": "POST", "url": endpoint,
                                "body": line.body}, ensure_ascii=False).encode("utf-8") + b"\n"
                    for line in lines)


def chunks(lines: Sequence[Line], endpoint: str) -> list[range]:
    """Where to cut the lines into batches within the API's limits of lines and bytes per input file."""
    cuts: list[range] = []
    start = size = 0
    for i, line in enumerate(lines):
        n = len(jsonl([line], endpoint))
        if i > start and (i - start >= MAX_LINES or size + n > MAX_BYTES):
            cuts.append(range(start, i))
            start, size = i, 0
        size += n
    if start < len(lines):
        cuts.append(range(start, len(lines)))
    return cuts


def read_results(data: Union[bytes, Iterable[bytes]], batch_id: str,
                 repeated: Optional[list[str]] = None) -> dict[str, Result]:
    """custom_id -> the answer or why there is none, from an output or error file's lines (the
    whole file, or its lines as they stream in: only one line is held at a time). The first line of
    a custom_id answers it; the custom_id of each later one goes in ``repeated``."""
    results: dict[str, Result] = {}
    for raw in data.splitlines() if isinstance(data, bytes) else data:
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8", "replace"))  # the API side escapes bytes that are not UTF-8
            custom_id = str(row["custom_id"])
        except (ValueError, KeyError, TypeError):
            continue  # a line we cannot tell the call of: that call is sent again
        if custom_id in results:
            if repeated is not None:
                repeated.append(custom_id)
            continue
        response, error = row.get("response") or {}, row.get("error")
        code = response.get("status_code") if isinstance(response, dict) else None
        if code == 200 and isinstance(response.get("body"), dict):
            results[custom_id] = Answer(response["body"], batch_id)
            continue
        message = ""
        if isinstance(error, dict):
            message = f"{error.get('code') or ''}: {error.get('message') or ''}".strip(": ")
        body = response.get("body") if isinstance(response, dict) else None
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            message = message or str(body["error"].get("message") or body["error"])
        if not isinstance(code, int) or isinstance(code, bool):
            code = None
        transient = code is None or code in (408, 409, 429) or code >= 500
        results[custom_id] = LineFailed(f"batch {batch_id}: line {custom_id}: HTTP {code}: {message}" if code
                                        else f"batch {batch_id}: line {custom_id}: {message or 'not run'}",
                                        code, transient)
    return results


class _Unknown(Exception):
    """The API does not know the batch asked for."""


@dataclass
class _Slot:
    api: BatchAPI
    line: Line
    result: Optional[Result] = None
    tries: int = 0


class BatchRounds:
    """The batch calls of one run of the eval: collected into rounds (every session's current wave), sent, waited for,
    as the run's call state says (its policy; its stop ends the waits)."""

    def __init__(self, call_state: CallState, sessions: int, poll_s: float, endpoint: str,
                 record: Callable[[dict[str, Any]], None], say: Callable[[str], None],
                 adopted: Optional[Mapping[str, Mapping[str, str]]] = None,
                 linger_s: float = LINGER_S) -> None:
        self.call_state, self.policy = call_state, call_state.policy
        self.sessions, self.poll_s, self.endpoint = sessions, poll_s, endpoint
        self.record, self.say, self.linger_s = record, say, linger_s
        # custom_id -> {"batch_id": ..., "input_file_id": ..., "bought": n} from the log resumed from
        self.adopted = dict(adopted or {})
        # custom_id -> batches it has been in, this run and the runs it resumed (``MAX_BOUGHT``)
        self.bought: dict[str, int] = {cid: bought_of(where) for cid, where in self.adopted.items()}
        self.bought_in: dict[str, list[str]] = {cid: [str(b) for b in where.get("batches") or ()]
                                                for cid, where in self.adopted.items()}  # the batches, to name them
        self.cond = threading.Condition()
        self.pending: list[_Slot] = []
        self.queued = 0  # calls whose lines wait in ``pending`` (a session has one at a time)
        self.left = 0  # sessions that will call no more
        self.started = 0  # sessions that began to play
        self.last_started = time.monotonic()
        self.rounds = 0
        self.batches: list[str] = []  # every batch id this run submitted or attached to
        self.ended: set[str] = set()  # those it saw end
        self.answered = 0  # calls a batch answered (the progress line's count)
        self.noted: set[str] = set()  # what was said once: a batch object's wrong fields

    # ---- the sessions' side ----

    def call(self, items: Sequence[tuple[BatchAPI, Line]]) -> list[Result]:
        """Put these calls in the current round and wait for their results (never raises for a line)."""
        if self.call_state.stopped.is_set():
            return [RunStopped(self.call_state.stop_reason or "run stopped") for _ in items]
        slots = [_Slot(api, line) for api, line in items]
        with self.cond:
            self.pending.extend(slots)
            self.queued += 1
            self._close_if_ready()
            while any(s.result is None for s in slots):
                if self.call_state.stopped.is_set():
                    break
                self._close_if_ready(lingered=True)
                self.cond.wait(min(0.5, self.linger_s))
        stopped = RunStopped(self.call_state.stop_reason or "run stopped")
        return [s.result if s.result is not None else stopped for s in slots]

    def enter(self) -> None:
        """A session begins to play: the round waits for its calls."""
        with self.cond:
            self.started += 1
            self.last_started = time.monotonic()

    def leave(self) -> None:
        """A session is done (finished or errored): the round need not wait for it."""
        with self.cond:
            self.left += 1
            self._close_if_ready()

    def running(self) -> list[str]:
        """Batches sent or attached to that this run did not see end: at a stop, they go on (paid for)."""
        return [b for b in dict.fromkeys(self.batches) if b not in self.ended]

    def _close_if_ready(self, lingered: bool = False) -> None:
        # every session still playing has its calls in: a session woken from the last round and not
        # yet back is not, so this counts calls queued, not sessions waiting
        if not self.pending:
            return
        if self.queued + self.left >= self.sessions:
            self._close()
        elif lingered and self.queued + self.left >= self.started and (
                time.monotonic() - self.last_started >= self.linger_s):
            self._close()  # the sessions still to come wait for a thread that only this round frees

    def _close(self) -> None:
        """Send the pending calls: a thread per endpoint and model, so two players' batches run side by side."""
        going, self.pending, self.queued = self.pending, [], 0
        self.rounds += 1
        by_api: dict[int, list[_Slot]] = {}
        for slot in going:
            by_api.setdefault(id(slot.api), []).append(slot)
        for slots in by_api.values():
            threading.Thread(target=self._send_round, args=(slots, self.rounds), daemon=True,
                             name=f"econarena-batch-round-{self.rounds}").start()

    def _settle(self, slot: _Slot, result: Result) -> None:
        with self.cond:
            if slot.result is None:
                slot.result = result
                self.answered += isinstance(result, Answer)
            self.cond.notify_all()

    # ---- the round's side: one thread per round ----

    def _send_round(self, slots: list[_Slot], number: int) -> None:
        try:
            self._send(slots, number)
        except Exception as exc:  # noqa: BLE001 - a failure of ours must fail the calls, not hang them
            for slot in slots:
                self._settle(slot, SeatCallError(f"batch round {number}: {type(exc).__name__}: {exc}"))

    def _send(self, slots: list[_Slot], number: int) -> None:
        api = slots[0].api
        todo = slots
        while todo and not self.call_state.stopped.is_set():
            attached: dict[str, list[_Slot]] = {}
            fresh: list[_Slot] = []
            for slot in todo:
                slot.tries += 1
                known = self.adopted.pop(slot.line.custom_id, None)  # adopted once: a retry is a new batch
                batch_id = known and (known.get("batch_id") or self._found(api, known.get("input_file_id")))
                if batch_id:
                    attached.setdefault(batch_id, []).append(slot)
                else:
                    fresh.append(slot)
            batches: dict[str, list[_Slot]] = {}
            for batch_id, group in attached.items():
                ids = [s.line.custom_id for s in group]
                for cid in ids:  # a batch found by its input file was bought, though not yet counted
                    self.bought[cid] = max(1, self.bought.get(cid, 0))
                    self.bought_in[cid] = [b for b in self.bought_in.get(cid, []) if b != batch_id] + [batch_id]
                earlier = sorted({b for cid in ids for b in self.bought_in[cid] if b != batch_id})
                self.record({"status": "attached", "batch_id": batch_id, "endpoint": api.label, "wave": number,
                             "custom_ids": ids, "bought": [self.bought[cid] for cid in ids],
                             **({"earlier": earlier} if earlier else {})})
                self.say(f"econarena: batch {batch_id}: re-attached: {len(group)} call(s) were sent in it before "
                         "the resume")
                self.batches.append(batch_id)
                batches[batch_id] = group
            for cut in chunks([s.line for s in fresh], self.endpoint):
                group = fresh[cut.start:cut.stop]
                batch_id = self._submit(api, group, number)
                if batch_id is not None:  # else the API refused for good, or the run stopped: settled there
                    batches[batch_id] = group
            todo = []
            lost: dict[str, list[tuple[_Slot, LineFailed]]] = {}  # batch id -> lines bought MAX_BOUGHT times
            for batch_id, group in batches.items():
                waited = self._wait(api, batch_id, len(group), attached=batch_id in attached)
                if waited is None:  # the batches go on at the provider; a resume takes their results
                    self._stopped([slot for group in batches.values() for slot in group])
                    return
                results, unanswered = waited
                for slot in group:
                    result = results.get(slot.line.custom_id) or unanswered
                    if (isinstance(result, LineFailed) and result.lost
                            and self.bought.get(slot.line.custom_id, 0) >= MAX_BOUGHT):
                        lost.setdefault(batch_id, []).append((slot, result))
                        continue
                    # a line an earlier run's batch refused is tried again: the resume asks for that
                    again = isinstance(result, LineFailed) and (result.transient or batch_id in attached)
                    if again and slot.tries < self.policy.max_attempts:
                        todo.append(slot)
                    else:
                        self._settle(slot, result)
            if lost and not self._unreadable(api, lost):
                self._stopped(todo)  # the run stopped: the rest waits for the resume too
                return
            if todo:
                self.say(f"econarena: {len(todo)} call(s) of round {number} got no answer from their batch: "
                         f"sending them again in a new batch (try {todo[0].tries + 1} of {self.policy.max_attempts})")
                # a batch refused as a whole (an enqueued-token limit) is not sent straight back
                if self.call_state.stopped.wait(self.policy.backoff(todo[0].tries, random.Random(number))):
                    break
        self._stopped(todo)

    def _unreadable(self, api: BatchAPI, lost: Mapping[str, Sequence[tuple[_Slot, LineFailed]]]) -> bool:
        """Lines bought ``MAX_BOUGHT`` times whose answers cannot be read: sent synchronously if the
        player allows it (True), else the run stops, naming the batches (False); none is bought again."""
        lines = sum(len(group) for group in lost.values())
        bought_in: dict[tuple[str, ...], int] = {}  # the batches a line was bought in -> lines so
        for batch_id, group in lost.items():
            for slot, _ in group:
                key = tuple(self.bought_in.get(slot.line.custom_id) or [batch_id])
                bought_in[key] = bought_in.get(key, 0) + 1
        names = ", ".join(f"{' and '.join(key)} ({n} line(s))" for key, n in list(bought_in.items())[:10])
        names += f" and {len(bought_in) - 10} more" if len(bought_in) > 10 else ""
        if getattr(api, "fallback", False):
            self.say(f"econarena: {lines} call(s) bought {MAX_BOUGHT} times by batch whose answers cannot be read "
                     f"({names}) go synchronously (batch_fallback=yes)")
            for group in lost.values():
                for slot, result in group:
                    self._settle(slot, result)
            return True
        self.call_state.stop(
            f"batch output unreadable: {lines} call(s) were bought {MAX_BOUGHT} times and their answers cannot "
            f"be read: {names} ({api.label}); none is bought again: the resume asks their last batch again, and "
            "batch_fallback=yes sends such calls synchronously", "batch output unreadable")
        self._stopped([slot for group in lost.values() for slot, _ in group])
        return False

    def _found(self, api: BatchAPI, file_id: Optional[str]) -> Optional[str]:
        """A batch made of an input file uploaded before the resume (the run was stopped between the
        upload and the record of the batch's id): found among the API's batches, or None."""
        if not file_id:
            return None
        found = self._api(lambda: api.find(file_id), f"looking for the batch of {file_id}")
        return found if isinstance(found, str) else None

    def _submit(self, api: BatchAPI, group: list[_Slot], number: int) -> Optional[str]:
        data = jsonl([s.line for s in group], self.endpoint)
        custom_ids = [s.line.custom_id for s in group]
        bought = [self.bought.get(cid, 0) + 1 for cid in custom_ids]  # counting this batch, once it is made
        until = time.monotonic() + OVERDUE_S  # an outage of the API is waited out as long as a batch would be
        file_id = self._api(lambda: api.upload(data), "uploading a batch's input file", route=True, until=until)
        if isinstance(file_id, BaseException):
            self._fail(group, file_id)
            return None
        # recorded before the batch exists: a resume finds the batch of this file if we die in between
        self.record({"status": "uploaded", "input_file_id": file_id, "endpoint": api.label, "wave": number,
                     "custom_ids": custom_ids, "bought": bought})
        while True:
            batch_id = self._api(lambda: api.create(file_id, {"econarena_wave": str(number)}), "creating a batch",
                                 route=True)
            if not isinstance(batch_id, BaseException) or self.call_state.stopped.is_set():
                break
            # the create may have reached the provider though its answer did not reach us: a batch
            # made of this file is used, never a second one paid for
            found = self._found(api, file_id)
            if found:
                batch_id = found
                break
            if (not is_transient(batch_id) or time.monotonic() >= until
                    or self.call_state.stopped.wait(self.policy.backoff_cap_s)):
                break
        if isinstance(batch_id, BaseException):
            self._fail(group, batch_id)
            return None
        self.bought.update(zip(custom_ids, bought))
        for cid in custom_ids:
            self.bought_in.setdefault(cid, []).append(batch_id)
        self.record({"status": "submitted", "batch_id": batch_id, "input_file_id": file_id, "endpoint": api.label,
                     "wave": number, "custom_ids": custom_ids, "bought": bought})
        self.batches.append(batch_id)
        self.say(f"econarena: batch {batch_id}: submitted, {len(group)} call(s) of round {number} ({api.label})")
        return batch_id

    def _wait(self, api: BatchAPI, batch_id: str, calls: int,
              attached: bool = False) -> Optional[tuple[dict[str, Result], LineFailed]]:
        """Poll the batch until it ends: its lines' results, and what a line without one failed with
        (None if the run stopped meanwhile). A batch this endpoint does not know (an earlier run's,
        under another key or project) has its calls sent in a new batch."""
        started, interval, said = time.monotonic(), min(FIRST_POLL_S, self.poll_s), None
        window_ends = started + OVERDUE_S
        while True:
            status = self._patient(lambda: api.retrieve(batch_id), f"asking for batch {batch_id}", window_ends)
            if status is None:
                return None  # the batch goes on: ``running`` names it for the line the run ends with
            if isinstance(status, _Unknown):
                self.say(f"econarena: batch {batch_id} is unknown to this endpoint"
                         f"{' (another key or project?)' if attached else ''}: its {calls} call(s) go in a new batch")
                return {}, LineFailed(f"batch {batch_id} is unknown to this endpoint")
            if isinstance(status, BaseException):
                status = Status(batch_id, "")  # the window is past: taken for lost below
            for note in status.notes:
                if note not in self.noted:
                    self.noted.add(note)
                    self.say(f"econarena: batch {batch_id}: {note}")
            line = (f"{status.status}, {status.completed} of {status.total or calls} done, "
                    f"{status.failed} failed" + (f": {status.errors}" if status.errors else ""))
            if status.status and (line != said or status.status in TERMINAL):
                waited = time.monotonic() - started
                self.say(f"econarena: batch {batch_id}: {line} ({waited:.0f} s waited)")
                said = line
            if status.status in TERMINAL:
                break
            if time.monotonic() - started > OVERDUE_S:
                self.say(f"econarena: batch {batch_id} has not ended {OVERDUE_S / 3600:g} h after it was sent, past "
                         f"the API's window: its {calls} call(s) go in a new batch")
                return {}, LineFailed(f"batch {batch_id} did not end within {OVERDUE_S / 3600:g} h")
            if self.call_state.stopped.wait(interval):
                return None
            interval = min(self.poll_s, interval * 2)
        self.ended.add(batch_id)
        results: dict[str, Result] = {}
        lost: list[str] = []
        for kind, file_id in (("error", status.error_file_id), ("output", status.output_file_id)):
            if not file_id:
                continue
            repeated: list[str] = []
            read = self._patient(lambda f=file_id, r=repeated: read_results(api.download(f), batch_id, r),
                                 f"downloading {file_id}", window_ends, restart=repeated.clear)
            if read is None:
                return None  # stopped: the batch's results wait for the resume
            if isinstance(read, dict):
                results.update(read)  # answers (read last) win over errors
                if repeated:
                    self.say(f"econarena: batch {batch_id}: its {kind} file {file_id} answers {len(repeated)} call(s) "
                             f"more than once (first: {repeated[0]}): the first line of each answers it, the others "
                             "are ignored")
            elif kind == "output":
                lost.append(file_id)
        self.record({"status": status.status, "batch_id": batch_id, "endpoint": api.label,
                     "completed": status.completed, "failed": status.failed, "total": status.total,
                     **({"errors": status.errors} if status.errors else {})})
        why = f"batch {batch_id} {status.status}" + (f": {status.errors}" if status.errors else "")
        if lost:
            self.say(f"econarena: batch {batch_id}: its output file {lost[0]} cannot be read (gone, or past the window): "
                     f"its {status.completed} answered call(s) were paid, and are sent again in a new batch only if "
                     f"they have been in fewer than {MAX_BOUGHT} batches")
            return results, LineFailed(f"{why}: its output file {lost[0]} cannot be read; this call was answered and "
                                       "paid", lost=True)
        if status.status == "completed":  # ran, by the provider's word, but no line of its files answers it
            return results, LineFailed(f"{why}: no result for this call", lost=True)
        return results, LineFailed(f"{why} before this call was answered")

    def _patient(self, request: Callable[[], Any], what: str, until: float,
                 restart: Callable[[], None] = lambda: None) -> Any:
        """A request about a batch the provider holds (a look at it, a download of its files). Its
        failures (5xx, a timeout, a dropped connection, an object or file of the wrong shape) are the
        API's, not the calls': retried with backoff until ``until`` (the batch's window), never a
        reason to send the lines again. Returns the result; ``_Unknown`` for a 404; None if the run
        stopped (or an error no retry cures stopped it); the last error once the window is past.
        ``restart`` runs before each new try (a download read half-way starts over)."""
        jitter, attempt, told = random.Random(0), 0, False
        while True:
            try:
                result = request()
            except Exception as exc:  # noqa: BLE001 - classified below
                if status_of(exc) == 404:
                    return _Unknown(str(exc))
                stop = fatal(exc)
                if stop is not None:
                    self.call_state.stop(stop[1], stop[0])
                    return None
                attempt += 1
                if not told:
                    told = True
                    self.say(f"econarena: batch API: {what} failed ({type(exc).__name__}: {str(exc)[:200]}); asking "
                             "again with backoff while the batch's window lasts (the batch goes on at the provider; "
                             "nothing is sent again)")
                if time.monotonic() >= until:
                    return exc
                if self.call_state.stopped.wait(self.policy.backoff(attempt, jitter)):
                    return None
                restart()
                continue
            if told:
                self.say(f"econarena: batch API: {what}: answered after {attempt} failed tries")
            return result

    def _api(self, request: Callable[[], Any], what: str, route: bool = False,
             until: Optional[float] = None) -> Any:
        """One request to the batch API, retried as the call policy says (and, given ``until``, a
        transient failure on until then); the result or the error. ``route``: a request to a route
        every batch API has, so its absence means there is none."""
        jitter, attempt = random.Random(0), 0
        while True:
            attempt += 1
            try:
                return request()
            except Exception as exc:  # noqa: BLE001 - classified below
                if route and status_of(exc) in NO_SUCH_ROUTE:
                    self.call_state.stop(f"this endpoint has no batch API ({what} was answered HTTP {status_of(exc)}): "
                             "run without batch=yes, or against an endpoint that has /v1/files and /v1/batches",
                             "no batch API")
                    return exc
                stop = fatal(exc)
                if stop is not None:
                    self.call_state.stop(stop[1], stop[0])
                    return exc
                more = attempt < self.policy.max_attempts or (until is not None and time.monotonic() < until)
                if not is_transient(exc) or not more:
                    self.say(f"econarena: batch API: {what} failed: {type(exc).__name__}: {exc}")
                    return exc
                if attempt == self.policy.max_attempts:
                    self.say(f"econarena: batch API: {what} failed {attempt} times ({type(exc).__name__}); asking "
                             "again with backoff")
                if self.call_state.stopped.wait(self.policy.backoff(attempt, jitter)):
                    return exc

    def _fail(self, group: list[_Slot], exc: BaseException) -> None:
        if self.call_state.stopped.is_set():
            self._stopped(group)
            return
        for slot in group:
            self._settle(slot, SeatCallError(f"batch API: {type(exc).__name__}: {exc}"))

    def _stopped(self, group: Sequence[_Slot]) -> None:
        for slot in group:
            self._settle(slot, RunStopped(self.call_state.stop_reason or "run stopped"))
