"""A roster file: each model on its own endpoint with its own key variable and args, built-in players
beside them, played by the real ``oaieval`` through the registry ``econarena-roster`` writes; priced
by ``econarena-plan``; and every bad entry refused in one line that names its line."""
from __future__ import annotations

import json

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.format import SEAT_TAG

from conftest import base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

ROSTER = """\
# the lab's roster, versioned
players:
  - name: lab/alpha
    model: alpha-1
    base_url: {a}
    api_key_env: LAB_KEY_A
    args: {{temperature: 0.2}}
    prices: {{input: 1.0, output: 4.0}}
  - name: lab/beta
    model: beta-2
    base_url: {b}
    api_key_env: LAB_KEY_B
    prices: {{input: 3, output: 15}}
  - builtin: econarena/nash
  - builtin: econarena/random
  - builtin: econarena/human
"""


@pytest.mark.e2e
def test_a_roster_file_plays_each_model_on_its_own_endpoint_with_its_own_key(tmp_path):
    a = OpenAIServer(scripted, models=("alpha-1",)).start()
    b = OpenAIServer(scripted, models=("beta-2",)).start()
    try:
        roster = tmp_path / "roster.yaml"
        roster.write_text(ROSTER.format(a=a.base_url, b=b.base_url), encoding="utf-8")
        env = {**base_env(), "LAB_KEY_A": "sk-alpha-secret", "LAB_KEY_B": "sk-beta-secret"}
        made = run_cli([cli("econarena-roster"), str(roster), "--registry", str(tmp_path / "reg")], env)
        fns = "lab/alpha,lab/beta,econarena/nash,econarena/random,econarena/human"
        assert made.stdout.strip() == f"oaieval {fns} econarena.<cell>_melee --registry_path {tmp_path / 'reg'}"
        written = (tmp_path / "reg" / "completion_fns" / "roster.yaml").read_text(encoding="utf-8")
        assert "LAB_KEY_A" in written and "secret" not in written  # the variable's name, never the key
        log = tmp_path / "melee.jsonl"
        ran = run_cli([cli("oaieval"), fns, "econarena.beauty_L_melee", "--registry_path", str(tmp_path / "reg"),
                       "--extra_eval_params", "tables_per_player=2", "--record_path", str(log)], env, cwd=tmp_path)
        said = [x.split("econarena: plan: ", 1)[1] for x in ran.stderr.splitlines() if "econarena: plan: " in x]
        asked = len(a.requests) + len(b.requests)
        asked_a = [r["body"] for r in a.requests if r["path"].endswith("/chat/completions")]  # the melee's
        asked_b = [r["body"] for r in b.requests if r["path"].endswith("/chat/completions")]
        # the senior table of this melee plays the models again by their completion fns, through the registry
        run_cli([cli("econarena-report"), str(log), "--out", str(tmp_path / "report")], base_env(), cwd=tmp_path)
        run_cli([cli("econarena-senior"), str(tmp_path / "report"), "--out", str(tmp_path / "senior"),
                 "--registry_path", str(tmp_path / "reg")], env, cwd=tmp_path)
        senior = read_log(tmp_path / "senior" / "beauty_L_melee.senior.jsonl")
        assert sorted(senior.spec["completion_fns"]) == sorted(fns.split(","))  # five players: all of them
        assert senior.final_report["sessions"] == 2 and len(a.requests) + len(b.requests) > asked
    finally:
        a.stop()
        b.stop()
    # each endpoint was asked for its own model only, with its own key, and the temperature its args say
    assert asked_a and {r["model"] for r in asked_a} == {"alpha-1"}
    assert asked_b and {r["model"] for r in asked_b} == {"beta-2"}
    assert {auth for _, _, auth in a.seen} == {"Bearer sk-alpha-secret"}
    assert {auth for _, _, auth in b.seen} == {"Bearer sk-beta-secret"}
    assert {r.get("temperature") for r in asked_a} == {0.2} and {r.get("temperature") for r in asked_b} == {0.7}
    played = read_log(log)
    assert played.spec["completion_fns"] == fns.split(",") and played.final_report["sessions"] == 2
    rows = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.strip()]
    tags = [r["data"][SEAT_TAG] for r in rows if r.get("type") == "sampling"]
    # the player as the log names it: the roster's name and the model its requests named
    assert sum(t["player"] == "lab/alpha:alpha-1" for t in tags) == len(asked_a)
    assert "sk-alpha-secret" not in log.read_text(encoding="utf-8")

    # econarena-plan reads the same file: each model at its own prices, and the two in all
    plan = run_cli([cli("econarena-plan"), str(roster), "econarena.beauty_L_melee", "--tables_per_player", "2"],
                   base_env()).stdout.splitlines()
    alpha = next(x for x in plan if ": lab/alpha: " in x)
    beta = next(x for x in plan if ": lab/beta: " in x)
    assert f"lab/alpha: {len(asked_a)} seat calls to send at 2 tables" in alpha and "; cost ~" in alpha
    assert "; cost ~" in beta and any("the 2 models priced, in all: cost ~" in x for x in plan)
    # the run's own plan, before its first call, prices each model as econarena-plan does (the roster's
    # prices in the registry entry econarena-roster wrote), under the name the log gives it
    for name, model, line in (("lab/alpha", "alpha-1", alpha), ("lab/beta", "beta-2", beta)):
        (own,) = [x for x in said if f": {name}:{model}: " in x]
        assert own.split(f": {name}:{model}: ", 1)[1] == line.split(f": {name}: ", 1)[1]
    in_all = [x for x in plan if "the 2 models priced, in all: cost ~" in x]
    assert in_all and in_all == [x for x in said if "the 2 models priced, in all: " in x]
    assert not any("cost" in x for x in said if "built-in players, answered in process" in x)


