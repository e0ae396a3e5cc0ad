"""An example CompletionFn for EconArena: the shape every completion fn of your own needs.

Replace ``answer`` with a call to your model. What the eval gives you and expects back:

* ``prompt`` is a list of chat messages: ``[{"role": "system", "content": ...},
  {"role": "user", "content": ...}]``, the user message holding the rules, your seat number, the
  range (or your private value and assets), any history, and the JSON answer format.
* keyword arguments ``temperature`` (0.7 by default), ``max_tokens`` (1024) and ``seed`` (an int
  per session, run and seat) arrive on every call; accept ``**kwargs`` even if you ignore them.
* return a ``CompletionResult`` whose ``get_completions()`` is ``[reply_text]``; the eval reads
  the ``choice`` of the last JSON object in the reply.
* call ``record_sampling`` yourself: evals' log gets one ``sampling`` event per seat call only if
  the completion fn records it (evals' own fns do; a fn of yours must).
"""
from __future__ import annotations

import json
import re
from typing import Any

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

_RANGE = re.compile(r"between 0 and ([0-9]+(?:\.[0-9]+)?)")
_VALUE = re.compile(r"Your private value for the item in this run is ([0-9]+(?:\.[0-9]+)?)")


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

    def answer(self, text: str, **kwargs: Any) -> str:
        value = _VALUE.search(text)
        if value is not None:
            choice = float(value.group(1))
        else:
            upper = _RANGE.search(text)
            choice = self.share * float(upper.group(1)) if upper else 0.0
        return json.dumps({"understanding": "example", "choice": choice, "reason": "a fixed rule"})

    def __call__(self, prompt: list[dict[str, str]], **kwargs: Any) -> Reply:
        text = "\n".join(m["content"] for m in prompt)
        reply = self.answer(text, **kwargs)  # your model goes here; kwargs: temperature, max_tokens, seed
        record_sampling(prompt=prompt, sampled=[reply], model="my/third-of-range")
        return Reply(reply)
