"""Progress lines on stderr: one line per line, never on the line of evals' own tqdm bar.

The real ``oaieval`` against the local server, slowed so that a run lasts ten waves of its latency
at least, with a progress line every 0.1 s (``ECONARENA_PROGRESS_S``). stderr is read as a terminal
shows it: each line is what is left after its last carriage return (tqdm redraws its bar with them).
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from conftest import REGISTRY, base_env, cli
from openai_server import OpenAIServer
from policies import scripted

PROGRESS = re.compile(r"econarena: econarena\.beauty_L\.dev\.v0: \d+/2 sessions, [\d,]+/100 calls, .*, ETA ")
BAR = re.compile(r"\d+%\|")  # tqdm's " 50%|█████     | 1/2 [...]"


@pytest.fixture(scope="module")
def slow_server():
    srv = OpenAIServer(scripted, models=("gpt-4",), latency_s=0.1).start()  # ten waves: a run lasts 1 s at least
    yield srv
    srv.stop()


def run(server: OpenAIServer, tmp_path, **env_extra: str) -> subprocess.CompletedProcess:
    env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local", **env_extra}
    if "EVALS_SHOW_EVAL_PROGRESS" not in env_extra:
        env.pop("EVALS_SHOW_EVAL_PROGRESS")  # as a user's shell has it: unset
    return subprocess.run([cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path",
                           str(REGISTRY), "--record_path", str(tmp_path / "log.jsonl"), "--max_samples", "2"],
                          env=env, capture_output=True, text=True, timeout=300)


def shown(stderr: str) -> list[str]:
    """stderr as a terminal leaves it: each line's text after its last carriage return."""
    return [line.rsplit("\r", 1)[-1] for line in stderr.split("\n")]


@pytest.mark.e2e
def test_by_default_the_progress_lines_stand_alone_and_evals_bar_is_off(slow_server, tmp_path):
    proc = run(slow_server, tmp_path, ECONARENA_PROGRESS_S="0.1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stderr.split("\n")
    progress = [line for line in lines if PROGRESS.search(line)]
    assert progress, proc.stderr[-3000:]
    # whole lines: nothing before them on their line, and no bar anywhere (it wrote "\r 50%|..." and
    # left the cursor there, so the next progress line went on the bar's line)
    assert all(PROGRESS.match(line) for line in progress), progress
    assert "\r" not in proc.stderr and not BAR.search(proc.stderr), proc.stderr[-3000:]


@pytest.mark.e2e
def test_with_evals_bar_asked_for_each_progress_line_is_printed_above_it(slow_server, tmp_path):
    proc = run(slow_server, tmp_path, ECONARENA_PROGRESS_S="0.1", EVALS_SHOW_EVAL_PROGRESS="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert BAR.search(proc.stderr)  # the bar the user asked for is drawn
    lines = shown(proc.stderr)
    progress = [line for line in lines if "econarena: econarena.beauty_L" in line]
    assert progress and all(PROGRESS.match(line) for line in progress), progress
    assert not [line for line in lines if BAR.search(line) and "econarena:" in line]


@pytest.mark.e2e
def test_progress_lines_can_be_turned_off_and_a_bad_interval_is_refused(slow_server, tmp_path):
    quiet = run(slow_server, tmp_path, ECONARENA_PROGRESS_S="0")
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    assert "econarena: plan:" in quiet.stderr and not PROGRESS.search(quiet.stderr)
    bad = run(slow_server, tmp_path / "bad", ECONARENA_PROGRESS_S="often")
    assert bad.returncode == 2, bad.stderr[-3000:]
    said = [line for line in bad.stderr.splitlines() if not line.startswith("[")]
    assert said == ["econarena: ECONARENA_PROGRESS_S is the seconds between progress lines (0: none), got 'often'"]


@pytest.mark.e2e
def test_the_plan_gives_the_expected_completions_beside_the_bound_then_the_first_answers_own(slow_server, tmp_path):
    """The plan said only what the requests reserve (max_tokens a call), ten times what a run used."""
    proc = run(slow_server, tmp_path, ECONARENA_PROGRESS_S="0.1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    plans = [line for line in proc.stderr.splitlines() if line.startswith("econarena: plan: ")]
    # before any call: 100 calls, 1,024 tokens reserved each, 150 expected each (a typical reply)
    assert plans[0].endswith("completions reserve up to 102,400 tokens, ~15,000 expected (~150 a reply, typical "
                             "of a model that explains its answer)"), plans[0]
    # once the first answers are in: what they used, for the whole run
    used = re.fullmatch(r"econarena: plan: econarena\.beauty_L\.dev\.v0: the first (\d+) replies used ([\d,]+) "
                        r"completion tokens on average: ~([\d,]+) expected for this run's 100 seat calls "
                        r"\(102,400 reserved\)", plans[1])
    assert used, plans
    answers, mean, expected = (int(g.replace(",", "")) for g in used.groups())
    assert 20 <= answers <= 100 and abs(expected - 100 * mean) <= 50
    # the mean is the replies' own: within what the server counted for them, in the log
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    tokens = [e["data"]["usage"]["completion_tokens"] for e in log if e.get("type") == "sampling"]
    assert len(tokens) == 100 and min(tokens) - 1 <= mean <= max(tokens) + 1


IN_FLIGHT = re.compile(r"(\d+) in flight \(limit (\d+)\)")


@pytest.mark.e2e
def test_a_one_slot_servers_calls_in_flight_are_never_above_the_limit_printed_beside_them(tmp_path):
    """A server that decodes one request at a time: the lane opens wide, then cuts its limit to about
    what the server serves while dozens are still out. Every progress line's count is at most the
    limit beside it (it printed "6 in flight (limit 2)")."""
    server = OpenAIServer(scripted, models=("gpt-4",), slots=1, decode_s=0.02).start()
    try:
        proc = run(server, tmp_path, ECONARENA_PROGRESS_S="0.1")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    counted = [(int(n), int(limit)) for line in shown(proc.stderr) if PROGRESS.search(line)
               for n, limit in IN_FLIGHT.findall(line)]
    assert counted, proc.stderr[-3000:]  # the limit was cut and printed
    assert all(n <= limit for n, limit in counted), counted
