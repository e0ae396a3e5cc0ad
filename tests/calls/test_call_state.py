"""Each run owns its call state (``calls.state.CallState``) and hands it down: no instance of it is
process-wide, two runs in one process share nothing of it, and the run's options are read once."""
from __future__ import annotations

import ast
import threading

from econarena_evals.calls import slots
from econarena_evals.calls.dispatch import call_all
from econarena_evals.calls.errors import RunStopped
from econarena_evals.calls.lanes import lane_for
from econarena_evals.calls.policy import CallPolicy
from econarena_evals.calls.slots import Workers
from econarena_evals.calls.state import CallState

from conftest import ROOT

FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002)


def made_outside_a_function(path, root=ROOT) -> list[str]:
    """Where ``path`` makes a ``CallState`` anywhere but in a function's body (at import: a module's
    or a class's attribute, a default argument), or names ``CALL_STATE``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = fn.body if isinstance(fn.body, list) else [fn.body]
            inside.update(id(n) for stmt in body for n in ast.walk(stmt))
    found = []
    where = path.relative_to(root)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in inside:
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called == "CallState":
                found.append(f"{where}:{node.lineno} makes a CallState at import")
        name = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", None)
        if isinstance(node, (ast.Name, ast.Attribute, ast.alias)) and name == "CALL_STATE":
            found.append(f"{where}:{node.lineno} names CALL_STATE")
    return found


def test_no_call_state_is_made_at_import_anywhere_in_the_package():
    found = [f for path in sorted((ROOT / "econarena_evals").rglob("*.py")) for f in made_outside_a_function(path)]
    assert found == []


def test_the_scan_finds_a_process_wide_call_state(tmp_path):
    """The test above would see one: at module level, as a class attribute, as a default argument."""
    module = tmp_path / "module.py"
    module.write_text("from x import CallState\nCALL_STATE = CallState()\n"
                      "class Run:\n    calls = CallState()\n"
                      "def play(calls=CallState()):\n    return CallState()\n", encoding="utf-8")
    assert made_outside_a_function(module, tmp_path) == [
        "module.py:2 names CALL_STATE", "module.py:2 makes a CallState at import",
        "module.py:4 makes a CallState at import", "module.py:5 makes a CallState at import"]


def test_stopping_one_run_s_calls_stops_none_of_another_s():
    first, second = CallState(CallPolicy(**FAST)), CallState(CallPolicy(**FAST))
    key = ("https://api.example/v1", "keyhash", "gpt-x")  # the same endpoint, key and model in both runs
    assert lane_for(first, key) is not lane_for(second, key)
    first.stop("quota: the key's credit is used up", "quota")
    [stopped] = call_all(first, [(object(), lambda: "never sent")], [key])
    assert isinstance(stopped, RunStopped) and "quota" in str(stopped)
    assert call_all(second, [(object(), lambda: "answered")], [key]) == ["answered"]
    assert second.stop_reason is None and not second.stopped.is_set()
    assert (first.answered, second.answered) == (0, 1)


def test_a_call_waiting_in_one_run_s_lane_is_not_woken_by_another_run_s_stop():
    first, second = CallState(), CallState()
    key = ("https://api.example/v1", "keyhash", "gpt-x")
    waiting = lane_for(second, key)
    waiting.pace.paused_until = float("inf")  # a pause no answer ends
    got = {}
    cancelled = threading.Event()
    waiter = threading.Thread(target=lambda: got.update(ticket=waiting.acquire(1, cancelled.is_set)), daemon=True)
    waiter.start()
    first.stop("interrupted (Ctrl-C)", "interrupted")
    waiter.join(0.5)
    assert waiter.is_alive() and "ticket" not in got  # still waiting: the other run's stop is not its own
    second.stop("interrupted (Ctrl-C)", "interrupted")
    waiter.join(30)  # liveness: its own run's stop ends the wait
    assert got == {"ticket": False}


def test_the_run_s_options_are_read_once_into_its_lanes():
    """The patience is the run's, set when its lane is made (not copied into the lane on every try):
    another run in the same process with other options changes it not."""
    patient = CallState(CallPolicy(rate_limit_patience_s=900.0))
    hasty = CallState(CallPolicy(rate_limit_patience_s=5.0))
    key = ("https://api.example/v1", "keyhash", "gpt-x")
    assert call_all(hasty, [(object(), lambda: "ok")], [key]) == ["ok"]
    assert lane_for(patient, key).pace.patience_s == 900.0 and lane_for(hasty, key).pace.patience_s == 5.0
    assert call_all(patient, [(object(), lambda: "ok")], [key]) == ["ok"]
    assert lane_for(hasty, key).pace.patience_s == 5.0  # a call of the patient run did not overwrite it


def test_a_worker_left_idle_ends_and_a_later_call_gets_a_new_one(monkeypatch):
    """The workers of a run that is over do not stay for the rest of the process."""
    monkeypatch.setattr(slots, "IDLE_S", 0.05)
    workers, ran = Workers(), []
    done = threading.Event()

    def job():
        ran.append(threading.current_thread())
        done.set()

    workers.submit(job)
    assert done.wait(30)
    ran[0].join(30)  # liveness: an idle worker ends
    assert not ran[0].is_alive()
    done.clear()
    workers.submit(job)
    assert done.wait(30) and len(ran) == 2 and ran[1] is not ran[0]
