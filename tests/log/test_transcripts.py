"""The transcripts read where the log's one full pass found each tagged seat call, as the streaming
read finds them: the same calls, rule breaks and examples; a line that is not the call its tag
promised sends the log back to the streaming read."""
from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.transcripts import read_calls

from conftest import REGISTRY, base_env, cli, run_cli


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("transcripts") / "random.jsonl"
    run_cli([cli("oaieval"), "econarena/random", "econarena.beauty_hist", "--registry_path", str(REGISTRY),
             "--record_path", str(path), "--max_samples", "4"], base_env())
    return path


def found(calls):
    """What read_calls found (its count of sampling lines looked at is how far the stream read)."""
    out = asdict(calls)
    out.pop("sampling_events")
    return out


def streamed(path, keep):
    """read_calls as it was before the offsets: the log read line by line."""
    log = read_log(path)
    log.untagged_calls = 1  # no offsets to trust: the streaming read
    return read_calls(log, log.players, keep)


def sessions(path):
    return sorted(int(s["session"]) for s in read_log(path).sessions)


def with_breaks(path, tmp_path):
    """The log with two of the player's seats made rule breaks (their replies and their run events)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    first, second = sessions(path)[1:3]
    broken = {(first, 2, 3), (second, 5, 1)}  # (session, run, seat)
    for row in rows:
        data = row.get("data") or {}
        if row.get("type") == "sampling":
            tag = data["econarena"]
            if (tag["session"], tag["run"], tag["seat"]) in broken:
                data["sampled"] = ["I pick forty"]
        elif row.get("type") == "econarena_run":
            for seat in data["seats"]:
                if (data["session"], data["run"], seat["seat"]) in broken:
                    seat.update(action=None, valid=False, payoff=0.0)
    out = tmp_path / "broken.jsonl"
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return out


@pytest.mark.e2e
@pytest.mark.parametrize("kept", [0, 1, 4])
def test_calls_read_at_their_offsets_are_those_the_stream_finds(log_path, tmp_path, kept):
    path = with_breaks(log_path, tmp_path)
    keep = sessions(path)[:kept]
    first, second = sessions(path)[1:3]
    log = read_log(path)
    assert log.untagged_calls == 0 and len(log.call_keys) == log.calls == 4 * 10 * 5
    fast = read_calls(log, log.players, keep)
    slow = streamed(path, keep)
    assert found(fast) == found(slow)
    assert len(fast.calls) == 50 * len(keep) and sum(fast.counts.values()) == 2
    assert set(fast.kinds) == {(first, 2, 3), (second, 5, 1)}


@pytest.mark.e2e
def test_a_call_is_placed_by_its_tag_whatever_its_prompt_says(log_path, tmp_path):
    """The tag is where a call belongs: a tag that names another run than the prompt moves the call
    there (the prompt's wording is never read back), read at the offsets as by the stream."""
    rows = [json.loads(line) for line in log_path.read_text().splitlines()]
    first = sessions(log_path)[0]
    for row in rows:  # one call's tag names another run than its prompt does
        if row.get("type") == "sampling" and row["data"]["econarena"]["session"] == first:
            tag = row["data"]["econarena"]
            moved = (first, tag["run"], tag["seat"])
            tag["run"] = (tag["run"] + 1) % 10
            break
    path = tmp_path / "tampered.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    log = read_log(path)
    calls = read_calls(log, log.players, [first]).calls
    assert found(read_calls(log, log.players, [first])) == found(streamed(path, [first]))
    assert len(calls) == 49 and moved not in calls  # its own run's seat has no call left
