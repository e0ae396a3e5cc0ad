"""The quicker paths to the log write what the slower ones wrote, byte for byte.

Each shortcut (the storable check without json, evals' line without its deep copy, prompts joined
from pieces) is held against the path it replaced: drawn values in process, and the real
``oaieval`` with built-in players and with a fn that records nothing.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import evals.data
import evals.record
import pytest
from evals.record import Event
from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.core.prompts import ANSWER_FORMAT, fmt, messages
from econarena_evals.games import auction, beauty, first_price
from econarena_evals.integration.recorder import _plainly_storable, write_events_quickly
from econarena_evals.log.format import RUN_EVENT, SEAT_TAG

from conftest import REGISTRY, base_env, cli, run_cli, users_fn

ANY_TEXT = st.text(st.characters(codec=None, categories=["Cs", "Cc", "Lu", "Ll", "Nd", "Po", "So", "Zs"]))


class Text(str):
    pass


class Number(float):
    pass


@dataclasses.dataclass
class Point:
    x: int


LEAVES = (ANY_TEXT | st.integers() | st.floats() | st.booleans() | st.none()
          | st.builds(Text, ANY_TEXT) | st.builds(Number, st.floats()) | st.just(10 ** 4000)
          | st.builds(Point, st.integers()) | st.just(Path("/a/b")))
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                      | st.dictionaries(ANY_TEXT, inner, max_size=4), max_leaves=20)


def json_says_storable(data) -> bool:
    """The check the quick one replaced: json writes it, and its UTF-8 encoding succeeds."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):
        return False
    return True


@given(data=VALUES)
def test_the_quick_storable_check_says_what_json_says(data):
    assert _plainly_storable("econarena_run", data) == json_says_storable(data)
    assert _plainly_storable("sampling", {"prompt": data, "sampled": ["a reply"]}) == json_says_storable(data)


def outcome(evals_way, our_way):
    """(line, None) or (None, exception type) of each way: they must agree on both."""
    results = []
    for way in (evals_way, our_way):
        try:
            results.append((way(), None))
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            results.append((None, type(exc)))
    return results


@given(data=VALUES, sample_id=st.none() | ANY_TEXT)
def test_an_event_line_is_the_one_evals_writes(data, sample_id):
    write_events_quickly()
    event = Event(run_id="run1", event_id=3, sample_id=sample_id, type="sampling", data=data, created_by="",
                  created_at="2026-12-01 14:41:51.784167+00:00")
    evals_way, ours = outcome(lambda: evals.data.jsondumps(event, exclude_keys=[]),
                              lambda: evals.record.jsondumps(event, exclude_keys=[]))
    assert ours == evals_way
    assert evals_way[0] is None or evals_way[0].startswith('{"run_id": "run1", "event_id": 3, ')


def test_hidden_fields_and_other_objects_still_go_the_way_evals_writes_them():
    write_events_quickly()
    event = Event(run_id="r", event_id=0, sample_id="s", type="t", data={"prompt": "p", "secret": 1},
                  created_by="", created_at="now")
    hidden = evals.record.jsondumps(event, exclude_keys=["secret"])
    assert hidden == evals.data.jsondumps(event, exclude_keys=["secret"]) and "secret" not in hidden
    report = {"final_report": {"a": Path("/x")}, "run_id": "r"}
    assert evals.record.jsondumps(report) == evals.data.jsondumps(report)
    assert evals.record.jsondumps(report) == '{"final_report": {"a": "/x"}, "run_id": "r"}'


def test_the_local_flush_writes_the_bytes_and_counts_evals_flush_writes(tmp_path):
    """``local_flush`` opens the log with ``open`` instead of blobfile: the same events flushed by it and
    by evals' own ``_flush_events_internal``, one at a time and together, give the same file and counters;
    a path that is not local (a bucket's) stays evals' to write."""
    from evals.base import RunSpec

    from econarena_evals.integration.recorder import local_flush

    write_events_quickly()
    spec = RunSpec(completion_fns=["f"], eval_name="e", base_eval="e", split="s", run_config={}, created_by="")
    events = [Event(run_id="r", event_id=k, sample_id="s.0", type="sampling", created_by="", created_at="now",
                    data={"prompt": [{"role": "user", "content": f"p{k} é"}], "sampled": ["x\u2028"],
                          "usage": {"total_tokens": k}}) for k in range(3)]
    theirs = evals.record.LocalRecorder(str(tmp_path / "theirs.jsonl"), spec)
    ours = evals.record.LocalRecorder(str(tmp_path / "ours.jsonl"), spec)
    quick = local_flush(ours)
    assert quick is not None
    for batch in (events[:1], events[1:]):
        evals.record.LocalRecorder._flush_events_internal(theirs, batch)
        quick(batch)
    assert (tmp_path / "ours.jsonl").read_bytes() == (tmp_path / "theirs.jsonl").read_bytes()
    assert ours._flushes_done == theirs._flushes_done == 2
    assert local_flush(evals.record.LocalRecorder(None, spec)) is None
    bucket = evals.record.LocalRecorder(None, spec)
    bucket.event_file_path = "gs://bucket/log.jsonl"
    assert local_flush(bucket) is None


PAST = st.builds(lambda run, actions, winners: (run, actions, winners), st.integers(1, 10),
                 st.lists(st.none() | st.floats(0, 1000), min_size=2, max_size=6),
                 st.lists(st.integers(1, 6), max_size=3))
