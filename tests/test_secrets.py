"""A secret reaches the endpoint and nothing else, wherever the user put it: a URL's user and
password, its query string (under any name), an ``extra_headers`` value (under any name),
``api_key``, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``. Through the real oaieval,
econarena-summary and econarena-report against the local server; every byte they print or write
is searched."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REGISTRY, base_env, cli, run_cli

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

# one recognisable fake secret per place; none looks like sk-... or names itself a key
USERINFO = "Fake-Userinfo-Pw-7731"
QUERY_KEY = "Fake-Query-Key-4410"  # ?key=
QUERY_PLAIN = "Fake-Query-Gw-5520"  # ?gw=, a name no rule calls secret
HEADER = "Fake-Gateway-Auth-6630"  # X-Gateway-Auth
API_KEY = "Fake-Api-Key-8850"
ENV_USERINFO = "Fake-Env-Userinfo-9960"
ENV_QUERY = "Fake-Env-Query-1170"
ENV_KEY = "Fake-Env-Key-2280"
SECRETS = (USERINFO, QUERY_KEY, QUERY_PLAIN, HEADER, API_KEY, ENV_USERINFO, ENV_QUERY, ENV_KEY)


def oaieval(fn: str, log: Path, env: dict, *extra: str, returncode=0) -> subprocess.CompletedProcess:
    return run_cli([cli("oaieval"), fn, "econarena.beauty_L", "--registry_path", str(REGISTRY), "--record_path",
                    str(log), "--max_samples", "1", *extra], env, returncode=returncode)


def test_a_secret_in_a_url_a_header_a_completion_arg_or_the_environment_is_nowhere_printed_or_written(
        server, tmp_path):
    host = server.base_url.rsplit("/v1", 1)[0].split("://", 1)[1]
    logs, inputs = tmp_path / "logs", tmp_path / "inputs"  # inputs: what the user wrote, holding the secrets
    inputs.mkdir()
    # evals splits --completion_args on every "=": a URL with a query comes in a file (docs/configuration.md)
    (inputs / "gateway.json").write_text(json.dumps(f"http://{host}/v1?key={QUERY_KEY}&gw={QUERY_PLAIN}"))
    headers = f'extra_headers={{"X-Gateway-Auth":"{HEADER}"}}'
    env = base_env() | {"OPENAI_BASE_URL": f"http://gw:{ENV_USERINFO}@{host}/v1?gw={ENV_QUERY}",
                        "OPENAI_API_KEY": ENV_KEY}
    before = len(server.requests)
    outputs = [
        oaieval("econarena/chat:my-local-model", logs / "userinfo.jsonl", base_env(), "--completion_args",
                f"api_base=http://user:{USERINFO}@{host}/v1,api_key={API_KEY},{headers}"),
        oaieval("econarena/chat:my-local-model", logs / "query.jsonl", base_env(), "--completion_args",
                f"api_base=@{inputs / 'gateway.json'},api_key={API_KEY}"),
        oaieval("gpt-4", logs / "environment.jsonl", env),  # evals' own fn, its endpoint from the environment
        # an endpoint that is down: the run prints its resume command, the environment's URL in it
        oaieval("econarena/chat:my-local-model", logs / "down.jsonl", env, "--completion_args",
                f"api_base=http://user:{USERINFO}@127.0.0.1:9/v1,api_key={API_KEY},{headers}",
                "--extra_eval_params", "max_attempts=1", returncode=3),
    ]
    # the secrets were live: each reached the server, where it belongs
    seen = server.requests[before:]
    assert len(seen) == 150
    assert {r["headers"].get("x-gateway-auth") for r in seen[:50]} == {HEADER}
    assert {r["path"] for r in seen[50:100]} == {f"/v1/chat/completions?key={QUERY_KEY}&gw={QUERY_PLAIN}"}
    # evals' own fn builds its client itself: the openai client puts the route after the query
    assert {r["path"] for r in seen[100:]} == {f"/v1/?gw={ENV_QUERY}chat/completions"}
    assert all("HTTP Request" not in o.stderr for o in outputs)  # httpx's per-request lines are not shown
    assert all("Logged 1 rows of events" not in o.stderr for o in outputs)  # nor evals' line per flush
    assert "To resume it" in outputs[-1].stderr and "OPENAI_BASE_URL='http://" + host + "/v1?gw=***'" in \
        outputs[-1].stderr and 'extra_headers={"X-Gateway-Auth":"***"}' in outputs[-1].stderr
    # --debug still shows httpx's request lines, each URL masked
    debug = oaieval("econarena/chat:my-local-model", logs / "debug.jsonl", base_env(), "--debug",
                    "--completion_args", f"api_base=@{inputs / 'gateway.json'}")
    outputs.append(debug)
    assert f"HTTP Request: POST http://{host}/v1/chat/completions?key=***&gw=***" in debug.stderr
    outputs.append(run_cli([cli("econarena-summary"), str(logs)], base_env()))
    assert "To resume it" in outputs[-1].stdout
    outputs.append(run_cli([cli("econarena-report"), str(logs), "--out", str(tmp_path / "report")], base_env()))

    printed = [o.stdout + o.stderr for o in outputs]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and inputs not in p.parents]
    assert {p.suffix for p in written} >= {".jsonl", ".md", ".json", ".html", ".png"}
    found = {(s, where) for s in SECRETS for where, text in
             [(f"output {i}", t) for i, t in enumerate(printed)]
             + [(str(p), p.read_bytes().decode("latin-1")) for p in written] if s in text}
    assert not found
    # what stays: the endpoint, the header's name and the masks, so a reader knows what was called
    players = json.loads((tmp_path / "report" / "report.json").read_text())["conditions"]
    endpoints = {(d["settings"] or {}).get("base_url") for d in players}
    assert f"http://{host}/v1?key=***&gw=***" in endpoints and f"http://{host}/v1" in endpoints
    assert {"X-Gateway-Auth": "***"} in [(d["settings"] or {}).get("completion_args", {}).get("extra_headers")
                                         for d in players]
