"""``econarena-serve``: a built-in player as an OpenAI-compatible endpoint on 127.0.0.1, played by the
real openai client; its answers are the player's, a bad request is a 400 that says why."""
from __future__ import annotations

import http.client
import json
import random
import signal
import subprocess

import openai
import pytest

from econarena_evals.core.prompts import prompt_text
from econarena_evals.games import cell as make_cell
from econarena_evals.games import draw_session
from econarena_evals.games.builtin import LevelKPlayer, NashPlayer
from econarena_evals.score.table import Table

from conftest import cli

pytestmark = pytest.mark.e2e

CELL = make_cell({"game": "beauty", "c_bar_min": 10, "c_bar_max": 100})
# seat 2's prompt in the first run of a beauty_L session, as the table writes it
PROMPT = Table("beauty_L", CELL, draw_session(random.Random(3), 3, CELL), ["p"] * 5, 8).request(0, 2).prompt


@pytest.fixture
def serve():
    started = []

    def start(*args: str) -> str:
        proc = subprocess.Popen([cli("econarena-serve"), *args, "--port", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        started.append(proc)
        line = proc.stdout.readline()
        assert " at http://127.0.0.1:" in line, line + proc.stderr.read()
        return line.split(" at ", 1)[1].split()[0]

    yield start
    for proc in started:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # never left running beyond the test
            proc.kill()
            code = proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        assert code == 0, f"econarena-serve did not stop on Ctrl-C (exit {code})"


@pytest.mark.parametrize("name, player", [("nash", NashPlayer()), ("econarena/level2", LevelKPlayer(k=2))])
def test_the_served_player_answers_as_the_player_does(serve, name, player):
    client = openai.OpenAI(base_url=serve(name), api_key="none", max_retries=0)
    try:
        answer = client.chat.completions.create(model="any", messages=PROMPT, seed=7)
        models = [m.id for m in client.models.list()]
    finally:
        client.close()
    assert answer.choices[0].message.content == player.reply(prompt_text(PROMPT), 7)
    assert answer.choices[0].finish_reason == "stop" and answer.usage.total_tokens > 0
    assert models == ["econarena/" + name.split("/")[-1]]


def test_a_bad_request_is_a_400_that_says_why(serve):
    base = serve("nash")
    host, port = base.split("//")[1].split("/")[0].split(":")
    for body, said in ((b"{not json", "not a chat completion request"),
                       (json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
                        "not an EconArena prompt"),
                       (json.dumps({"messages": "hi"}).encode(), "'messages' must be a non-empty list"),
                       (json.dumps({"messages": PROMPT, "seed": "x"}).encode(), "'seed' must be an integer")):
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        text = response.read().decode()
        conn.close()
        assert response.status == 400 and said in text, text


def test_an_unknown_player_is_refused_in_one_line():
    done = subprocess.run([cli("econarena-serve"), "gpt-4o", "--port", "0"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "econarena/gpt-4o is no built-in player" in done.stderr


def test_sigterm_stops_it_cleanly():
    """A shell's background job ignores SIGINT: SIGTERM stops the server too, exit 0."""
    proc = subprocess.Popen([cli("econarena-serve"), "nash", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert " at http://127.0.0.1:" in proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    proc.stdout.close()
    proc.stderr.close()


def test_its_help_says_what_it_is_in_whole_sentences():
    """--help's description is the module's first paragraph, whole (it stopped mid-sentence: "... as an")."""
    done = subprocess.run([cli("econarena-serve"), "--help"], capture_output=True, text=True, timeout=60)
    said = " ".join(done.stdout.split("\n\n")[1].split())
    assert done.returncode == 0 and said.endswith("plays it with no key and no network."), done.stdout
