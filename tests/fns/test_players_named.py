"""A row is the model that played; completion args that shape the requests make their own column;
the log records what was called; secrets stay secret. Through the real oaieval, econarena-summary
and econarena-report, against the local OpenAI-compatible server."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from econarena_evals.fns.chat import ChatCompletionFn
from econarena_evals.fns.completion_args import command_completion_args, decode_value
from econarena_evals.fns.identity import condition_args, endpoint_label, from_spec, player_name
from econarena_evals.log.evallog import read_log
from econarena_evals.report.columns import column_name
from econarena_evals.run.conditions import condition_of

from conftest import REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

QWEN = "Qwen/Qwen2.5-7B-Instruct"
FAKE_KEY = "sk-FAKE-econarena-5eCr3t-0042"


def oaieval(fn: str, log: Path, env: dict, samples: int, *extra: str, cell: str = "beauty_L"):
    return run_cli([cli("oaieval"), fn, f"econarena.{cell}", "--registry_path", str(REGISTRY), "--record_path",
                    str(log), "--max_samples", str(samples), *extra], env)


def report(paths: list[Path], out: Path) -> tuple[dict, str, str]:
    proc = run_cli([cli("econarena-report"), *map(str, paths), "--out", str(out)], base_env())
    return json.loads((out / "report.json").read_text()), proc.stdout, proc.stderr


def strip_players_event(src: Path, dst: Path, renames: dict[str, str]) -> None:
    """The log as the eval wrote it before the econarena_players event: no event, and players
    named as on the command line."""
    lines = []
    for line in src.read_text().splitlines():
        row = json.loads(line)
        if row.get("type") == "econarena_players":
            continue
        for new, old in renames.items():
            line = line.replace(json.dumps(new), json.dumps(old))
        lines.append(line)
    dst.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, server):
    """The issue's commands: gpt-4o three sessions, Qwen two, then gpt-4o by the other spelling (three
    sessions again: another --max_samples is another result), and gpt-4o with max_tokens=5,temperature=0
    on one."""
    where = tmp_path_factory.mktemp("players")
    env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-local"}
    logs = {"a": where / "a.jsonl", "qwen": where / "qwen.jsonl", "short": where / "short.jsonl",
            "override": where / "override.jsonl"}
    before = len(server.requests)
    oaieval("econarena/chat", logs["a"], env, 3, "--completion_args", "model=gpt-4o")
    oaieval("econarena/chat", logs["qwen"], env, 2, "--completion_args", f"model={QWEN}")
    oaieval("econarena/chat:gpt-4o", logs["short"], env, 3)  # as many sessions: --max_samples is the condition's
    oaieval("econarena/chat", logs["override"], env, 1, "--completion_args", "model=gpt-4o,max_tokens=5,temperature=0")
    return where, logs, server.requests[before:]


@pytest.mark.e2e
def test_two_models_by_completion_args_are_two_rows_and_neither_is_superseded(runs, server, tmp_path):
    where, logs, _ = runs
    data, _, stderr = report([logs["a"], logs["qwen"]], tmp_path / "report")
    endpoint = endpoint_label(server.base_url)
    rows = {(d["player"], d["column"]): d["sessions"] for d in data["conditions"]}
    assert rows == {(f"econarena/chat:gpt-4o @ {endpoint}", "beauty_L"): 3,
                    (f"econarena/chat:{QWEN} @ {endpoint}", "beauty_L"): 2}
    assert {n["status"] for n in data["inputs"]} == {"used"} and "superseded" not in stderr
    summary = run_cli([cli("econarena-summary"), str(logs["a"]), str(logs["qwen"])], base_env())
    assert f"econarena/chat:{QWEN} @ {endpoint}" in summary.stdout and "superseded" not in summary.stderr
    # the eval itself names the player so: session events and the players event
    log = read_log(logs["qwen"])
    assert {s["player"] for s in log.sessions} == {f"econarena/chat:{QWEN}"}
    [entry] = log.settings
    assert entry["cli_name"] == "econarena/chat" and entry["model"] == QWEN
    assert entry["class"] == "econarena_evals.fns.chat:ChatCompletionFn" and entry["base_url"] == server.base_url
    assert entry["endpoint_label"] == endpoint and entry["condition_args"] == {}


@pytest.mark.e2e
def test_one_model_by_both_spellings_is_one_row_and_an_override_is_its_own_column(runs, server, tmp_path):
    where, logs, requests = runs
    data, _, _ = report(list(logs.values()), tmp_path / "report")
    endpoint = endpoint_label(server.base_url)
    gpt4o = f"econarena/chat:gpt-4o @ {endpoint}"
    rows = {(d["player"], d["column"]): d for d in data["conditions"]}
    assert set(rows) == {(gpt4o, "beauty_L"), (f"econarena/chat:{QWEN} @ {endpoint}", "beauty_L"),
                         (gpt4o, "beauty_L (max_tokens=5, temperature=0)")}
    assert rows[(gpt4o, "beauty_L")]["log"].endswith("short.jsonl")  # the newer spelling's log: the same condition
    assert rows[(gpt4o, "beauty_L")]["group"] == "overall"
    assert rows[(gpt4o, "beauty_L (max_tokens=5, temperature=0)")]["group"] is None
    status = {Path(n["file"]).name: n for n in data["inputs"]}
    assert status["a.jsonl"]["status"] == "superseded" and "short.jsonl" in status["a.jsonl"]["why"]
    assert status["override.jsonl"]["status"] == status["short.jsonl"]["status"] == "used"
    # the override reached the requests, and the default run's requests kept the eval's values
    bodies = [r["body"] for r in requests if r["body"].get("model") == "gpt-4o"]
    assert {(b["max_tokens"], b["temperature"]) for b in bodies} == {(5, 0.0), (1024, 0.7)}
    assert sum(b["max_tokens"] == 5 for b in bodies) == 50


@pytest.mark.e2e
def test_an_old_log_without_the_players_event_is_reported_from_its_command_line(runs, tmp_path):
    where, logs, _ = runs
    old = tmp_path / "old.jsonl"
    strip_players_event(logs["qwen"], old, {f"econarena/chat:{QWEN}": "econarena/chat"})
    assert read_log(old).settings == [] and {s["player"] for s in read_log(old).sessions} == {"econarena/chat"}
    data, _, stderr = report([old], tmp_path / "report")
    [row] = data["conditions"]
    assert row["player"] == f"econarena/chat:{QWEN}" and row["column"] == "beauty_L" and row["sessions"] == 2
    assert row["metrics"]["eas"]["mean"] == pytest.approx(read_log(old).final_report["eas"])
    [note] = data["inputs"]
    assert note["status"] == "used" and "log predates the econarena_players event" in note["why"]
    assert "log predates the econarena_players event" in stderr
    summary = run_cli([cli("econarena-summary"), str(old)], base_env())
    assert f"econarena/chat:{QWEN}" in summary.stdout and "log predates the econarena_players event" in summary.stderr
    md = (tmp_path / "report" / "report.md").read_text()
    assert "command line (log predates the players event)" in md


@pytest.mark.e2e
def test_gpt4_at_a_local_endpoint_is_labelled_with_it_and_the_model_that_answered_is_kept(tmp_path):
    llama = OpenAIServer(scripted, answer_model="/models/qwen2.5-7b-instruct-q4_k_m.gguf").start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": llama.base_url, "OPENAI_API_KEY": "sk-test-local"}
        log = tmp_path / "gpt4.jsonl"
        oaieval("gpt-4", log, env, 1)
    finally:
        llama.stop()
    parsed = read_log(log)
    [entry] = parsed.settings
    assert entry["name"] == "gpt-4" and entry["class"] == "evals.completion_fns.openai:OpenAIChatCompletionFn"
    assert entry["base_url"] == llama.base_url
    assert parsed.answered_as == {"gpt-4": {"/models/qwen2.5-7b-instruct-q4_k_m.gguf": 50}}
    data, _, _ = report([log], tmp_path / "report")
    [row] = data["conditions"]
    assert row["player"] == f"gpt-4 @ {endpoint_label(llama.base_url)}"
    assert row["player"].startswith("gpt-4 @ 127.0.0.1:")
    assert "responses to gpt-4 named /models/qwen2.5-7b-instruct-q4_k_m.gguf (50 call(s))" in data["inputs"][0]["why"]


@pytest.mark.e2e
def test_a_built_in_players_own_args_are_in_its_name(tmp_path):
    log = tmp_path / "ch.jsonl"
    oaieval("econarena/ch", log, base_env(), 1, "--completion_args", "tau=2")
    data, _, _ = report([log], tmp_path / "report")
    [row] = data["conditions"]
    assert row["player"] == "econarena/ch(tau=2)" and row["column"] == "beauty_L"


@pytest.mark.e2e
def test_a_key_given_as_a_completion_arg_is_nowhere_this_project_prints_or_writes(server, tmp_path):
    """The key reaches the server and nothing else: the spec line, the players event, stdout and
    stderr of oaieval (its resume hint included), econarena-summary and every file of the report."""
    schema = tmp_path / "format.json"
    schema.write_text(json.dumps({"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}))
    env = base_env() | {"OPENAI_BASE_URL": server.base_url}
    logs = tmp_path / "logs"
    args = f"api_key={FAKE_KEY},response_format=@{schema},extra_headers={{\"X-Title\":\"econarena\"}}"
    before = len(server.requests)
    outputs = [oaieval("econarena/chat:keyed-model", logs / "ok.jsonl", env, 1, "--completion_args", args)]
    requests = server.requests[before:]
    assert len(requests) == 50
    assert {r["headers"].get("authorization") for r in requests} == {f"Bearer {FAKE_KEY}"}
    assert {r["headers"].get("x-title") for r in requests} == {"econarena"}
    assert all(r["body"]["response_format"] == json.loads(schema.read_text()) for r in requests)
    assert all("extra_headers" not in r["body"] for r in requests)
    # a run whose every session errors prints the resume hint with the command line
    dead = f"api_key={FAKE_KEY},api_base=http://127.0.0.1:9/v1"
    # (its exit status is not this test's business)
    outputs.append(subprocess.run(
        [cli("oaieval"), "econarena/chat:keyed-model", "econarena.beauty_L", "--registry_path", str(REGISTRY),
         "--record_path", str(logs / "dead.jsonl"), "--max_samples", "1", "--completion_args", dead,
         "--extra_eval_params", "max_attempts=1"], env=env, capture_output=True, text=True, timeout=300))
    assert "To resume it" in outputs[-1].stderr and "api_key=***" in outputs[-1].stderr
    outputs.append(run_cli([cli("econarena-summary"), str(logs)], base_env()))
    assert "To resume it" in outputs[-1].stdout
    _, *report_out = report([logs], tmp_path / "report")
    texts = [o.stdout + o.stderr for o in outputs] + report_out
    texts += [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".png"]
    texts += [p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*.png")]
    assert len(texts) >= 8 and not [t[:200] for t in texts if FAKE_KEY in t]
    spec = read_log(logs / "ok.jsonl").spec
    assert "api_key=***" in spec["run_config"]["command"]
    entry = read_log(logs / "ok.jsonl").settings[0]
    assert entry["completion_args"]["api_key"] == "***"
    # a header makes the condition by its name; its value is masked, whatever the name
    assert entry["condition_args"] == {"extra_headers": {"X-Title": "***"},
                                       "response_format": json.loads(schema.read_text())}


# ---- the rules, without a run ----

def test_json_completion_args():
    assert decode_value('{"type":"json_object"}') == {"type": "json_object"}
    assert decode_value("[1]") == [1] and decode_value("5") == "5" and decode_value("{not json}") == "{not json}"
    with pytest.raises(ValueError, match="cannot read"):
        decode_value("@/nonexistent/format.json")
    fn = ChatCompletionFn(model="m", api_base="http://127.0.0.1:9/v1", response_format='{"type":"json_object"}',
                          extra_headers='{"X-Title":"t"}')
    assert fn.extra_headers == {"X-Title": "t"}
    assert fn.request([{"role": "user", "content": "x"}])["response_format"] == {"type": "json_object"}
    with pytest.raises(ValueError, match="extra_headers"):
        ChatCompletionFn(model="m", extra_headers="X-Title")


def test_names_and_conditions_from_a_command_line():
    chat = "econarena_evals.fns.chat:ChatCompletionFn"
    assert player_name("econarena/chat", chat, "gpt-4o", {"model": "gpt-4o"}) == "econarena/chat:gpt-4o"
    assert player_name("econarena/chat:gpt-4o", chat, "gpt-4o", {}) == "econarena/chat:gpt-4o"
    assert player_name("econarena/nash", "econarena_evals.fns.players:NashPlayer", None, {"tau": "2"}) == "econarena/nash"
    assert player_name("gpt-4", "evals.completion_fns.openai:OpenAIChatCompletionFn", "gpt-4", {}) == "gpt-4"
    assert condition_args(chat, {"model": "m", "api_key": "k", "api_base": "u", "request_timeout_s": "5",
                                 "max_tokens": "5", "extra_headers": {"Authorization": "x"}}) == {"max_tokens": "5"}
    assert endpoint_label("https://api.openai.com/v1") is None and endpoint_label(None) is None
    assert endpoint_label("http://u:p@127.0.0.1:8765/v1") == "127.0.0.1:8765"
    command = ("oaieval econarena/chat econarena.beauty_L --completion_args "
               "'model=gpt-4o,max_tokens=5,temperature=0,api_key=***'")
    assert command_completion_args(command)["max_tokens"] == "5"
    spec = {"eval_name": "econarena.beauty_L.dev.v0", "completion_fns": ["econarena/chat"],
            "run_config": {"command": command, "seed": 20220722, "eval_spec": {"args": {}}}}
    [entry] = from_spec(spec)
    assert entry["name"] == "econarena/chat:gpt-4o" and entry["source"] == "command"
    cond = condition_of(spec)
    assert cond.players == ("econarena/chat:gpt-4o",)
    assert column_name(cond).endswith("; max_tokens=5, temperature=0)")  # registry defaults unknown here
    # the same settings from an event, numbers spelled otherwise: the same condition
    assert condition_of(spec, [{**entry, "condition_args": {"max_tokens": 5, "temperature": 0.0}}]) == cond
