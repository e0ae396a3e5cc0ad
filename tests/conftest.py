from __future__ import annotations

import functools
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Optional

import pytest
from evals.base import RunSpec
from evals.record import DummyRecorder
from hypothesis import settings

# Property tests check invariants, not speed: a slow CI machine must not turn them into failures.
settings.register_profile("econarena", deadline=None, print_blob=True)
settings.load_profile("econarena")

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "registry"
# eval sets for tests only (econarena-two: two cells for econarena-run's own behaviour), given with
# --registry_path next to the packaged registry
TEST_REGISTRY = ROOT / "tests" / "fixtures" / "registry"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from front_ends import ctrl_c_reaches_children  # noqa: E402
from openai_server import OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402

# a line per finished test file under --file-progress (scripts/test.sh passes it): tests/file_progress.py
pytest_plugins = ["file_progress"]


def pytest_configure(config) -> None:
    ctrl_c_reaches_children()  # a test's Ctrl-C reaches what it started, however the suite was started

CELLS = ("beauty_L", "beauty_M", "beauty_H", "beauty_hist", "auction_L")

# What a test (or a fixture it uses) does when it starts a process or a server: such a test must
# carry the e2e marker (``pytestmark = pytest.mark.e2e`` or ``@pytest.mark.e2e``), so that
# `python -m pytest -m "not e2e"` is the fast inner loop. The marker is the test's own word; this
# look at the source only catches a test that forgot it (collection fails, naming it).
_STARTS_PROCESSES = re.compile(r"subprocess\.|(?<!\w)(?:cli|OpenAIServer|run_cli|oaieval|oaievalset_logs|Popen|limited)\(")


def _ours(func) -> bool:
    try:
        return Path(inspect.getfile(func)).resolve().is_relative_to(ROOT / "tests")
    except (OSError, TypeError):
        return False


