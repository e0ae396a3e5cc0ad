"""A real language model plays: SmolLM2-135M-Instruct behind llama-cpp-python's server, set up,
served and played by ``scripts/local_model.sh`` exactly as a user runs it (docs/local-models.md).

One session of beauty_L in each condition (free text, and constrained decoding through
``response_format``), with 2 seats and 3 runs so the real-model part stays at a few minutes on
2 cores. The checks read the log only, and read each reply with the contract's answer rules
(docs/contract.md §5) written out here again: the eval's parser is what is under test.
"""
from __future__ import annotations

import html
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import browse, fragment

from econarena_evals.log.evallog import read_log

from conftest import ROOT, base_env

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

CELL, SEATS, RUNS, MAX_TOKENS = "beauty_L", 2, 3, 128
KEYS = ("understanding", "choice", "reason")
PLAYER = "econarena/chat:SmolLM2-135M-Instruct"  # the report's rows add the endpoint to it


def play(run_dir: Path) -> subprocess.CompletedProcess:
    # one llama.cpp thread: the suite runs other tests beside this one, and llama.cpp's threads wait
    # on each other, so a thread that loses its core stalls the other
    env = base_env(source=False) | {"VENV": str(Path(sys.executable).parent.parent), "RUN_DIR": str(run_dir),
                                    "LOCAL_MODEL_STATE": str(run_dir / "server"), "LOCAL_MODEL_THREADS": "1"}
    env["PATH"] = os.environ["PATH"]
    proc = subprocess.run(["bash", "scripts/local_model.sh", "play", "--cell", CELL, "--sessions", "1",
                           "--max-tokens", str(MAX_TOKENS), "--eval-params", f"seats={SEATS},runs={RUNS}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def sampling_events(path: Path) -> list[dict]:
    return [r["data"] for r in rows(path) if r.get("type") == "sampling"]


# ---- the contract's answer rules (docs/contract.md §5), independent of econarena_evals.core.answers ----

NUMBER_TEXT = re.compile(r"[ \t]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t]*\Z")


def top_level_objects(text: str) -> list[dict]:
    found, i, decoder = [], 0, json.JSONDecoder(strict=False)
    while True:
        i = text.find("{", i)
        if i < 0:
            return found
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(value, dict):
            found.append(value)
            i = end  # an object inside this one is not top-level
        else:
            i += 1


def contract_choice(reply, upper: float):
    """(valid, number or None) for one reply in a game whose range is [0, upper]."""
    if not isinstance(reply, str):
        return False, None
    text = re.sub(r"(?is)<think>.*?</think>", "", reply)
    text = re.split(r"(?i)<think>", text)[0]
    text = re.split(r"(?i)</think>", text)[-1]
    text = re.sub(r"```[A-Za-z0-9_+.-]*", "", text)
    if len(text) > 100_000:
        return False, None
    with_choice = [o for o in top_level_objects(text) if "choice" in o]
    if not with_choice:
        return False, None
    choice = with_choice[-1]["choice"]
    if isinstance(choice, bool):
        return False, None
    if isinstance(choice, str):
        if not NUMBER_TEXT.match(choice):
            return False, None
        choice = float(choice)
    if not isinstance(choice, (int, float)):
        return False, None
    try:
        number = float(choice)
    except OverflowError:
        return False, None
    if not math.isfinite(number):
        return False, None
    return 0 <= number <= upper, number


# ---- the checks ----

def logs(run_dir: Path) -> dict[str, Path]:
    return {c: run_dir / c / f"econarena.{CELL}.jsonl" for c in ("free", "constrained")}


def every_session_finished_with_one_sampling_event_per_seat_and_run(run_dir: Path, stderr: str) -> None:
    for condition, path in logs(run_dir).items():
        log = read_log(path)
        assert not log.problems, log.problems
        assert len(log.sessions) == 1
        for s in log.sessions:
            # finished, or errored as documented: null metrics and the error named
            assert s["errored"] is False or (s["error"] and s["eas"] is None), s
        events = sampling_events(path)
        seats = [(e["econarena"]["session"], e["econarena"]["run"], e["econarena"]["seat"]) for e in events]
        session = log.sessions[0]["session"]
        assert sorted(seats) == [(session, r, k) for r in range(RUNS) for k in range(1, SEATS + 1)], condition
        for e in events:
            usage = e["usage"]  # what llama.cpp's server counted, not an estimate
            assert usage["prompt_tokens"] > 100 and 0 <= usage["completion_tokens"] <= MAX_TOKENS, usage
            assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
            assert e["finish_reason"] in ("stop", "length"), e["finish_reason"]
            if e["finish_reason"] == "length":
                assert usage["completion_tokens"] == MAX_TOKENS
    assert "seat calls in" in stderr and "stopped the server" in stderr


def each_reply_is_judged_as_the_contract_says(run_dir: Path) -> None:
    for condition, path in logs(run_dir).items():
        log = read_log(path)
        seats = {(r["session"], r["run"], s["seat"]): (s, r["c_bar"]) for r in log.runs for s in r["seats"]}
        valid = cut_off = 0
        for e in sampling_events(path):
            tag = e["econarena"]
            scored, c_bar = seats[(tag["session"], tag["run"], tag["seat"])]
            ok, number = contract_choice(e["sampled"][0], c_bar)
            assert scored["valid"] == ok, (condition, e["sampled"][0], scored)
            if ok:
                assert scored["action"] == pytest.approx(number)
            valid += ok
            cut_off += e["finish_reason"] == "length"
        session = log.sessions[0]
        assert session["rule_following"] == pytest.approx(valid / (SEATS * RUNS))
        assert session["cut_off"] == cut_off


def constrained_replies_are_all_json_objects_with_the_answer_keys(run_dir: Path) -> None:
    replies = [e["sampled"][0] for e in sampling_events(logs(run_dir)["constrained"])]
    assert len(replies) == SEATS * RUNS
    for reply in replies:
        answer = json.loads(reply)
        assert isinstance(answer, dict) and set(answer) == set(KEYS), reply
        assert isinstance(answer["choice"], (int, float)) and not isinstance(answer["choice"], bool)


def the_report_page_shows_the_real_replies_in_chromium(run_dir: Path) -> None:
    page = run_dir / "report" / "report.html"
    data = json.loads((run_dir / "report" / "report.json").read_text())
    assert len(data["conditions"]) == 2
    legend = {c["label"]: c["condition"] for c in data["columns"]}  # a column's short label -> its whole condition
    [label] = [k for k in data["rule_breaks"] if k.split(" @ ")[0] == PLAYER]  # the row: the player @ its endpoint
    for cond in data["conditions"]:
        condition = "constrained" if "response_format" in legend[cond["column"]] else "free"
        path = logs(run_dir)[condition]
        session = read_log(path).sessions[0]["session"]
        events = sampling_events(path)
        c_bar = read_log(path).runs[0]["c_bar"]  # one per session in beauty_L
        verdicts = [(contract_choice(e["sampled"][0], c_bar)[0], e["finish_reason"]) for e in events]
        kinds = data["rule_breaks"][label][cond["column"]]
        # a cut-off reply is a rule break of that kind only when it holds no valid answer (contract §8)
        assert kinds["cut off at token limit"] == sum(1 for ok, finish in verdicts if not ok and finish == "length")
        assert sum(v for k, v in kinds.items() if k != "seats") == sum(1 for ok, _ in verdicts if not ok)
        first = next(e for e in events if (e["econarena"]["run"], e["econarena"]["seat"]) == (0, 1))
        dom = browse(page, fragment(col=cond["column"], player=cond["player"], session=session, run=1, seat=1))
        assert 'data-ready="1"' in dom
        detail = dom[dom.index('id="sb-detail"'):]
        shown = re.search(r'<pre class="reply" id="sb-reply">(.*?)</pre>', detail, re.S).group(1)
        assert html.unescape(shown) == (first["sampled"][0] or "(no reply on record)")
        prompt = html.unescape(re.search(r'<pre class="prompt" id="sb-prompt">(.*?)</pre>', detail, re.S).group(1))
        assert "You are Player 1" in prompt and f"This is run 1 of {RUNS}" in prompt


# ---- the test: one play, then each check (a module fixture would play once per xdist worker) ----

def test_a_real_model_plays_free_and_constrained_and_the_log_holds_what_it_wrote(tmp_path):
    proc = play(tmp_path)
    every_session_finished_with_one_sampling_event_per_seat_and_run(tmp_path, proc.stderr)
    each_reply_is_judged_as_the_contract_says(tmp_path)
    constrained_replies_are_all_json_objects_with_the_answer_keys(tmp_path)
    the_report_page_shows_the_real_replies_in_chromium(tmp_path)
