"""A completion arg no fn and no ``create()`` takes is refused before the first call:
one line naming it and the closest names, exit status 2, not one request at the server; a
right but unusual arg still reaches the server."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from econarena_evals.core.closest import closest, with_closest
from econarena_evals.fns.completion_args import keyword_names, request_options, unknown_args
from econarena_evals.log.format import PLAYERS_EVENT

from conftest import REGISTRY, base_env, cli


def posts(server) -> int:
    """Requests that would be paid for: every completion POST, chat or legacy."""
    return sum(p.endswith("completions") for p in server.paths())


def oaieval(fn: str, env: dict, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([cli("oaieval"), fn, "econarena.beauty_L", "--registry_path", str(REGISTRY),
                           "--record_path", str(tmp_path / "log.jsonl"), "--max_samples", "1", *extra],
                          env=env, capture_output=True, text=True, timeout=120)


def said(proc: subprocess.CompletedProcess) -> list[str]:
    """stderr without evals' own timestamped log lines."""
    return [line for line in proc.stderr.splitlines() if not line.startswith("[")]


@pytest.mark.parametrize("fn,arg,line", [
    # econarena/chat: the openai client's create() would raise on every call (exit 3 before)
    ("econarena/chat:gpt-4", "temprature=0",
     "econarena: unknown completion arg temprature (closest: temperature): neither econarena/chat nor the "
     "openai client's chat.completions.create() takes it; a field only your server knows goes in extra_body"),
    ("econarena/chat:gpt-4", "api_bse=http://127.0.0.1:9/v1", "unknown completion arg api_bse (closest: api_base"),
    ("econarena/chat:gpt-4", "top_k=40", "unknown completion arg top_k (closest: top_p"),  # vLLM's: extra_body
    # evals' chat fn: its constructor refuses the arg
    ("gpt-4", "temprature=0", "econarena: completion fn gpt-4 does not take the completion arg temprature "
     "(closest: temperature); it takes api_base, api_key, extra_options, model, n_ctx, and request options "
     "only inside extra_options"),
    # evals' legacy fn (a model the endpoint lists): its constructor dropped the arg without a word
    ("my-local-model", "temprature=0",
     "econarena: completion fn my-local-model does not take the completion arg temprature (closest: temperature)"),
])
@pytest.mark.e2e
def test_a_mistyped_completion_arg_is_one_line_naming_the_closest_and_no_request(fn, arg, line, model_env, server,
                                                                                tmp_path):
    before = posts(server)
    proc = oaieval(fn, model_env, tmp_path, "--completion_args", arg)
    assert proc.returncode == 2, proc.stderr[-3000:]  # exit_status.REFUSED
    assert len(said(proc)) == 1 and said(proc)[0].startswith("econarena: ") and line in said(proc)[0], said(proc)
    assert "To resume" not in proc.stderr and "Traceback" not in proc.stderr
    assert posts(server) == before


@pytest.mark.parametrize("fns,arg,line", [
    # a built-in player took any arg in silence (docs/configuration.md said so)
    ("econarena/nash", "temprature=0.5", "econarena: unknown completion arg temprature (closest: temperature): "
     "econarena/nash is a built-in player, which takes no completion arg and sends no request"),
    ("econarena/human", "seed=3", "econarena: unknown completion arg seed: econarena/human is a built-in player, "
     "which takes no completion arg and sends no request, so seed would change nothing (a chat model's: "
     "econarena/chat); its draws follow the eval's seed (oaieval --seed)"),
    ("econarena/level1", "kk=2", "econarena: unknown completion arg kk (closest: k): econarena/level1 is a built-in "
     "player, which takes only k and sends no request"),
    # evals gives every player the same args: one none of them takes is refused
    ("econarena/noisy-0.1,econarena/nash", "temperature=0", "econarena: unknown completion arg temperature: this "
     "run's players (econarena/noisy-0.1, econarena/nash) are built in, take only noise and send no request"),
])
@pytest.mark.e2e
def test_a_built_in_player_refuses_an_arg_no_player_of_the_run_takes_in_one_line(fns, arg, line, tmp_path):
    proc = oaieval(fns, base_env(), tmp_path, "--completion_args", arg)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert said(proc) == [line] or (len(said(proc)) == 1 and said(proc)[0].startswith(line)), said(proc)
    assert "Traceback" not in proc.stderr and not (tmp_path / "log.jsonl").exists()


