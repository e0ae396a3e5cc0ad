"""Built-in players: CompletionFns that read the same prompt a model reads and answer in the same JSON.

They need no network and no API key. Each leaves a ``sampling`` event, like any completion fn.
Randomness comes only from the call: the eval passes a per-(session, run, seat) ``seed``, which
the players mix with the prompt text, so a rerun with the same eval seed gives identical choices
while different runs and seats get different draws.
"""
from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Optional

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from .prompts import PromptFacts, prompt_text, read_prompt


class PlayerResult(CompletionResult):
    def __init__(self, answer: str) -> None:
        self.answer = answer

    def get_completions(self) -> list[str]:
        return [self.answer]


def call_rng(text: str, seed: Any) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{text}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class BuiltinPlayer(CompletionFn):
    """Base class: subclasses say what to choose and why, given the facts of the prompt."""

    name = "econarena/builtin"
    understanding = "A game with a clear rule for payoffs."

    def __init__(self, registry: Optional[Any] = None, **_options: Any) -> None:
        # evals passes registry= to every registered completion fn; players need nothing from it.
        pass

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        raise NotImplementedError

    def __call__(self, prompt: Any, **kwargs: Any) -> CompletionResult:
        text = prompt_text(prompt)
        facts = read_prompt(text)
        choice, reason = self.choose(facts, call_rng(text, kwargs.get("seed")))
        answer = json.dumps({"understanding": self.understanding, "choice": choice, "reason": reason})
        record_sampling(prompt=prompt, sampled=[answer], model=self.name)
        return PlayerResult(answer)


class NashPlayer(BuiltinPlayer):
    """Equilibrium play: 0 in the beauty contest, a truthful bid in the second-price auction."""

    name = "econarena/nash"
    understanding = "I play the Nash equilibrium of the game."

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        if facts.game == "beauty":
            return 0.0, "Iterated elimination of dominated choices leaves only 0."
        assert facts.value is not None
        return facts.value, "Bidding my value is a weakly dominant strategy in a second-price auction."


class RandomPlayer(BuiltinPlayer):
    """Uniform over the valid range: [0, c_bar], or [0, assets] for a bid."""

    name = "econarena/random"
    understanding = "I pick uniformly at random from the allowed range."

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return rng.uniform(0.0, facts.upper), "A uniform draw over the allowed range."
