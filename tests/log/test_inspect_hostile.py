"""Hostile inspect logs through the real ``econarena-summary``: a bad field, a deep member, a
compression bomb, a huge ``.json`` log each cost only their own file (named, every other file's rows
as without it), and an inspect log is held to what evals logs are (missing samples, epochs, a claimed
model, a resume hint inspect takes). The logs are generated from the real log of
tests/fixtures/inspect (its README), rewritten with ``zipfile``; inspect_ai is not needed."""
from __future__ import annotations

import copy
import json
import os
import struct
import subprocess
import tempfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard

from econarena_evals.log.inspect_log import MAX_MEMBER_BYTES, _member

from conftest import base_env, cli

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "inspect" / "beauty_L_level2_vs_nash.eval"
ROW = "econarena/level2 (inspect)"
HANG_GUARD_S = 120
GIB = 2**30
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def members() -> dict[str, Any]:
    with zipfile.ZipFile(FIXTURE) as z:
        return {i.filename: _member(z, i) for i in z.infolist()}


def write_eval(path: Path, members: dict[str, Any], raw: dict[str, bytes] | None = None) -> Path:
    """A .eval zip of ``members`` (JSON, deflated) and ``raw`` members (bytes as they are, stored)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in members.items():
            z.writestr(name, json.dumps(value))
        for name, data in (raw or {}).items():
            z.writestr(name, data, compress_type=zipfile.ZIP_STORED)
    return path


def relabel(path: Path, name: str, method: int, file_size: int) -> None:
    """Say in both of the zip's headers of member ``name`` that it is compressed by ``method`` and
    inflates to ``file_size`` bytes (its data stays as written)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
    local = info.header_offset
    struct.pack_into("<H", data, local + 8, method)
    struct.pack_into("<I", data, local + 22, file_size)
    central = data.rfind(b"PK\x01\x02")
    while struct.unpack_from("<I", data, central + 42)[0] != local:  # this member's central record
        central = data.rfind(b"PK\x01\x02", 0, central)
    struct.pack_into("<H", data, central + 10, method)
    struct.pack_into("<I", data, central + 24, file_size)
    path.write_bytes(bytes(data))


def zstd_zeros(size: int) -> bytes:
    """A zstd frame of ``size`` zero bytes, written by hand: raw-literal RLE blocks of 128 KiB, 4
    bytes each (no content size in the frame header), so gigabytes cost a few hundred KB."""
    block = 2**17
    out = bytearray(struct.pack("<I", 0xFD2FB528) + bytes([0x00, 0x38]))  # no size, no checksum; window 128 KiB
    left = size
    while left > 0:
        n = min(block, left)
        left -= n
        out += struct.pack("<I", (n << 3) | (1 << 1) | (left == 0))[:3] + b"\0"
    return bytes(out)


def deflate_zeros(size: int) -> bytes:
    """Raw deflate of ``size`` zero bytes: one 16 MiB chunk compressed once, after a full flush (which
    resets the window, so every chunk compresses to the same bytes), repeated, then a final empty block."""
    chunk = 2**24
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = squeeze.compress(bytes(chunk)) + squeeze.flush(zlib.Z_FULL_FLUSH)
    return block * (size // chunk) + zlib.compressobj(9, zlib.DEFLATED, -15).flush()


def summary(*args: Any) -> tuple[subprocess.CompletedProcess, int]:
    """``econarena-summary`` in one process (``--workers 1``, so its peak memory is one child's):
    (its result, its peak resident set in bytes). Bounded by a hang guard."""
    with open(os.devnull, "rb") as stdin:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen([cli("econarena-summary"), "--workers", "1", *map(str, args)], stdin=stdin,
                                    stdout=out, stderr=err, env=base_env())
            deadline = time.monotonic() + HANG_GUARD_S
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    proc.kill()
                    os.wait4(proc.pid, 0)
                    pytest.fail(f"econarena-summary {args} did not end within {HANG_GUARD_S} s")
                time.sleep(0.05)
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            done = subprocess.CompletedProcess(proc.args, proc.returncode, out.read().decode(), err.read().decode())
    return done, usage.ru_maxrss * 1024


def table_lines(text: str) -> list[str]:
    """The table's rows of the evaluated player, each with its cells single-spaced (the table's
    widths follow its widest cell, which another file's column may change)."""
    return ["  ".join(cell.strip() for cell in line.split("  ") if cell.strip())
            for line in text.splitlines() if line.startswith(ROW)]


@pytest.fixture(scope="module")
def alone(tmp_path_factory, members) -> list[str]:
    """The good log's rows when it is read alone."""
    folder = tmp_path_factory.mktemp("alone")
    write_eval(folder / "good.eval", members)
    proc, _ = summary(folder, "--strict")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = table_lines(proc.stdout)
    assert rows and "finished" in rows[0] and "!!" not in proc.stdout
    return rows


def other_condition(members: dict[str, Any]) -> dict[str, Any]:
    """``members`` as a log of another condition (temperature 0.3), so that it never competes with
    the good log for its column: what is said of it is its own."""
    out = copy.deepcopy(members)
    for name in ("header.json", "_journal/start.json"):
        out[name]["eval"]["metadata"]["econarena_spec"]["args"]["temperature"] = 0.3
    return out


def assert_confined(proc: subprocess.CompletedProcess, bad: Path, alone: list[str]) -> None:
    """The tool ended without a traceback, named the bad file, and the good log's rows are intact."""
    said = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), said
    assert "Traceback" not in said, said
    assert str(bad) in said, said
    for row in alone:
        assert row in table_lines(proc.stdout), said


