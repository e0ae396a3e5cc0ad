import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econarena_evals.core.answers import MAX_ANSWER_CHARS, parse_choice, rule_break_kind

CASES = [
    ("plain JSON", '{"understanding": "u", "choice": 12.5, "reason": "r"}', 12.5),
    ("integer", '{"choice": 7}', 7.0),
    ("negative (parses; the game calls it out of range)", '{"choice": -3}', -3.0),
    ("out of range (parses; the game decides)", '{"choice": 1e6}', 1e6),
    ("fenced JSON", '```json\n{"choice": 33}\n```', 33.0),
    ("fence without language", '```\n{"choice": 33}\n```', 33.0),
    ("prose around JSON", 'Sure! Here is my answer: {"choice": 20, "reason": "x"} Good luck.', 20.0),
    ("string number", '{"choice": "42"}', 42.0),
    ("string number with spaces", '{"choice": " 4.5e1 "}', 45.0),
    ("think block with numbers dropped", '<think>choice 99, {"choice": 99}</think>{"choice": 1}', 1.0),
    ("THINK in capitals", '<THINK>{"choice": 99}</THINK>\n{"choice": 2}', 2.0),
    ("only a closing think tag", 'reasoning {"choice": 99} ...</think>{"choice": 3}', 3.0),
    ("unclosed think: the answer never came", '{"choice": 5}<think>{"choice": 99}', 5.0),
    ("unclosed think with nothing before it", '<think>{"choice": 99}', None),
    ("several objects: the last one with a choice", '{"choice": 1} {"choice": 2} {"other": 3}', 2.0),
    ("nested choice does not count", '{"answer": {"choice": 5}}', None),
    ("nested before a top-level one", '{"answer": {"choice": 5}} {"choice": 6}', 6.0),
    ("prose only", "I choose 42.", None),
    ("empty", "", None),
    ("NaN", '{"choice": NaN}', math.nan),
    ("Infinity", '{"choice": Infinity}', math.inf),
    ("string NaN is not a number", '{"choice": "nan"}', None),
    ("string with two numbers", '{"choice": "between 10 and 20"}', None),
    ("string with a unit", '{"choice": "42%"}', None),
    ("unicode digits", '{"choice": "\u0664\u0662"}', None),
    ("boolean", '{"choice": true}', None),
    ("boolean false", '{"choice": false}', None),
    ("literal newline inside reason (llama.cpp)",
     '{"understanding": "u", "choice": 21, "reason": "line one\nline two"}', 21.0),
    ("literal tab inside a string", '{"understanding": "a\tb", "choice": 4}', 4.0),
    ("list", '{"choice": [1, 2]}', None),
    ("null", '{"choice": null}', None),
    ("huge integer", '{"choice": 1' + "0" * 400 + "}", math.inf),
    ("single quotes are not JSON", "{'choice': 5}", None),
    ("broken JSON then good JSON", '{"choice": 5,, } {"choice": 6}', 6.0),
    ("not a string at all", None, None),
]


@pytest.mark.parametrize("text,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parser_cases(text, expected):
    got = parse_choice(text)
    if expected is None:
        assert got is None
    elif math.isnan(expected):
        assert got is not None and math.isnan(got)
    else:
        assert got == expected


def test_an_overlong_answer_is_a_rule_break():
    assert parse_choice('{"choice": 1}' + " " * MAX_ANSWER_CHARS) is None


@settings(max_examples=500)
@given(st.text())
def test_parser_never_raises_on_arbitrary_text(text):
    got = parse_choice(text)
    assert got is None or isinstance(got, float)


json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(), st.integers(), st.text(max_size=10)),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(["choice", "a", "b"]), children, max_size=3),
    ),
    max_leaves=15,
)


@settings(max_examples=300)
@given(json_like, st.text(max_size=20), st.text(max_size=20))
def test_parser_never_raises_on_json_like_answers(value, before, after):
    import json

    text = before + json.dumps({"choice": value}) + after
    got = parse_choice(text)
    assert got is None or isinstance(got, float)


# ---- why a reply breaks the rules (the report's kinds), read by the same parser ----

KIND_CASES = [
    ("valid", '{"choice": 12}', None, None),
    ("valid at both ends", '{"choice": 0} {"choice": 40}', None, None),
    ("valid though cut off after the object", '{"choice": 12} and my reason is that becau', None, "length"),
    ("prose only", "I choose 12.", "no JSON object", None),
    ("object without choice", '{"answer": 12}', "no JSON object", None),
    ("nested choice only", '{"a": {"choice": 3}}', "no JSON object", None),
    ("string that is no number", '{"choice": "twelve"}', "not a number", None),
    ("two numbers in a string", '{"choice": "12 or 13"}', "not a number", None),
    ("boolean", '{"choice": true}', "not a number", None),
    ("NaN", '{"choice": NaN}', "not a number", None),
    ("infinite", '{"choice": 1e999}', "not a number", None),
    ("above the range", '{"choice": 41}', "out of range", None),
    ("negative", '{"choice": -0.5}', "out of range", None),
    ("cut off inside the object", '{"understanding": "long text', "cut off at token limit", "length"),
    ("cut off with a number out of range", '{"choice": 99', "cut off at token limit", "length"),
    ("empty", "", "no answer or error", None),
    ("only spaces", "  \n ", "no answer or error", None),
    ("no reply at all", None, "no answer or error", None),
    ("think block hides the only object", '<think>{"choice": 5}</think>', "no JSON object", None),
    ("over the length limit", '{"choice": 5}' + " " * MAX_ANSWER_CHARS, "no JSON object", None),
]


@pytest.mark.parametrize("name,reply,kind,finish", KIND_CASES, ids=[c[0] for c in KIND_CASES])
def test_rule_break_kind(name, reply, kind, finish):
    from econarena_evals.core.answers import RULE_BREAK_KINDS, rule_break_kind

    assert rule_break_kind(reply, 0, 40, finish) == kind
    assert kind is None or kind in RULE_BREAK_KINDS


@given(st.text(max_size=200), st.sampled_from([None, "stop", "length"]))
@settings(max_examples=300)
def test_rule_break_kind_agrees_with_the_eval_on_validity(text, finish):
    """A reply is a rule break exactly when the eval's parse gives no number in range."""
    from econarena_evals.core.answers import rule_break_kind

    x = parse_choice(text)
    valid = x is not None and math.isfinite(x) and 0 <= x <= 40
    assert (rule_break_kind(text, 0, 40, finish) is None) == valid


@pytest.mark.parametrize("digits", [29, 4000, 5000])
@pytest.mark.parametrize("sign", ["", "-"])
def test_a_number_however_long_is_out_of_range_never_no_json_or_not_a_number(digits, sign):
    """A real model wrote 16 digits; one that writes thousands still answered with a number. Past
    4,300 digits Python's int() refuses the literal and json with it: the answer is still one kind."""
    reply = '{"understanding": "x", "choice": ' + sign + "9" * digits + ', "reason": "r"}'
    assert rule_break_kind(reply, 0, 100) == "out of range"
    assert parse_choice(reply) is None or not 0 <= parse_choice(reply) <= 100  # a rule break either way


def test_nan_infinity_and_words_stay_not_a_number():
    for choice in ("NaN", "Infinity", "-Infinity", '"abc"', "true"):
        assert rule_break_kind('{"choice": ' + choice + "}", 0, 100) == "not a number", choice