@pytest.mark.e2e
def test_an_arg_one_built_in_player_of_the_run_takes_is_its_own_and_the_run_plays(tmp_path):
    """``noise`` is econarena/noisy's: given to the whole run (evals gives it to every player), the
    Nash player beside it passes over it, and the noisy bidder plays with it."""
    proc = oaieval("econarena/noisy-0.1,econarena/nash", base_env(), tmp_path, "--completion_args", "noise=0.2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert any("final_report" in e for e in events)
    players = next(e["data"]["players"] for e in events if e.get("type") == PLAYERS_EVENT)
    assert {p["name"]: p["completion_args"] for p in players}["econarena/noisy-0.1"] == {"noise": "0.2"}


@pytest.mark.e2e
def test_a_mistyped_option_inside_extra_options_is_refused(model_env, server, tmp_path):
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"temperature": 0, "temprature": 0}))
    before = posts(server)
    proc = oaieval("gpt-4", model_env, tmp_path, "--completion_args", f"extra_options=@{options}")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert said(proc) == ["econarena: unknown request option temprature (closest: temperature) in extra_options: "
                          "neither gpt-4 nor the openai client's chat.completions.create() takes it; a field only "
                          "your server knows goes in extra_body (extra_body=@file.json)"]
    assert posts(server) == before


@pytest.mark.e2e
def test_a_mistyped_model_arg_is_named_before_the_missing_model(model_env, server, tmp_path):
    """`econarena/chat --completion_args modle=...`: the unknown `modle` is what the user got wrong;
    the refusal names it (and `model`, the closest) first, then the model it therefore lacks."""
    before = posts(server)
    proc = oaieval("econarena/chat", model_env, tmp_path, "--completion_args", "modle=gpt-4")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(said(proc)) == 1, said(proc)
    line = said(proc)[0]
    assert line.startswith("econarena: completion fn econarena/chat: unknown completion arg modle "
                           "(closest: model"), line
    assert line.index("modle") < line.index("needs a model"), line
    assert "Traceback" not in proc.stderr
    assert posts(server) == before


@pytest.mark.e2e
def test_right_but_unusual_args_still_reach_the_server(model_env, server, tmp_path):
    model = "unusual-args-model"  # a name of this test's own: its requests are told apart at the shared server
    args = 'logit_bias={"50256":-100},extra_body={"top_k":40},user=researcher-1'
    proc = oaieval(f"econarena/chat:{model}", model_env, tmp_path, "--completion_args", args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    bodies = [body for _, body in server.bodies(model)]
    assert len(bodies) == 50  # beauty_L: 10 runs of 5 seats, one session
    assert all(b["logit_bias"] == {"50256": -100} and b["top_k"] == 40 and b["user"] == "researcher-1"
               for b in bodies)
    # evals' own fn: the same options inside extra_options
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"seed": 3, "extra_body": {"top_k": 40}}))
    before = len(server.bodies("gpt-4"))
    proc = oaieval("gpt-4", model_env, tmp_path / "evals_fn", "--completion_args", f"extra_options=@{options}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    sent = [body for _, body in server.bodies("gpt-4")[before:]]
    assert len(sent) == 50 and all(b["seed"] == 3 and b["top_k"] == 40 for b in sent)


@pytest.mark.e2e
def test_numbers_and_booleans_from_the_command_line_are_sent_as_the_client_declares_them(model_env, server, tmp_path):
    """--completion_args seed=3 arrives as the text "3": sent as the integer the API takes, while a
    text option keeps its text however it looks (user=42, stop=5)."""
    model = "typed-args-model"
    proc = oaieval(f"econarena/chat:{model}", model_env, tmp_path, "--completion_args",
                   "seed=3,logprobs=false,top_logprobs=0,user=42,stop=5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    bodies = [body for _, body in server.bodies(model)]
    assert len(bodies) == 50
    assert all(b["seed"] == 3 and b["logprobs"] is False and b["top_logprobs"] == 0 and b["user"] == "42"
               and b["stop"] == "5" for b in bodies), bodies[0]


def test_the_known_names_come_from_the_signatures():
    chat = request_options("chat")
    assert {"temperature", "seed", "logit_bias", "extra_body", "extra_headers", "extra_query"} <= chat
    assert "prompt" in request_options("completions") and "prompt" not in chat
    assert keyword_names(lambda a, *, b=1, **rest: None) is None  # takes any name: nothing to refuse
    assert keyword_names(lambda self, a, registry=None, *, b=1, **rest: None, named_only=True) == {"a", "b"}
    assert unknown_args({"temprature": 0, "seed": 1}, chat) == "temprature (closest: temperature)"
    assert unknown_args({"anything": 0}, None) == ""


def test_closest_names_rank_by_likeness_and_keep_the_known_order_on_ties():
    cells = ["econarena.beauty_L", "econarena.beauty_M", "econarena.beauty_H", "econarena.beauty_hist"]
    assert closest("econarena.beauty_X", cells) == cells[:3]
    assert closest("Temprature", ["top_p", "temperature"]) == ["temperature"]  # case aside
    assert closest("zzzz", cells) == []
    assert with_closest(["seeed", "zzzz"], ["seed", "stop"]) == "seeed (closest: seed), zzzz"
    assert closest("seed", ["seed", "seeds"]) == ["seeds"]  # never itself