@functools.lru_cache(maxsize=None)  # a fixture is looked at once, not once for each test that uses it
def _starts_processes(func, depth: int = 3) -> bool:
    """True if ``func``, or a function of its module that it calls by name (a few calls deep), starts one."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return False
    if _STARTS_PROCESSES.search(source):
        return True
    if depth == 0:
        return False
    scope = getattr(inspect.getmodule(func), "__dict__", {})
    # only this repository's functions: a library's (hypothesis's `given`) says nothing about the
    # test, and its source differs between Python versions (3.9's matched, 3.11's did not)
    called = {name for name in scope if inspect.isfunction(scope[name]) and _ours(scope[name])
              and re.search(rf"(?<![\w.]){re.escape(name)}\(", source)}
    return any(_starts_processes(scope[name], depth - 1) for name in called if scope[name] is not func)


def pytest_collection_modifyitems(items) -> None:
    unmarked = []
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            continue
        funcs = [getattr(item, "function", None)] + [
            d.func for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs]
        if any(_starts_processes(f) for f in funcs if f is not None):
            unmarked.append(item.nodeid)
    if unmarked:
        raise pytest.UsageError("these tests start a process or a server but are not marked e2e "
                                "(add @pytest.mark.e2e):\n  " + "\n  ".join(unmarked))


def pytest_xdist_make_scheduler(config, log):
    """scripts/test.sh runs ``pytest -n 3 --dist loadfile``: each test file goes to one worker, so a
    module-scoped fixture (the logs a report test reads, an editable venv) is made once, not once per
    worker (sent test by test, tests/report/test_report.py and test_report_html.py took 128 CPU s,
    by file 66). Files are handed out the top folder's first (the main job, the real model, whole
    eval sets: a long test that starts last is the suite's tail, with the other workers idle), then
    the largest first. Which worker runs a test, and when: nothing a test checks."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LongestFirst(LoadFileScheduling):
        ordered = False

        def _assign_work_unit(self, node):  # first called once every file is in the queue
            if not self.ordered:
                units = sorted(self.workqueue.items(), key=lambda unit: ("/" in unit[0][len("tests/"):],
                                                                        -len(unit[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


def cli(name: str) -> str:
    """The console script next to this interpreter (the venv the tests run in)."""
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found, f"{name} not found: install the project as the README says"
    return found


# What a user's shell may hold that changes a run: the tests run the same with or without them.
USER_SETTINGS = ("OPENAI_", "AZURE_OPENAI_", "EVALS_", "ECONARENA_")


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch) -> None:
    """In-process tests see none of the user's keys, endpoints or settings (child processes get
    base_env(), which leaves them out too)."""
    for name in list(os.environ):
        if name.startswith(USER_SETTINGS):
            monkeypatch.delenv(name)


EVALS_LOGS = Path("/tmp/evallogs")  # where evals writes a log given no --record_path (oaievalset's, always)
# the folder evals makes there of a run id when the fn's name holds a "/" (econarena/nash)
_EVALS_RUN_FOLDER = re.compile(r"\d{12}[A-Z0-9]{8}_[^/]+\Z")


def take_evals_log(path: Path, dest: Optional[Path] = None) -> None:
    """A log a test made in ``EVALS_LOGS`` moved to ``dest`` (None: removed), and the run's folder
    evals made for it with it once empty: a test leaves a user's /tmp/evallogs as it found it."""
    if dest is None:
        path.unlink(missing_ok=True)
    else:
        shutil.move(str(path), dest)  # /tmp/evallogs may be on another file system
    folder = path.parent
    if folder.parent == EVALS_LOGS and _EVALS_RUN_FOLDER.match(folder.name):
        try:
            folder.rmdir()
        except OSError:  # not empty: another log of that run, not this test's to remove
            pass


def base_env(source: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(USER_SETTINGS)}
    if source:  # subprocesses run this checkout's code, not a possibly stale installed copy
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    else:
        env.pop("PYTHONPATH", None)
    env["EVALS_SHOW_EVAL_PROGRESS"] = ""
    # oaievalset starts `oaieval` from PATH: the venv the tests run in comes first
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


ERRORED = 3  # oaieval's exit status when a session errored (econarena_evals.integration.status)


def dead_endpoint(env: dict[str, str]) -> dict[str, str]:
    """``env`` with evals' OpenAI fns pointed at a port nothing listens on, with a key: every
    session errors after its retries (no key at all is refused before the run instead)."""
    return {**env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test"}


def run_cli(args: list[str], env: dict[str, str], cwd: Optional[Path] = None, timeout: float = 300,
            returncode: "int | tuple[int, ...]" = 0):
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    allowed = returncode if isinstance(returncode, tuple) else (returncode,)
    assert proc.returncode in allowed, f"{' '.join(args)} exited {proc.returncode}\n{proc.stderr[-4000:]}"
    return proc


def users_fn(tmp_path: Path, name: str, call: str, reply: str) -> tuple[Path, dict[str, str]]:
    """A completion fn of the user's, ``name``, whose ``__call__`` has the signature ``call`` and
    answers ``reply``, registered in a registry of its own: (that registry, an env that imports it)."""
    module = f"{name}_fn"
    (tmp_path / f"{module}.py").write_text(
        "from evals.api import CompletionFn, CompletionResult\n"
        f"class R(CompletionResult):\n    def get_completions(self):\n        return [{reply!r}]\n"
        "class Fn(CompletionFn):\n    def __init__(self, **kwargs):\n        pass\n"
        f"    def __call__({call}):\n        return R()\n")
    registry = tmp_path / "registry"
    (registry / "completion_fns").mkdir(parents=True, exist_ok=True)
    (registry / "completion_fns" / f"{name}.yaml").write_text(f"{name}:\n  class: {module}:Fn\n")
    env = base_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    return registry, env


@pytest.fixture(scope="session")
def server() -> Iterator[OpenAIServer]:
    srv = OpenAIServer(scripted, models=("gpt-4", "my-local-model")).start()
    yield srv
    srv.stop()


@pytest.fixture
def model_env(server: OpenAIServer) -> dict[str, str]:
    env = base_env()
    env["OPENAI_BASE_URL"] = server.base_url
    env["OPENAI_API_KEY"] = "sk-test-local"
    return env


@pytest.fixture
def recorder():
    """A default recorder: the built-in players record a sampling event for every answer."""
    rec = DummyRecorder(RunSpec(completion_fns=["x"], eval_name="e.s", base_eval="e", split="s",
                                run_config={}, created_by=""), log=False)
    with rec.as_default_recorder("e.s.0"):
        yield rec