def _store(sample: dict[str, Any]) -> dict[str, Any]:
    return sample["store"]


# One field of the wrong type (or null, or missing) in one sample or the header, as a user found them.
def _runs_int(m):
    _store(m["samples/1_epoch_1.json"])["econarena_runs"] = 7


def _players_int(m):
    _store(m["samples/1_epoch_1.json"])["econarena_players"] = 7


def _calls_int(m):
    _store(m["samples/1_epoch_1.json"])["econarena_calls"] = 7


def _error_text(m):
    m["samples/1_epoch_1.json"]["store"] = {}
    m["samples/1_epoch_1.json"]["error"] = "boom"


def _header_list(m):
    m["header.json"] = [m["header.json"]]


def _metric_null(m):
    _store(m["samples/1_epoch_1.json"])["econarena_session"]["eas"] = None


def _metric_missing(m):
    del _store(m["samples/1_epoch_1.json"])["econarena_session"]["win_rate"]


def _session_int(m):
    _store(m["samples/1_epoch_1.json"])["econarena_session"] = 7


def _eval_text(m):
    m["header.json"]["eval"] = "x"


def _model_list(m):
    m["header.json"]["eval"]["model"] = []


WRONG_TYPES = [_runs_int, _players_int, _calls_int, _error_text, _header_list, _metric_null, _metric_missing,
               _session_int, _eval_text, _model_list]


@pytest.mark.parametrize("change", WRONG_TYPES, ids=[f.__name__.strip("_") for f in WRONG_TYPES])
def test_a_field_of_the_wrong_type_costs_only_its_file(tmp_path, members, alone, change):
    write_eval(tmp_path / "good.eval", members)
    bad = other_condition(members)
    change(bad)
    write_eval(tmp_path / "bad.eval", bad)
    proc, _ = summary(tmp_path)
    assert_confined(proc, tmp_path / "bad.eval", alone)


def test_a_member_nested_100000_deep_costs_only_its_sample(tmp_path, members, alone):
    write_eval(tmp_path / "good.eval", members)
    bad = other_condition(members)
    deep = b"[" * 100_000 + b"]" * 100_000
    del bad["samples/2_epoch_1.json"]
    write_eval(tmp_path / "bad.eval", bad, raw={"samples/2_epoch_1.json": deep})
    proc, _ = summary(tmp_path, "--strict")
    assert_confined(proc, tmp_path / "bad.eval", alone)
    assert proc.returncode == 1  # a sample lost: the log is not finished
    assert "1 of 4 session(s) missing" in proc.stdout


def test_a_header_nested_100000_deep_refuses_its_file_in_one_line(tmp_path, members, alone):
    write_eval(tmp_path / "good.eval", members)
    bad = other_condition(members)
    del bad["header.json"]
    write_eval(tmp_path / "bad.eval", bad, raw={"header.json": b"[" * 100_000 + b"]" * 100_000})
    proc, _ = summary(tmp_path)
    assert_confined(proc, tmp_path / "bad.eval", alone)
    assert f"{tmp_path / 'bad.eval'}: skipped: not a readable inspect log" in proc.stderr


