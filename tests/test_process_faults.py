"""Process faults end loudly and resumably: a full disk, a bad --out or --registry_path, and
completion args or plan options outside their domain (issue 24, item 8)."""
from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from conftest import REGISTRY, base_env, cli, run_cli

from econarena_evals.filing import filing_problems
from econarena_evals.logs import read_log

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


def chat_requests(server) -> int:
    return sum(p.endswith("/chat/completions") for p in server.paths())


def test_a_full_disk_stops_the_run_in_one_line_and_the_resume_writes_elsewhere(model_env, server, tmp_path):
    disk, out, elsewhere = tmp_path / "disk", tmp_path / "out", tmp_path / "elsewhere"
    for d in (disk, out, elsewhere):
        d.mkdir()
    samples = 6
    env = model_env | {"EVALS_THREADS": "2", "ECONARENA_RESUME_DIR": str(elsewhere)}
    before = chat_requests(server)
    command = [cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
               "--record_path", str(disk / "log.jsonl"), "--max_samples", str(samples)]
    proc = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", FULL_DISK_SCRIPT, "sh",
                           str(disk), str(out), *command], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
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


def test_report_out_may_be_new_empty_or_an_earlier_report(tmp_path):
    log = nash_log(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "report", empty, empty):  # the last: over the report just written
        run_cli([cli("econarena-report"), str(log), "--out", str(out)], base_env())
        assert (out / "report.md").is_file() and (out / "report.json").is_file()
