"""The shell around the eval proper: what a run says and does around its sessions' play.

``run/eval.py`` plays sessions (waves, seat calls, scoring, events). This module holds the rest of a
run, which a reader of the play need not follow: the plan line and its event, the progress lines,
the signals and stops, the counts of what the log holds and what this run sent (which the resume
hint, the stop event and the last lines report), and the lines at the end of the run.
"""
from __future__ import annotations

import logging
import sys
import threading
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, Callable, Iterator, Optional, Sequence

from ..calls.dispatch import endpoints_down
from ..calls.state import CallState
from ..core.redact import redact_text
from ..integration import status as exit_status
from ..integration.progress_bar import bar_unless_asked, write_line
from ..integration.recorder import durable, seat_calls_recorded
from ..integration.threads import threads_for
from ..log.format import PLAN_EVENT, RESUMED_FROM, STOP_EVENT
from . import disk, signals
from .plan import ANSWERS_FOR_EXPECTED, Estimate, expected_from_answers
from .progress import Progress, duration
from .resume_command import hint_at_exit

logger = logging.getLogger(__name__)

# How long a stopped run (Ctrl-C, SIGTERM, SIGHUP) waits for the calls already on the wire, so their
# paid answers are in the log; a second Ctrl-C leaves at once.
STOP_GRACE_S = 10.0


class Counts:
    """What this run's log holds and what this run sent, counted as sessions and seat calls end
    (from the calls' worker threads, hence the lock). The seat calls this run answered are the
    recorder's count (``recorded``), taken as each is recorded: a stop can come before the run is
    handed a wave's replies."""

    def __init__(self, recorded: Callable[[], tuple[int, tuple[int, int]]] = lambda: (0, (0, 0))) -> None:
        self._lock = threading.Lock()
        self._recorded = recorded
        self.sessions = 0  # finished sessions in this log (kept from the log resumed from, or played)
        self.calls = 0  # seat calls in this log kept from the log resumed from (answered ones: ``recorded``)
        self.sent = 0  # seat calls this run answered (kept ones aside)

    @property
    def usage(self) -> tuple[int, int]:
        """Answers of this run that reported usage, and their completion tokens."""
        return self._recorded()[1]

    def add(self, sessions: int = 0, calls: int = 0, sent: int = 0) -> None:
        with self._lock:
            self.sessions += sessions
            self.calls += calls
            self.sent += sent

    def kept(self) -> dict[str, int]:
        """For the resume hint and the stop event: finished sessions and answered calls in the log."""
        with self._lock:
            return {"finished": self.sessions, "calls": self.calls + self._recorded()[0]}