@pytest.mark.parametrize("method, size_field", [("zstd", 100), ("deflate", 2**32 - 2)])
def test_a_member_that_inflates_past_its_bound_is_skipped_whatever_its_size_field_says(tmp_path, members, alone,
                                                                                       method, size_field):
    """A sample that inflates far past ``MAX_MEMBER_BYTES`` (6 GiB of zstd, 1 GiB of deflate: zeros),
    whose size field says 100 B (zstd) or 4 GiB (deflate, whose reader would otherwise trust it): read up
    to the bound, then skipped, named; the tool ends in less than 1 GiB of memory."""
    size = 6 * GIB if method == "zstd" else GIB
    payload = zstd_zeros(size) if method == "zstd" else deflate_zeros(size)
    assert size > 2 * MAX_MEMBER_BYTES and len(payload) < 2**23
    write_eval(tmp_path / "good.eval", members)
    bad = other_condition(members)
    del bad["samples/3_epoch_1.json"]
    write_eval(tmp_path / "bad.eval", bad, raw={"samples/3_epoch_1.json": payload})
    relabel(tmp_path / "bad.eval", "samples/3_epoch_1.json", 93 if method == "zstd" else zipfile.ZIP_DEFLATED,
            size_field)
    proc, peak = summary(tmp_path, "--strict")
    assert_confined(proc, tmp_path / "bad.eval", alone)
    assert proc.returncode == 1 and "1 of 4 session(s) missing" in proc.stdout
    assert peak < GIB, f"peak resident set {peak / 2**20:.0f} MiB"


def test_a_zstd_member_is_read_as_inspect_writes_it(tmp_path, members):
    """The zstd path itself: a log whose every member is zstd (method 93, as inspect writes) reads
    as the fixture does (the bomb above is refused by the bound, not by the method)."""
    raw = {name: zstandard.ZstdCompressor().compress(json.dumps(v).encode()) for name, v in members.items()}
    path = write_eval(tmp_path / "z.eval", {}, raw=raw)
    for name in raw:
        relabel(path, name, 93, len(json.dumps(members[name]).encode()))
    proc, _ = summary(tmp_path, "--strict")
    assert proc.returncode == 0 and table_lines(proc.stdout), proc.stdout + proc.stderr


def test_a_member_of_a_compression_this_reader_does_not_know_is_named(tmp_path, members, alone):
    write_eval(tmp_path / "good.eval", members)
    bad = other_condition(members)
    data = json.dumps(bad.pop("samples/0_epoch_1.json")).encode()
    write_eval(tmp_path / "bad.eval", bad, raw={"samples/0_epoch_1.json": data})
    relabel(tmp_path / "bad.eval", "samples/0_epoch_1.json", 99, len(data))
    proc, _ = summary(tmp_path, "--strict")
    assert_confined(proc, tmp_path / "bad.eval", alone)
    assert proc.returncode == 1 and "1 of 4 session(s) missing" in proc.stdout


def test_a_json_log_past_its_bound_is_refused_unread(tmp_path, members, alone):
    """A 3 GB inspect ``.json`` log (sparse: no disk) is refused at its size, not read whole."""
    write_eval(tmp_path / "good.eval", members)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.write(b'{"version": 2, "status": "success", "eval": {}, "samples": [')
        f.truncate(3 * 10**9)
    proc, peak = summary(tmp_path)
    assert_confined(proc, big, alone)
    assert f"{big}: skipped: an inspect .json log of more than" in proc.stderr
    assert peak < GIB


def test_a_zip_directory_past_its_bound_is_refused_unread(tmp_path, members, alone):
    """A 3 GB .eval (sparse) whose zip directory says it is 3 GB: refused by its end record, where
    zipfile would read the directory whole."""
    write_eval(tmp_path / "good.eval", members)
    big = tmp_path / "big.eval"
    size = 3 * 10**9
    with open(big, "wb") as f:
        f.write(b"PK\x03\x04" + bytes(26))
        f.seek(30 + size)
        f.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 9, 9, size, 30, 0))
    proc, peak = summary(tmp_path)
    assert_confined(proc, big, alone)
    assert f"{big}: skipped: its zip directory holds 9 entries in {size} bytes" in proc.stderr
    assert peak < GIB


def test_a_json_log_reads_as_its_eval_does(tmp_path, members, alone):
    whole = {**members["header.json"], "samples": [v for k, v in sorted(members.items()) if k.startswith("samples/")]}
    (tmp_path / "log.json").write_text(json.dumps(whole))
    proc, _ = summary(tmp_path, "--strict")
    assert proc.returncode == 0 and table_lines(proc.stdout) == alone, proc.stdout + proc.stderr


