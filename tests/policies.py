"""Deterministic answer policies for the test server: a mix of sound play, reasoning blocks,
fenced JSON, string numbers, prose and out-of-range numbers, so end-to-end runs exercise the parser
and the scorer on every kind of answer a model sends."""
from __future__ import annotations

import json

from econarena_evals.games import read_prompt


def scripted(text: str) -> str:
    facts = read_prompt(text)
    seat, run, upper = facts.seat, facts.run, facts.upper
    if facts.game == "beauty":
        last = facts.past_averages[-1] if facts.past_averages else None
        guesses = {
            1: upper / 3,
            2: 0.0,
            3: upper / 2,
            4: upper * (2 / 3) ** run,
            5: (2 / 3) * last if last is not None else upper / 4,
        }
    else:
        assert facts.value is not None
        guesses = {1: facts.value, 2: 0.8 * facts.value, 3: facts.value / 2,
                   4: min(upper, 1.1 * facts.value), 5: facts.value}
    choice = guesses[seat]
    if seat == 2:  # reasoning block holding a decoy, then a fenced answer with a string number
        return (f'<think>Maybe {{"choice": {upper}}}? No.</think>\n```json\n'
                + json.dumps({"understanding": "u", "choice": str(choice), "reason": "r"}) + "\n```")
    if seat == 3 and run % 2 == 1:
        return f"I would pick {choice}, I think."  # prose: a rule break
    if seat == 4 and run == 2:
        choice = upper + 1  # out of range: a rule break
    return json.dumps({"understanding": "I get it.", "choice": choice, "reason": "scripted"})