class Shell:
    """One run's shell: ``name`` the eval (``econarena.beauty_L.dev.v0``), ``cell`` its cell's name,
    ``call_state`` the run's calls (which a signal stops, whose stop and counts the lines say)."""

    def __init__(self, name: str, cell: str, recorder: Any, resume_from: Optional[str],
                 call_state: CallState) -> None:
        self.name, self.cell, self.recorder, self.resume_from = name, cell, recorder, resume_from
        self.call_state = call_state
        self.counts = Counts(lambda: seat_calls_recorded(recorder))
        self.resumed_from: Optional[str] = None  # the log file the run resumes from (``resuming``)
        self.errors: list[tuple[int, str]] = []  # (session, error) of errored sessions; list.append is thread-safe
        self.sessions_done = 0  # read by the progress line
        self.bar: Any = None  # while evals' own progress bar shows, how to print a line above it
        self.running_batches: Callable[[], list[str]] = list  # the batch mode's batches still at the provider
        self.answered_by_batch: Callable[[], int] = int

    # ---- before the play ----

    def resuming(self, source: str, forged: Sequence[str], handed_out: int, to_play: int, replayed: int,
                 kept_runs: int, kept_calls: int) -> None:
        self.resumed_from = source
        if forged:  # named, and never carried: the copies hold what the runs score
            print(f"econarena: resume_from={self.resume_from}: the logged figures of {len(forged)} finished "
                  f"session(s) ({', '.join(forged[:5])}{', ...' if len(forged) > 5 else ''}) are not "
                  "what their runs score; the figures derived from the runs are carried instead",
                  file=sys.stderr, flush=True)
        logger.info(
            "resuming %s: %d finished session(s) kept, %d to play (%d of them cut off or errored there, with %d "
            "finished run(s) and %d other answered seat call(s) kept)", source, handed_out - to_play, to_play,
            replayed, kept_runs, kept_calls)

    def plan(self, estimate: Estimate, builtin_calls: int, progress_s: Optional[float] = None,
             builtin_only: bool = False) -> Progress:
        """Say the plan (and put it in the log, so that the report can set what was paid beside what
        was foreseen); the progress lines of the play to come. ``builtin_only``: built-in players play
        every seat, and the figures are what a model would send in their place."""
        also = f" (and {builtin_calls:,} of built-in players, which send no request)" if builtin_calls else ""
        if builtin_only:
            also = (": built-in players answer every call in process and send none of it (no request, no cost); "
                    "the figures are what a model would send in their seats")
        print(f"econarena: plan: {self.name}: {estimate.line()}{also}", file=sys.stderr, flush=True)
        # a resumed run names the log it resumed from: the report uses this one in its place, even
        # where the two differ in what names a player (the endpoint fixed before the resume)
        resumed = {RESUMED_FROM: self.resumed_from} if self.resumed_from else {}
        self.recorder.record_event(PLAN_EVENT, {**asdict(estimate), **resumed}, sample_id=PLAN_EVENT)

        def limits_line(rpm: float, tpm: float) -> Optional[str]:
            minutes = estimate.minutes_at(rpm, tpm)
            stated = " and ".join(f"{n:,.0f} {what}/min" for n, what in ((rpm, "requests"), (tpm, "tokens")) if n)
            return None if minutes is None else (
                f"econarena: the endpoint states {stated} (no other limit): this run needs at least "
                f"{minutes:.1f} min at those limits")

        def pace_line(served: float, per_s: float, elapsed_s: float) -> str:
            total_s = estimate.calls / per_s
            rate = f"{per_s:,.0f}" if per_s >= 10 else f"{per_s:.2g}"  # 250, not 2.5e+02; 0.21 for a slow model
            return (f"econarena: plan: {self.name}: the endpoint decodes about {served:.0f} call(s) at once, "
                    f"{rate} calls/s: this run needs about {duration(total_s)} at that pace "
                    f"({duration(max(0.0, total_s - elapsed_s))} more)")

        def usage_line() -> Optional[str]:
            """Once the first answers said what they cost: the completions the run will likely come to."""
            answers, tokens = self.counts.usage
            if answers < min(ANSWERS_FOR_EXPECTED, estimate.calls):
                return None
            return (f"econarena: plan: {self.name}: "
                    + expected_from_answers(answers, tokens, estimate.calls, estimate.completion_reserved))

        return Progress(self.name, estimate.sessions, estimate.calls + builtin_calls, lambda: self.sessions_done,
                        limits_line, self.call_state, pace_line=pace_line,
                        answered_by_batch=lambda: self.answered_by_batch(), usage_line=usage_line,
                        asked_s=progress_s)

    def batch_plan(self, estimate: Estimate, waves: Any) -> None:
        """Some player is in batch mode (``calls.batches.BatchRounds``): its plan, its batches in the lines."""
        print(f"econarena: plan: {self.name}: {estimate.batch_line()}", file=sys.stderr, flush=True)
        self.running_batches, self.answered_by_batch = waves.running, lambda: waves.answered

    def say(self, line: str) -> None:
        """A line of the play's, above evals' bar if it shows; one write (threads print at once)."""
        write_line(redact_text(line), self.bar)

    # ---- the play ----

    @contextmanager
    def playing(self, progress: Progress, threads: int) -> Iterator[None]:
        """Around the play: SIGTERM and SIGHUP end it as Ctrl-C does, the progress lines, evals' bar
        off (ours say more) or our lines above it, and ``threads`` sessions in play at once (0:
        evals' own ``EVALS_THREADS``). A stop keeps what was answered and says how to go on."""
        restore = signals.stop_on_signals()
        try:
            with bar_unless_asked() as self.bar:
                progress.writer = self.bar
                with progress, threads_for(threads):
                    yield
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: what was answered is kept; say how to go on
            word, code, said = signals.interruption(exc)
            self.call_state.stop(f"{word} ({said})", word)  # no new request goes out while the process winds down
            try:  # the calls on the wire are paid for: kept in the log, not paid again by the resume
                signals.grace(True)
                try:
                    self.call_state.wait_in_flight(STOP_GRACE_S)
                finally:
                    signals.grace(False)  # any further signal is passed over: the stop is one
            except KeyboardInterrupt:  # pressed again (even as the wait ended, before the line above): leave now
                pass
            self.record_stop(word, f"{word} ({said})")
            self._say_running_batches()
            hint_at_exit(self.recorder, f"stopped: {word} ({said}).", self.counts.kept)
            exit_status.fail(code)
            raise SystemExit(code) from None
        except BaseException as exc:
            durable()
            hint_at_exit(self.recorder, f"The run stopped early ({type(exc).__name__}).", self.counts.kept)
            raise
        finally:
            restore()

    def errored(self, index: int, error: str) -> str:
        """Session ``index`` errored: the error as the log may hold it (an endpoint's message may quote a key)."""
        error = redact_text(error)
        self.errors.append((index, error))
        return error

    def session_done(self, finished: bool) -> None:
        """A session is on disk (``finished``: not errored): the progress line and the counts see it."""
        self.sessions_done += 1
        if finished:
            self.counts.add(sessions=1)

    def record_stop(self, word: str, reason: str) -> None:
        """Say in the log why the run stopped, so a summary of it says so (``stopped: quota``)."""
        data = {"cell": self.cell, "stopped": word, "reason": redact_text(reason), **self.counts.kept()}
        self.recorder.record_event(STOP_EVENT, data, sample_id=STOP_EVENT)  # under a sample id of its own: this name
        durable(self.recorder)

    def _say_running_batches(self) -> None:
        running = self.running_batches()
        if running:
            print(f"econarena: {len(running)} batch(es) go on at the provider ({', '.join(running)}): the resume "
                  "takes their results instead of sending their calls again", file=sys.stderr, flush=True)

    # ---- after the play ----

    def ended(self, sessions: int, errored: int) -> None:
        """The run's last lines and exit status, once every session was handed back."""
        calls = self.call_state
        if calls.stop_reason:
            self.record_stop(calls.stop_word or "stopped", calls.stop_reason)
            self._say_running_batches()
        if errored:
            why = f"stopped: {calls.stop_reason}." if calls.stop_reason else f"{errored} session(s) errored."
            down = endpoints_down(calls)
            if down:  # the resume goes to the same endpoint: said before the command, not after it fails again
                why += (f" The endpoint is not answering ({down[0]}): fix it first (is the server up? are "
                        "OPENAI_BASE_URL / api_base right?), or the resume below fails the same way.")
            hint_at_exit(self.recorder, why, self.counts.kept)
            exit_status.fail(exit_status.STOPPED if calls.stop_reason else exit_status.ERRORED)
        # else said with the resume command, or by disk.on_write_error
        if calls.stop_reason and not errored and not disk.failed(self.recorder):
            print(f"econarena: stopped: {calls.stop_reason}", file=sys.stderr)
        if self.errors and not calls.stop_reason:  # a stop is said in its own one line, with the resume
            # Loud on purpose: an errored session is left out of the means, and a report with fewer
            # sessions than asked for must not pass for a clean one.
            first = min(self.errors)
            print(f"econarena: {len(self.errors)} of {sessions} session(s) of {self.name} errored "
                  f"and are left out of the means; first: session {first[0]}: {first[1]}", file=sys.stderr)
        if self.resume_from:  # evals' token totals, and the summary's seat calls, count the whole log
            held = self.counts.kept()["calls"]
            print(f"econarena: {self.name}: this run sent {self.counts.sent:,} seat call(s); its log holds {held:,}, "
                  f"{held - self.counts.sent:,} of them kept from {self.resume_from}", file=sys.stderr)
