"""Process faults end loudly and resumably: a full disk, a bad --out or --registry_path, and
completion args or plan options outside their domain."""
from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems

from conftest import REGISTRY, base_env, cli, run_cli

CALLS_PER_SESSION = 50  # beauty_L: 10 runs of 5 seats

# Inside a mount namespace of its own (unshare -Urm: no root needed where user namespaces are
# allowed), a really small tmpfs holds the log; the run that fills it and the resume command it
# printed both run there, and the mount is gone with the namespace.
FULL_DISK_SCRIPT = r"""
set -u
disk=$1; out=$2; shift 2
mount -t tmpfs -o size=400k tmpfs "$disk" || exit 97
"$@" >"$out/first.out" 2>"$out/first.err"; echo $? >"$out/first.rc"
cp "$disk/log.jsonl" "$out/first.jsonl"
grep -A1 '^To resume it' "$out/first.err" | tail -n 1 >"$out/resume.sh"
sh "$out/resume.sh" >"$out/second.out" 2>"$out/second.err"; echo $? >"$out/second.rc"
"""


def on_small_disk(script: str, disk: Path, out: Path, command: list[str], env: dict) -> None:
    """Run ``script`` (one of the tmpfs scripts above) in a user and mount namespace of its own."""
    proc = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh",
                           str(disk), str(out), *command], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def chat_requests(server) -> int:
    return sum(p.endswith("/chat/completions") for p in server.paths())


@pytest.mark.e2e
def test_a_full_disk_stops_the_run_in_one_line_and_the_resume_writes_elsewhere(model_env, server, tmp_path):
    disk, out, elsewhere = tmp_path / "disk", tmp_path / "out", tmp_path / "elsewhere"
    for d in (disk, out, elsewhere):
        d.mkdir()
    samples = 6
    env = model_env | {"EVALS_THREADS": "2", "ECONARENA_RESUME_DIR": str(elsewhere)}
    before = chat_requests(server)
    command = [cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
               "--record_path", str(disk / "log.jsonl"), "--max_samples", str(samples)]
    on_small_disk(FULL_DISK_SCRIPT, disk, out, command, env)
    first_err = (out / "first.err").read_text()
    assert (out / "first.rc").read_text().strip() == "4", first_err[-3000:]  # exit_status.STOPPED
    assert "Traceback" not in first_err, first_err[-3000:]
    said = [line for line in first_err.splitlines() if line.startswith("econarena: stopped:")]
    assert said == [f"econarena: stopped: the log cannot be written: {disk / 'log.jsonl'} on {disk} "
                    f"(0 B free of 400.0 KiB): [Errno 28] No space left on device"], first_err[-3000:]
    first = read_log(out / "first.jsonl")
    kept = [s for s in first.sessions if not s["errored"]]
    assert 1 <= len(kept) < samples  # the disk really filled part way
    # the run stopped at the failed write: beyond the calls the whole cell needs, only the sessions
    # under way then (EVALS_THREADS=2) were paid for and lost, not every session left to play
    paid_twice = chat_requests(server) - before - samples * CALLS_PER_SESSION
    assert 0 < paid_twice <= 2 * CALLS_PER_SESSION
    resume_line = (out / "resume.sh").read_text()
    assert f"--record_path {shlex.quote(str(elsewhere / 'log.resumed.jsonl'))}" in resume_line
    assert f"resume_from={disk / 'log.jsonl'}" in resume_line
    assert "free space there, or give --record_path a path on another disk" in first_err

    assert (out / "second.rc").read_text().strip() == "0", (out / "second.err").read_text()[-3000:]
    resumed = read_log(elsewhere / "log.resumed.jsonl")
    assert resumed.final_report["sessions"] == samples and resumed.final_report["errored_sessions"] == 0
    assert not resumed.problems and filing_problems(elsewhere / "log.resumed.jsonl") == []
    rows = [json.loads(line) for line in (elsewhere / "log.resumed.jsonl").read_text().splitlines()]
    assert sum(r.get("type") == "sampling" for r in rows) == samples * CALLS_PER_SESSION


def nash_log(tmp_path: Path) -> Path:
    log = tmp_path / "logs" / "nash.jsonl"
    log.parent.mkdir()
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(log), "--max_samples", "2"], base_env())
    return log


