"""Adversarial replies through the parser and the scorer: never an exception.

(bench/fuzz.py runs 10,000 such replies and prints the time per reply; tests assert no timings.)
"""
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econarena_evals.core.answers import parse_choice
from econarena_evals.games import auction, beauty

digits = st.sampled_from(["0", "7", "\u0667", "\uff17", "\u09ed", "1e309", "-0", "1" * 500, "NaN", "Infinity"])
control = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=31), max_size=20)
fragments = st.one_of(
    st.text(max_size=50),
    control,
    digits,
    st.sampled_from(['{"choice": ', "}", "{", '"', "```json", "```", "<think>", "</think>", "\\u0000", "[", "]", ","]),
    st.builds(lambda d: json.dumps({"choice": d}), st.one_of(digits, st.floats(), st.integers(), st.text(max_size=5))),
    st.builds(lambda n: '{"a":' * n + "1" + "}" * n, st.integers(0, 3000)),
    st.builds(lambda n: "{" * n, st.integers(0, 5000)),
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(fragments, max_size=12))
def test_adversarial_replies_are_numbers_or_rule_breaks(parts):
    text = "".join(parts)
    choice = parse_choice(text)
    assert choice is None or isinstance(choice, float)
    players = ["p"] * 5
    b = beauty.score_run([choice] * 5, c_bar=100, prize=100, players=players)
    a = auction.score_run([choice] * 5, values=[50] * 5, assets=100, fee=10, players=players)
    assert sum(s.valid for s in b.seats) in (0, 5) and sum(s.valid for s in a.seats) in (0, 5)


def test_megabyte_replies():
    assert parse_choice("x" * 1_000_000 + '{"choice": 3}') is None  # over the answer limit: a rule break
    assert parse_choice("<think>" + "x" * 1_000_000 + '</think>{"choice": 3}') == 3.0  # reasoning is dropped
    assert parse_choice("{" * 1_000_000) is None
    assert parse_choice('{"choice": 1' + "0" * 1_000_000 + "}") is None
