"""A pytest plugin: a line per finished test file, and a line after each quiet stretch, so a long run
(``scripts/test.sh``: ``-q``, three workers) says more than pytest's dots, which stopped for minutes
while a long file ran.

    python -m pytest --file-progress [--file-progress-every SECONDS] ...

prints, as each file's last test ends (under ``pytest-xdist`` too, in the controller):

    progress: tests/run/test_resume.py done (10 tests, 0 failed): 412/815 tests, 31/80 files, 4m12s

and, after ``--file-progress-every`` seconds (default 10) without such a line, what is under way:

    progress: 4m42s: 412/815 tests, 31/80 files; running tests/test_local_model.py (3m05s), ...

``tests/conftest.py`` loads it; ``-p file_progress`` loads it elsewhere (``tests`` on ``sys.path``).
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Optional

import pytest

DEFAULT_EVERY_S = 10.0  # "nothing silent for more than about 10 s"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("file-progress")
    group.addoption("--file-progress", action="store_true", default=False,
                    help="a line per finished test file (tests, files and time so far) and one after each "
                         "quiet stretch naming the files under way")
    group.addoption("--file-progress-every", type=float, default=DEFAULT_EVERY_S, metavar="SECONDS",
                    help=f"the longest stretch without a progress line (default {DEFAULT_EVERY_S:g})")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("file_progress") or hasattr(config, "workerinput"):  # an xdist worker says nothing
        return
    progress = FileProgress(config)
    config.pluginmanager.register(progress, "file-progress")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistCollection(progress), "file-progress-xdist")


def elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s"


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class FileProgress:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.every_s = max(0.05, float(config.getoption("file_progress_every")))
        self.start = time.monotonic()
        self.last_said = self.start
        self.lock = threading.Lock()  # one line at a time: the quiet-stretch line comes from a thread
        self.totals: dict[str, int] = {}  # file -> its tests, once collected
        self.done: dict[str, int] = {}  # file -> its tests ended
        self.failed: dict[str, int] = {}
        self.started: dict[str, float] = {}  # file -> when its first test started
        self.stop = threading.Event()
        self.thread: Optional[threading.Thread] = None

    # ---- what was collected ----

    def collected(self, nodeids: list[str]) -> None:
        with self.lock:
            if self.totals:
                return  # each xdist worker collects the same tests: the first tells
            for nodeid in nodeids:
                self.totals[file_of(nodeid)] = self.totals.get(file_of(nodeid), 0) + 1

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:  # in-process: the items; under xdist the controller holds none
            self.collected([item.nodeid for item in session.items])

    # ---- the run ----

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.thread = threading.Thread(target=self._quiet_lines, daemon=True, name="file-progress")
        self.thread.start()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(5)

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        with self.lock:
            self.started.setdefault(file_of(nodeid), time.monotonic())

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = file_of(report.nodeid)
        with self.lock:
            if report.failed:
                self.failed[name] = self.failed.get(name, 0) + 1
            if report.when != "teardown":
                return
            self.done[name] = self.done.get(name, 0) + 1
            finished = self.totals.get(name) == self.done[name]
            line = None
            if finished:
                tests, files = self._counts()
                line = (f"progress: {name} done ({self.done[name]} tests, {self.failed.get(name, 0)} failed): "
                        f"{tests}, {files}, {elapsed(time.monotonic() - self.start)}")
        if line:
            self._say(line)

    # ---- saying it ----

    def _counts(self) -> tuple[str, str]:
        """'412/815 tests', '31/80 files' (under self.lock)."""
        done_files = sum(1 for name, n in self.done.items() if self.totals.get(name) == n)
        total = sum(self.totals.values())
        if not total:
            return "collecting", "no file done"
        return f"{sum(self.done.values())}/{total} tests", f"{done_files}/{len(self.totals)} files"

    def _quiet_lines(self) -> None:
        while not self.stop.wait(min(self.every_s, 1.0)):
            now = time.monotonic()
            with self.lock:
                total = sum(self.totals.values())
                if now - self.last_said < self.every_s or (total and sum(self.done.values()) >= total):
                    continue  # said lately, or every test is done (the workers are shutting down)
                tests, files = self._counts()
                running = sorted((start, name) for name, start in self.started.items()
                                 if self.done.get(name, 0) < self.totals.get(name, 1))
                under_way = ", ".join(f"{name} ({elapsed(now - start)})" for start, name in running[:4])
                line = (f"progress: {elapsed(now - self.start)}: {tests}, {files}"
                        + (f"; running {under_way}" if under_way else ""))
            self._say(line)

    def _say(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        with self.lock:
            # in-process, a test's output is being captured: the line goes to the terminal, not into it
            quiet = capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext()
            with quiet:
                if reporter is not None:
                    if reporter._tw.width_of_current_line:  # after a row of dots: a line of its own
                        reporter._tw.line()
                    reporter.write_line(line)
                    reporter.flush()
            self.last_said = time.monotonic()


class _XdistCollection:
    """Under pytest-xdist the controller collects nothing itself: a worker's collection says the totals."""

    def __init__(self, progress: FileProgress) -> None:
        self.progress = progress

    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self.progress.collected(list(ids))