@pytest.mark.e2e
def test_report_out_refuses_the_root_a_file_and_a_folder_of_other_files(tmp_path):
    log = nash_log(tmp_path)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    root_before = sorted(p.name for p in Path("/").iterdir())
    for out, why in (("/", "is the root of the filesystem"), (str(a_file), "exists and is not a directory"),
                     (str(log.parent), "is a directory holding other files (1), not an earlier report")):
        proc = subprocess.run([cli("econarena-report"), str(log), "--out", out], env=base_env(),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines() == [f"econarena-report: --out {out}: {why}" + (
            "; give a directory of the report's own" if out == "/" else
            "; give a new or empty directory" if "other files" in why else "")], proc.stderr
    assert sorted(p.name for p in Path("/").iterdir()) == root_before
    assert a_file.read_text() == "mine\n" and sorted(p.name for p in log.parent.iterdir()) == ["nash.jsonl"]


@pytest.mark.e2e
def test_report_out_may_be_new_empty_or_an_earlier_report(tmp_path):
    log = nash_log(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "report", empty, empty):  # the last: over the report just written
        run_cli([cli("econarena-report"), str(log), "--out", str(out)], base_env())
        assert (out / "report.md").is_file() and (out / "report.json").is_file()


def refused_run(fn: str, env: dict, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    log = tmp_path / "log.jsonl"
    proc = subprocess.run([cli("oaieval"), fn, "econarena.beauty_L", "--registry_path", str(REGISTRY),
                           "--record_path", str(log), "--max_samples", "1", *extra], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]  # exit_status.REFUSED
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert not log.exists() or '"sampling"' not in log.read_text()
    return proc


def said(proc: subprocess.CompletedProcess) -> list[str]:
    """stderr without evals' own timestamped log lines."""
    return [line for line in proc.stderr.splitlines() if not line.startswith("[")]


# Value domains are tables checked in-process; one run of the real CLI per kind of refusal checks
# the line, the exit status and that nothing is sent.
COMPLETION_ARG_DOMAINS = [
    ("econarena/chat:gpt-4", "temperature=nan", "temperature must be a number from 0 to 2, got 'nan'"),
    ("econarena/chat:gpt-4", "temperature=inf", "temperature must be a number from 0 to 2, got 'inf'"),
    ("econarena/chat:gpt-4", "temperature=-0.5", "temperature must be a number from 0 to 2, got '-0.5'"),
    ("econarena/chat:gpt-4", "max_tokens=0", "max_tokens must be an integer of at least 1, got '0'"),
    ("econarena/chat:gpt-4", "max_tokens=-3", "max_tokens must be an integer of at least 1, got '-3'"),
    ("econarena/chat:gpt-4", "max_completion_tokens=0", "max_completion_tokens must be an integer of at least 1"),
    ("econarena/chat:gpt-4", "top_p=1.5", "top_p must be a number from 0 to 1, got '1.5'"),
    ("econarena/chat:gpt-4", "top_p=-0.1", "top_p must be a number from 0 to 1, got '-0.1'"),
    ("econarena/chat:gpt-4", "request_timeout_s=0", "request_timeout_s must be a number above 0, got '0'"),
    ("econarena/chat:gpt-4", "request_timeout_s=-1", "request_timeout_s must be a number above 0, got '-1'"),
    ("econarena/chat:gpt-4", "reasoning_effort=huge", "reasoning_effort must be one of"),  # chat's own ValueError
    ("gpt-4", "temperature=0.5", "gpt-4 does not take the completion arg temperature; it takes"),  # evals' fn: extra_options only
]


def made_fn(name: str, arg: str) -> Any:
    """The completion fn as oaieval makes it from ``--completion_args arg`` (in-process: the refusal raises)."""
    from evals.registry import Registry

    registry = Registry()
    registry.add_registry_paths([REGISTRY])
    key, _, value = arg.partition("=")
    return registry.make_completion_fn(name, **{key: value})


# in-process the fn's own ValueError comes out as it is (the CLI puts "completion fn NAME:" before
# it); evals' fn, which names no such arg, raises evals' TypeError there: the CLI test below has it
@pytest.mark.parametrize("fn,arg,message", COMPLETION_ARG_DOMAINS[:-1])
def test_completion_args_outside_their_domain_are_refused(fn, arg, message):
    with pytest.raises(ValueError) as refused:
        made_fn(fn, arg)
    assert message in str(refused.value), refused.value


@pytest.mark.parametrize("fn,arg,message", [COMPLETION_ARG_DOMAINS[0], COMPLETION_ARG_DOMAINS[-1]])
@pytest.mark.e2e
def test_the_cli_refuses_a_completion_arg_outside_its_domain_in_one_line_before_any_call(fn, arg, message,
                                                                                        model_env, server, tmp_path):
    before = chat_requests(server)
    proc = refused_run(fn, model_env, tmp_path, "--completion_args", arg)
    lines = said(proc)
    assert len(lines) == 1 and lines[0].startswith(f"econarena: completion fn {fn}") and message in lines[0], lines
    assert chat_requests(server) == before


EXTRA_OPTION_DOMAINS = [
    ({"temperature": "nan"}, "completion arg temperature must be a number from 0 to 2, got 'nan'"),
    ({"max_tokens": 0}, "completion arg max_tokens must be an integer of at least 1, got 0"),
    ({"top_p": 2}, "completion arg top_p must be a number from 0 to 1, got 2"),
    ("not-an-object", "completion arg extra_options must be a JSON object"),
]


@pytest.mark.parametrize("options,message", EXTRA_OPTION_DOMAINS)
def test_evals_own_fns_extra_options_outside_their_domain_are_refused(options, message, monkeypatch):
    from econarena_evals.fns.endpoints import check_args

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a key: the options are what is refused
    fn = made_fn("gpt-4", "extra_options=" + (options if isinstance(options, str) else json.dumps(options)))
    with pytest.raises(ValueError) as refused:
        check_args(fn)
    assert str(refused.value).startswith(message), refused.value


@pytest.mark.e2e
def test_the_cli_refuses_extra_options_outside_their_domain_in_one_line_before_any_call(model_env, server, tmp_path):
    options, message = EXTRA_OPTION_DOMAINS[0]
    (tmp_path / "options.json").write_text(json.dumps(options))
    before = chat_requests(server)
    proc = refused_run("gpt-4", model_env, tmp_path, "--completion_args", f"extra_options=@{tmp_path / 'options.json'}")
    lines = said(proc)
    assert len(lines) == 1 and lines[0].startswith(f"econarena: {message}"), lines
    assert chat_requests(server) == before


@pytest.mark.parametrize("tool", ["oaieval", "oaievalset"])
@pytest.mark.e2e
def test_a_registry_path_that_is_not_a_directory_is_refused(tool, tmp_path):
    a_file = tmp_path / "registry.yaml"
    a_file.write_text("{}\n")
    for path, why in ((tmp_path / "DOES_NOT_EXIST", "no such directory"), (a_file, "not a directory")):
        target = "econarena.beauty_L" if tool == "oaieval" else "econarena"
        proc = subprocess.run([cli(tool), "econarena/nash", target, "--registry_path", str(REGISTRY),
                               "--registry_path", str(path), "--max_samples", "1"], env=base_env(), cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr[-3000:]
        assert said(proc) == [f"econarena: --registry_path {path}: {why}"], proc.stderr[-3000:]


PLAN_OPTION_DOMAINS = [
    ("--rpm", "-5", "--rpm must be a number of at least 0, got -5"),
    ("--tpm", "nan", "--tpm must be a number of at least 0, got nan"),
    ("--tpm", "-inf", "--tpm must be a number of at least 0, got -inf"),
    ("--price-in", "nan", "--price-in must be a number of at least 0, got nan"),
    ("--price-out", "-1", "--price-out must be a number of at least 0, got -1"),
    ("--price-in", "inf", "--price-in must be a number of at least 0, got inf"),
    ("--max_samples", "0", "--max_samples must be a number of at least 1, got 0"),
    ("--max_tokens", "-1", "--max_tokens must be a number of at least 0, got -1"),
]


@pytest.mark.parametrize("option,value,message", PLAN_OPTION_DOMAINS)
def test_plan_options_outside_their_domain_are_refused(option, value, message, capsys):
    from econarena_evals.run.plan import main

    assert main(["gpt-4o", "econarena.beauty_L", f"{option}={value}"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"econarena-plan: {message}"]


def test_plan_refuses_an_unknown_eval_with_the_closest_names_unquoted(capsys):
    from econarena_evals.run.plan import main

    assert main(["gpt-4o", "econarena.beauty_X"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(
        "econarena-plan: no eval 'econarena.beauty_X'; closest: econarena.beauty_L, econarena.beauty_M") and err.count("\n") == 1


@pytest.mark.e2e
def test_the_plan_cli_refuses_an_option_outside_its_domain_in_one_line():
    option, value, message = PLAN_OPTION_DOMAINS[0]
    proc = subprocess.run([cli("econarena-plan"), "gpt-4o", "econarena.beauty_L", f"{option}={value}"],
                          env=base_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [f"econarena-plan: {message}"]


@pytest.mark.e2e
def test_plan_takes_a_limit_of_zero_as_no_limit():
    proc = run_cli([cli("econarena-plan"), "gpt-4o", "econarena.beauty_L", "--rpm", "100", "--tpm", "0"], base_env())
    assert "at 100 requests/min and 0 tokens/min (0: no limit): at least 10.0 min" in proc.stdout


@pytest.mark.e2e
def test_plan_prices_the_completions_expected_beside_their_bound():
    """It priced only the bound (every reply max_tokens long): 55.30 for a set that cost under 5."""
    proc = run_cli([cli("econarena-plan"), "econarena/chat:llama3.1", "econarena", "--price-in", "2.5",
                    "--price-out", "10"], base_env())
    lines = proc.stdout.splitlines()
    assert lines[-2].startswith("total: 5,000 seat calls (100 sessions); prompts ~1,640,540 tokens (counted by "
                                "characters/4); completions reserve up to 5,120,000 tokens, ~750,000 expected (~150 "
                                "a reply, typical of a model that explains its answer)"), lines
    assert lines[-1] == ("cost: prompts ~4.10; completions ~7.50 expected (~150 a reply), at most 51.20 (if "
                         "every reply used max_tokens); in all ~11.60 expected, at most 55.30; in the currency of "
                         "the prices given")
    # a max_tokens under a typical reply is what is expected of each
    short = run_cli([cli("econarena-plan"), "llama3.1", "econarena.beauty_L", "--max_tokens", "64"], base_env())
    assert short.stdout.rstrip().endswith("completions reserve up to 64,000 tokens, ~64,000 expected (64 a reply: "
                                          "max_tokens, under a typical reply's ~150)"), short.stdout


def test_completion_arg_domains_take_their_bounds_and_refuse_what_is_outside():
    from econarena_evals.fns.completion_args import check_values

    assert check_values({"temperature": "0", "top_p": 1, "max_tokens": "1.0", "request_timeout_s": "0.5",
                         "other": "nan"}) == {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1,
                                              "request_timeout_s": 0.5, "other": "nan"}
    for args in ({"temperature": 2.0001}, {"temperature": True}, {"max_tokens": 1.5}, {"max_retries": -1},
                 {"presence_penalty": "-inf"}, {"top_p": "abc"}):
        with pytest.raises(ValueError, match="^completion arg "):
            check_values(args)


# The disk is full before the run starts: evals' recorder cannot even write the log's first line.
FULL_BEFORE_SCRIPT = r"""
set -u
disk=$1; out=$2; shift 2
mount -t tmpfs -o size=64k tmpfs "$disk" || exit 97
dd if=/dev/zero of="$disk/fill" bs=1k count=256 2>/dev/null
"$@" >"$out/run.out" 2>"$out/run.err"; echo $? >"$out/run.rc"
"""


@pytest.mark.e2e
def test_a_disk_full_before_the_run_starts_ends_in_one_line_before_any_call(model_env, server, tmp_path):
    disk, out = tmp_path / "disk", tmp_path / "out"
    for d in (disk, out):
        d.mkdir()
    before = chat_requests(server)
    command = [cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
               "--record_path", str(disk / "log.jsonl"), "--max_samples", "2"]
    on_small_disk(FULL_BEFORE_SCRIPT, disk, out, command, model_env)
    err = (out / "run.err").read_text()
    assert (out / "run.rc").read_text().strip() == "4", err[-3000:]  # exit_status.STOPPED
    assert "Traceback" not in err, err[-3000:]
    said = [line for line in err.splitlines() if line.startswith("econarena:")]
    assert said == [f"econarena: stopped: the log cannot be written: {disk / 'log.jsonl'} on {disk} "
                    "(0 B free of 64.0 KiB): [Errno 28] No space left on device"], err[-3000:]
    assert chat_requests(server) == before


@pytest.mark.e2e
def test_a_built_in_players_plan_says_it_sends_nothing(tmp_path):
    """Self-play of a built-in player: the figures are what a model would send, and the line says so."""
    proc = run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--max_samples", "1",
                    "--record_path", str(tmp_path / "nash.jsonl")], base_env(), cwd=tmp_path)
    (plan,) = [line for line in proc.stderr.splitlines() if line.startswith("econarena: plan: ")]
    assert plan.startswith("econarena: plan: econarena.beauty_L.dev.v0: 50 seat calls (1 session); prompts ~")
    assert plan.endswith("built-in players answer every call in process and send none of it (no request, no cost); "
                         "the figures are what a model would send in their seats")


def test_plan_refuses_a_roster_naming_a_player_twice_as_oaieval_does(capsys):
    from econarena_evals.run.plan import main

    assert main(["econarena/nash,econarena/nash,econarena/random", "econarena.beauty_L_melee"]) == 2
    assert capsys.readouterr().err.startswith("econarena-plan: the roster names a player twice: ['econarena/nash']")
