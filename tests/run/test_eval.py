"""The Eval class in-process, with completion fns that misbehave in the ways real endpoints do."""
from __future__ import annotations

import threading

from evals.api import CompletionResult
from evals.base import RunSpec
from evals.record import LocalRecorder
from evals.registry import Registry

from econarena_evals.log.evallog import read_log
from econarena_evals.run.eval import EconArena

from conftest import REGISTRY


class Reply(CompletionResult):
    def __init__(self, text):
        self.text = text

    def get_completions(self):
        return [self.text]


class Garbage:
    def __call__(self, prompt, **kwargs):
        return Reply("\x00\ufffd{{{ not json ]] choice: lots" * 3)


class FailsInSession:
    """Raises a non-transient error for every seat of one session (the one with this c_bar)."""

    def __init__(self, c_bar):
        self.c_bar, self.lock = c_bar, threading.Lock()

    def __call__(self, prompt, **kwargs):
        if f"between 0 and {self.c_bar}," in prompt[-1]["content"] and "run 3 of" in prompt[-1]["content"]:
            raise ValueError("endpoint said no")
        return Reply('{"choice": 0}')


def run_eval(fns, names, tmp_path, cell="beauty_L", **args):
    registry = Registry()
    registry.add_registry_paths([REGISTRY])
    spec = registry.get_eval(f"econarena.{cell}")
    spec.args.update(args)
    log = tmp_path / "log.jsonl"
    run_spec = RunSpec(completion_fns=names, eval_name=spec.key, base_eval="econarena", split=cell,
                       run_config={}, created_by="")
    recorder = LocalRecorder(str(log), run_spec)
    ev = EconArena(completion_fns=fns, eval_registry_path=spec.registry_path, name=spec.key, seed=1, **spec.args)
    report = ev.run(recorder)
    recorder.record_final_report(report)
    recorder.flush_events()
    return report, read_log(log)


def test_garbage_answers_are_scored_rule_breaks(tmp_path):
    report, log = run_eval([Garbage()], ["garbage"], tmp_path)
    assert report["rule_following"] == 0 and report["ne_proximity"] == 0 and report["rationality"] == 0
    assert report["sessions"] == 20 and report["errored_sessions"] == 0
    assert all(s["action"] is None and not s["valid"] for r in log.runs for s in r["seats"])


def test_a_failing_session_is_recorded_and_the_others_go_on(tmp_path):
    report, log = run_eval([FailsInSession(c_bar=25)], ["flaky"], tmp_path)  # session 0 has c_bar 25
    assert report["errored_sessions"] == 1 and report["sessions"] == 19
    assert report["eas"] == 0.84
    failed = [s for s in log.sessions if s["errored"]]
    assert len(failed) == 1 and "endpoint said no" in failed[0]["error"] and failed[0]["eas"] is None
    # the runs that finished before the failure stay in the log; runs without history all go at once
    assert sorted(r["run"] for r in log.runs if r["session"] == failed[0]["session"]) == [0, 1, 3, 4, 5, 6, 7, 8, 9]
    _, rescored = log.rescore()
    assert rescored == {k: report[k] for k in rescored}


def test_history_session_stops_at_the_failing_run(tmp_path):
    report, log = run_eval([FailsInSession(c_bar=12)], ["flaky"], tmp_path, cell="beauty_hist")
    first = next(s for s in log.sessions if s["errored"])
    assert sorted(r["run"] for r in log.runs if r["session"] == first["session"]) == [0, 1]
    assert report["errored_sessions"] == 1


def test_arena_scores_each_player_under_its_own_name(tmp_path):
    from econarena_evals.fns.players import NashPlayer, RandomPlayer

    report, log = run_eval([RandomPlayer(), NashPlayer()], ["econarena/random", "econarena/nash"], tmp_path)
    assert "eas/econarena/nash" in report and report["rule_following/econarena/nash"] == 1
    assert {s["player"] for r in log.runs for s in r["seats"]} == {"econarena/random", "econarena/nash"}
    _, rescored = log.rescore()
    assert rescored == {k: report[k] for k in rescored}


def test_a_run_leaves_no_thread_that_wakes_while_the_process_exits(tmp_path, monkeypatch):
    """A thread still waking up now and then when the interpreter shuts down may run while it does
    (tqdm wakes its monitor from an exit handler): every process of the fast lane ended with tqdm's
    monitor alive, started by evals' disabled progress bar and never stopped. After a run, only the
    seat calls' workers remain, idle (they wait on a queue and are reused by the next run).

    Only the run's threads count: those started from this test's thread while it runs, or from a
    thread so started. Another test in this process may have left threads that start threads of
    their own meanwhile (a server answering a client still running, a tqdm bar still open with its
    monitor): counting every thread new or named alike made this test fail after other files in
    one worker, and pass alone."""
    runs = {threading.current_thread()}
    started: list[threading.Thread] = []
    start = threading.Thread.start

    def start_and_note(thread):
        if threading.current_thread() in runs:  # a set's add is atomic: the run's threads call this too
            runs.add(thread)
            started.append(thread)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", start_and_note)
    run_eval([Garbage()], ["garbage"], tmp_path)
    monkeypatch.undo()
    assert any(t.name != "econarena-seat-call" for t in started)  # evals' pool's, at least: the run's are seen
    for t in started:  # evals' ThreadPool is terminated, not joined: its workers end on their own, later on a busy machine
        if t.name != "econarena-seat-call":
            t.join(30)  # a bound, not a figure: a thread still alive after it is one that stays
    left = [(t.name, t.daemon) for t in started if t.is_alive() and t.name != "econarena-seat-call"]
    assert left == []
