"""An example CompletionFn for EconArena: the shape every completion fn of your own needs.

Replace ``answer`` with a call to your model. What the eval gives you and expects back:

* ``prompt`` is a list of chat messages: ``[{"role": "system", "content": ...},
  {"role": "user", "content": ...}]``, the user message holding the rules, your seat number, the
  range (or your private value and assets), any history, and the JSON answer format.
* keyword arguments ``temperature`` (0.7 by default), ``max_tokens`` (1024) and ``seed`` (an int
  per session, run and seat) arrive on every call; accept ``**kwargs`` even if you ignore them.
* return a ``CompletionResult`` whose ``get_completions()`` is ``[reply_text]``; the eval reads
  the ``choice`` of the last JSON object in the reply.
* the game facts the prompt states (which game, your seat, the run, the range or your private
  value and assets, the history shown) come from ``econarena_evals.games.read_prompt(prompt)``:
  no need to parse the English text.
* call ``record_sampling`` yourself, so the log holds your model's name and usage (if you don't,
  the eval records the prompt and reply for you, under ``recorded_by: econarena``); pass your
  model's token counts as ``usage={"prompt_tokens": ..., "completion_tokens": ...}`` and the
  summary and report count and price them (docs/players.md).
"""
from __future__ import annotations

import json
from typing import Any

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from econarena_evals.games import read_prompt


class Reply(CompletionResult):
    def __init__(self, text: str) -> None:
        self.text = text

    def get_completions(self) -> list[str]:
        return [self.text]


class ThirdOfRange(CompletionFn):
    """Picks ``share`` of the range in a beauty contest and bids its value in an auction."""

    def __init__(self, share: float = 1 / 3, **kwargs: Any) -> None:
        # evals passes registry= (and any --completion_args) as keywords: take what you need.
        self.share = float(share)

    def answer(self, prompt: list[dict[str, str]], **kwargs: Any) -> str:
        facts = read_prompt(prompt)  # game, seat, run, upper (c_bar or assets), value, history shown
        choice = facts.value if facts.value is not None else self.share * facts.upper
        return json.dumps({"understanding": f"{facts.game}, seat {facts.seat}, run {facts.run} of {facts.runs}",
                           "choice": choice, "reason": "a fixed rule"})

    def __call__(self, prompt: list[dict[str, str]], **kwargs: Any) -> Reply:
        reply = self.answer(prompt, **kwargs)  # your model goes here; kwargs: temperature, max_tokens, seed
        record_sampling(prompt=prompt, sampled=[reply], model="my/third-of-range")
        return Reply(reply)