def test_missing_samples_leave_the_log_unfinished_and_fail_strict(tmp_path, members):
    cut = {k: v for k, v in members.items() if k not in ("samples/1_epoch_1.json", "samples/3_epoch_1.json")}
    write_eval(tmp_path / "cut.eval", cut)
    proc, _ = summary(tmp_path, "--strict")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 of 4 session(s) missing" in proc.stdout and "partial" in proc.stdout
    assert str(tmp_path / "cut.eval") in proc.stdout
    assert "finished" not in table_lines(proc.stdout)[0]


def test_two_epochs_are_refused_in_one_line_naming_the_file(tmp_path, members, alone):
    """``inspect eval --epochs 2`` writes ``eval.config.epochs`` 2 and each sample twice
    (``samples/<id>_epoch_<n>.json``, its ``epoch`` field n): refused, never merged into one session."""
    write_eval(tmp_path / "good.eval", members)
    two = other_condition(members)
    for name in ("header.json", "_journal/start.json"):
        two[name]["eval"]["config"]["epochs"] = 2
    for name in [n for n in two if n.startswith("samples/")]:
        again = copy.deepcopy(two[name])
        again["epoch"] = 2
        two[name.replace("_epoch_1", "_epoch_2")] = again
    write_eval(tmp_path / "epochs.eval", two)
    proc, _ = summary(tmp_path, "--strict")
    assert_confined(proc, tmp_path / "epochs.eval", alone)
    named = [line for line in proc.stderr.splitlines() if str(tmp_path / "epochs.eval") in line]
    assert len(named) == 1 and "skipped: holds 2 epochs" in named[0], proc.stderr
    assert "not what the runs score" not in proc.stdout
    # the epochs alone, without the header's word: refused all the same
    del two["header.json"]["eval"]["config"]["epochs"]
    write_eval(tmp_path / "epochs.eval", two)
    proc, _ = summary(tmp_path / "epochs.eval")
    assert "skipped: holds 2 epochs" in proc.stderr and not table_lines(proc.stdout)
    # a .json log: its samples' epoch fields alone
    whole = {**two["header.json"], "samples": [v for k, v in sorted(two.items()) if k.startswith("samples/")]}
    (tmp_path / "epochs.json").write_text(json.dumps(whole))
    proc, _ = summary(tmp_path / "epochs.json")
    assert "skipped: holds 2 epochs" in proc.stderr and not table_lines(proc.stdout)


def test_a_model_the_calls_did_not_run_is_named_and_not_shown(tmp_path, members):
    claimed = copy.deepcopy(members)
    for name in ("header.json", "_journal/start.json"):
        claimed[name]["eval"]["model"] = "openai/gpt-5"
    write_eval(tmp_path / "claim.eval", claimed)
    proc, _ = summary(tmp_path, "--strict")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert table_lines(proc.stdout) and "gpt-5" not in "\n".join(proc.stdout.splitlines()[:4])
    assert "the log claims model openai/gpt-5, but its calls ran econarena/level2 (40 call(s))" in proc.stdout


def test_a_stopped_inspect_log_s_hint_is_a_command_inspect_takes(tmp_path, members):
    stopped = copy.deepcopy(members)
    stopped["header.json"]["status"] = "error"
    stopped["header.json"]["error"] = {"message": "RuntimeError: the endpoint went away", "traceback": ""}
    for name in ("samples/2_epoch_1.json", "samples/3_epoch_1.json"):
        del stopped[name]
    write_eval(tmp_path / "stopped.eval", stopped)
    proc, _ = summary(tmp_path / "stopped.eval")
    said = proc.stdout
    assert f"inspect eval-retry {tmp_path / 'stopped.eval'}" in said, said
    assert "oaieval" not in said and "resume_from" not in said and "only the others" not in said
    assert "played again from its first run" in said
    # killed: no header, only the journal's start; eval-retry is not offered, the task's own line is
    killed = {k: v for k, v in stopped.items() if k != "header.json"}
    write_eval(tmp_path / "killed.eval", killed)
    proc, _ = summary(tmp_path / "killed.eval")
    assert ("inspect eval econarena_evals/beauty_L --model econarena/level2 --model-role player2=econarena/nash "
            "--limit 4") in proc.stdout, proc.stdout
    assert "every session is played, and paid, again" in proc.stdout and "oaieval" not in proc.stdout