BAD = [
    ("players:\n  - name: a/b\n    model: m\n    api_key: sk-live-123\n  - builtin: econarena/nash\n",
     "line 2: unknown field(s) api_key (never the key itself"),
    ("players:\n  - builtin: econarena/nash\n  - name: lab/x\n    model: m\n  - name: lab/x\n    model: n\n",
     "line 5 (lab/x): the name is also on line 3"),
    ("players:\n  - builtin: econarena/nash\n  - builtin: econarena/wizard\n", "line 3: no built-in player"),
    ("players:\n  - builtin: econarena/nash\n  - name: lab/x\n    model: m\n    args: {session_token: abc}\n",
     "line 3 (lab/x): arg 'session_token' is not allowed here"),
    ("players:\n  - builtin: econarena/nash\n  - name: lab/x\n    model: m\n    base_url: https://u:pw@host/v1\n",
     "line 3 (lab/x): base_url must be an http(s) URL without user or password"),
    ("players:\n  - builtin: econarena/nash\n  - name: 'a,b'\n    model: m\n", "line 3: name must be"),
    ("players:\n  - builtin: econarena/nash\n  - name: lab/x\n    model: m\n    prices: {input: -1}\n",
     "line 3 (lab/x): prices input and output must be numbers >= 0"),
    ("players:\n  - builtin: econarena/nash\n", "players must be a list of 2 to 1000 players"),
    ("players: [\n  - oops\n", "not YAML"),
    ("roster: []\n", "a roster is a mapping with one key, players"),
    ("players:\n  - !!python/object:os.system {}\n  - builtin: econarena/nash\n", "not YAML"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_a_bad_roster_is_refused_in_one_line_naming_the_entry(tmp_path, text, message):
    from econarena_evals.fns.roster import main

    roster = tmp_path / "roster.yaml"
    roster.write_text(text, encoding="utf-8")
    assert main([str(roster), "--registry", str(tmp_path / "reg")]) == 2
    assert not (tmp_path / "reg").exists()


@pytest.mark.parametrize("text,message", BAD)
def test_the_refusal_names_the_file_the_line_and_the_entry(tmp_path, text, message, capsys):
    from econarena_evals.fns.roster import main

    roster = tmp_path / "roster.yaml"
    roster.write_text(text, encoding="utf-8")
    main([str(roster), "--registry", str(tmp_path / "reg")])
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"econarena-roster: {roster}: ") and message in line, line


def test_a_roster_too_large_or_not_text_is_refused_unread(tmp_path, capsys):
    from econarena_evals.fns.roster import MAX_ROSTER_BYTES, main

    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (MAX_ROSTER_BYTES + 1))
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"players: \xff\xfe\n")
    assert main([str(big), "--registry", str(tmp_path / "r")]) == 2
    assert main([str(binary), "--registry", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "larger than 1024 KiB" in err[0] and "not UTF-8 text" in err[1]


def test_the_key_variable_unset_is_named_not_guessed(monkeypatch):
    from econarena_evals.fns.chat import ChatCompletionFn

    monkeypatch.delenv("LAB_KEY_NONE", raising=False)
    with pytest.raises(ValueError, match="environment variable LAB_KEY_NONE is not set"):
        ChatCompletionFn(model="m", api_base="http://127.0.0.1:9/v1", api_key_env="LAB_KEY_NONE")
    monkeypatch.setenv("LAB_KEY_SET", "sk-x")
    assert ChatCompletionFn(model="m", api_key_env="LAB_KEY_SET").api_key == "sk-x"


def test_the_prices_arg_is_read_as_the_roster_file_reads_prices_and_never_sent():
    from econarena_evals.fns.chat import ChatCompletionFn

    fn = ChatCompletionFn(model="m", api_base="http://127.0.0.1:9/v1", prices='{"input": 2.5, "output": 10}')
    assert fn.prices == (2.5, 10.0) and "prices" not in fn.request([{"role": "user", "content": "hi"}])
    assert ChatCompletionFn(model="m", api_base="http://127.0.0.1:9/v1", prices={"output": 4}).prices == (0.0, 4.0)
    for bad, message in (({"input": -1}, "must be numbers >= 0"), ({"in": 1}, "prices are {input: X, output: Y}"),
                         ("cheap", "prices are {input: X, output: Y}")):
        with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
            ChatCompletionFn(model="m", api_base="http://127.0.0.1:9/v1", prices=bad)
