"""The verifiers front end's record of answered seat calls (``on_verifiers.journal``): a resume takes the
calls of the episodes vf-eval does not keep, each once, and only for the identical request; a fresh
run starts afresh; a torn or hostile line is named, skipped and confined to itself."""
from __future__ import annotations

import json

from econarena_evals.log.jsonl import MAX_LINE_BYTES
from econarena_evals.on_verifiers.journal import EPISODE_KEY, FILE, TRACES, Journal, request_key

ANSWER = {"text": '{"choice": 33}', "finish_reason": "stop", "model": "m", "usage": {"prompt_tokens": 9,
                                                                                    "completion_tokens": 3}}


def key(run: int, seat: int = 1, **over) -> str:
    return request_key(**{"cell": "beauty_L", "split": "dev", "session": 3, "run": run, "seat": seat, "model": "m",
                          "base_url": "http://127.0.0.1:9/v1", "messages": [{"role": "user", "content": "p"}],
                          "sampling": {"temperature": 0.7, "seed": 5}, **over})


def episode_line(journal_episode: str, ok: bool = True) -> bytes:
    """A line of vf-eval's traces.jsonl as the front end's traces fill it (its seats' info)."""
    traces = [{"info": {"econarena": {"seat": s, EPISODE_KEY: journal_episode}}} for s in (1, 2)]
    return json.dumps({"id": "x", "ok": ok, "traces": traces}).encode() + b"\n"


def test_a_resume_takes_the_unfinished_episodes_calls_each_once(tmp_path):
    journal = Journal(tmp_path, resume=False)
    journal.record("killed", key(0), ANSWER)
    journal.record("killed", key(1), {**ANSWER, "text": "second"})
    journal.record("done", key(0), {**ANSWER, "text": "a finished episode's"})
    journal.record("errored", key(0), {**ANSWER, "text": "an errored episode's"})
    journal.close()
    # vf-eval keeps "done" (a session played again, -r above 1, asks afresh); "errored" it plays again
    (tmp_path / TRACES).write_bytes(episode_line("done") + episode_line("errored", ok=False) + b"{torn")
    again = Journal(tmp_path, resume=True)
    assert again.take(key(0)) == ANSWER
    assert again.take(key(0))["text"] == "an errored episode's"
    assert again.take(key(0)) is None  # each answers once: a further identical request asks the model
    assert again.take(key(1))["text"] == "second" and again.reused == 3
    # another request (another seed, seat or model) is never answered from it
    assert again.take(key(1, seat=2)) is None and again.take(key(1, model="other")) is None


def test_a_fresh_run_starts_afresh(tmp_path):
    journal = Journal(tmp_path, resume=False)
    journal.record("killed", key(0), ANSWER)
    journal.close()
    Journal(tmp_path, resume=False).close()
    assert (tmp_path / FILE).read_bytes() == b""
    assert Journal(tmp_path, resume=True).take(key(0)) is None


def test_torn_and_hostile_lines_are_named_and_skipped(tmp_path, capsys):
    good = json.dumps({"key": key(0), "episode": "e", **ANSWER})
    bad = [b"{not json", b"[1]", json.dumps({"key": key(1), "episode": "e", "text": 5}).encode(),
           json.dumps({"key": key(2), "episode": "e", "text": "t", "usage": {"prompt_tokens": "9"}}).encode(),
           b'{"x": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}']
    torn = json.dumps({"key": key(3), "episode": "e", **ANSWER})[:40].encode()  # a kill mid-line: no newline
    (tmp_path / FILE).write_bytes(b"\n".join([*bad, good.encode(), torn]))
    journal = Journal(tmp_path, resume=True)
    said = capsys.readouterr().err
    assert "line 1 is no recorded call" in said and "line 3 is" in said and "6 lines in all" in said, said
    assert journal.take(key(0)) == ANSWER
    assert all(journal.take(key(n)) is None for n in (1, 2, 3))
    # the next record starts on a line of its own, so the torn one does not swallow it
    journal.record("e2", key(4), ANSWER)
    journal.close()
    assert Journal(tmp_path, resume=True).take(key(4)) == ANSWER