NUMBER = st.integers(0, 10 ** 6) | st.floats(0, 10 ** 6)


@given(seat=st.integers(1, 9), n=st.integers(2, 9), run=st.integers(1, 20), runs=st.integers(1, 20),
       c_bar=NUMBER, prize=NUMBER, past=st.lists(PAST, max_size=3))
def test_a_beauty_prompt_is_the_template_formatted_whole(seat, n, run, runs, c_bar, prize, past):
    shown = [beauty.PastRun(r, tuple(a), tuple(w), average=c_bar / 3, target=c_bar / 5) for r, a, w in past]
    assert beauty.prompt(seat=seat, n=n, run=run, runs=runs, c_bar=c_bar, prize=prize, past=shown) == messages(
        beauty.TEMPLATE.format(seat=seat, n=n, run=run, runs=runs, c_bar=fmt(c_bar), prize=fmt(prize),
                               history=beauty.history(shown),
                               answer=ANSWER_FORMAT.format(what="the number you choose")))


@given(seat=st.integers(1, 9), n=st.integers(2, 9), run=st.integers(1, 20), runs=st.integers(1, 20), value=NUMBER,
       assets=NUMBER, fee=NUMBER, dist=st.tuples(NUMBER, NUMBER, NUMBER, NUMBER), past=st.lists(PAST, max_size=3))
def test_an_auction_prompt_is_the_template_formatted_whole(seat, n, run, runs, value, assets, fee, dist, past):
    shown = [first_price.PastRun(r, tuple(a), tuple(w), price=fee) for r, a, w in past]
    common = dict(seat=seat, n=n, run=run, runs=runs, value=fmt(value), assets=fmt(assets), fee=fmt(fee),
                  history=first_price.history(shown), answer=ANSWER_FORMAT.format(what="your bid"))
    mean, sd, lo, hi = dist
    assert first_price.prompt(seat=seat, n=n, run=run, runs=runs, value=value, assets=assets, fee=fee, dist=dist,
                              past=shown) == messages(first_price.TEMPLATE.format(
                                  **common, mean=fmt(mean), sd=fmt(sd), lo=fmt(lo), hi=fmt(hi),
                                  payment=first_price.PAYMENT.format(assets=fmt(assets))))
    assert auction.prompt(seat=seat, n=n, run=run, runs=runs, value=value, assets=assets, fee=fee,
                               past=shown) == messages(auction.TEMPLATE.format(
                                   **common, payment=auction.PAYMENT.format(assets=fmt(assets))))


def test_an_int_and_a_float_of_one_value_keep_their_own_prompts():
    assert "between 0 and 5" in beauty.prompt(seat=1, n=5, run=1, runs=10, c_bar=5, prize=100)[1]["content"]
    assert "with 5 players" in beauty.prompt(seat=1, n=5, run=1, runs=10, c_bar=5, prize=100)[1]["content"]
    assert "with 5.0 players" in beauty.prompt(seat=1, n=5.0, run=1, runs=10, c_bar=5, prize=100)[1]["content"]


def assert_lines_are_evals_own(path: Path) -> list[dict]:
    """Every event line as evals' own ``jsondumps`` writes that event, and the rows."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "event_id" in row:
                assert evals.data.jsondumps(Event(**row)) + "\n" == line
            rows.append(row)
    assert sum("event_id" in row for row in rows) > 100
    return rows


def assert_prompts_are_the_template_formatted_whole(rows: list[dict], seats: int, runs: int, prize: float) -> None:
    c_bars = {(r["data"]["session"], r["data"]["run"]): r["data"]["c_bar"] for r in rows if r.get("type") == RUN_EVENT}
    calls = [r["data"] for r in rows if r.get("type") == "sampling"]
    for call in calls:
        tag = call[SEAT_TAG]
        assert call["prompt"] == messages(beauty.TEMPLATE.format(
            seat=tag["seat"], n=seats, run=tag["run"] + 1, runs=runs, c_bar=fmt(c_bars[(tag["session"], tag["run"])]),
            prize=fmt(prize), history="", answer=ANSWER_FORMAT.format(what="the number you choose")))
    assert len(calls) == len(c_bars) * seats


@pytest.mark.parametrize("players", ["econarena/nash", "econarena/random,econarena/ch"])
@pytest.mark.e2e
def test_a_log_of_built_in_players_is_what_evals_writes_of_the_prompts_the_templates_make(tmp_path, players):
    path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), players, "econarena.beauty_L", "--registry_path", str(REGISTRY), "--record_path",
             str(path), "--max_samples", "4"], base_env())
    assert_prompts_are_the_template_formatted_whole(assert_lines_are_evals_own(path), 5, 10, 100)


@pytest.mark.e2e
def test_a_log_of_a_fn_that_records_nothing_is_what_evals_writes(tmp_path):
    reply = '{"choice": 1, "reason": "\u00e9 \ud800 \u2603 \U0001f600"}'  # é, a lone surrogate, a snowman, an emoji
    registry, env = users_fn(tmp_path, "quiet", "self, prompt, **kwargs", reply)
    path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), "quiet", "econarena.beauty_L", "--registry_path", str(registry), "--record_path",
             str(path), "--max_samples", "3"], env)
    rows = assert_lines_are_evals_own(path)
    assert_prompts_are_the_template_formatted_whole(rows, 5, 10, 100)
    assert {r["data"]["recorded_by"] for r in rows if r.get("type") == "sampling"} == {"econarena"}
