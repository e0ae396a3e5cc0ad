"""Built-in players: CompletionFns that read the same prompt a model reads and answer in the same JSON.

They need no network and no API key. Each leaves a ``sampling`` event, like any completion fn.
Randomness comes only from the call: the eval passes a per-(session, run, seat) ``seed``, which
the players mix with the prompt text, so a rerun with the same eval seed gives identical choices
while different runs and seats get different draws.

A player knows the game from the prompt (``read_prompt``) and asks that game's module how its kind
of player plays it (``nash``, ``random_play``, ``level_k``, ``cognitive_hierarchy``, ``human``,
``shade``, ``overbid``): the figures and their sources live with each game in ``games/``.
"""
from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Optional

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from ..core.prompts import PromptFacts, prompt_text
from ..games import Game, read_prompt
from ..games import get as get_game


class PlayerResult(CompletionResult):
    def __init__(self, answer: str) -> None:
        self.answer = answer

    def get_completions(self) -> list[str]:
        return [self.answer]


def call_rng(text: str, seed: Any) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{text}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class BuiltinPlayer(CompletionFn):
    """Base class: subclasses say what to choose and why, given the game and the facts of the prompt."""

    name = "econarena/builtin"
    understanding = "A game with a clear rule for payoffs."

    def __init__(self, registry: Optional[Any] = None, name: Optional[str] = None, **_options: Any) -> None:
        # evals passes registry= to every registered completion fn; players need nothing from it.
        if name is not None:
            self.name = str(name)

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        raise NotImplementedError

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return self.play(get_game(facts.game), facts, rng)

    def __call__(self, prompt: Any, **kwargs: Any) -> CompletionResult:
        text = prompt_text(prompt)
        facts = read_prompt(text)
        choice, reason = self.choose(facts, call_rng(text, kwargs.get("seed")))
        answer = json.dumps({"understanding": self.understanding, "choice": choice, "reason": reason})
        record_sampling(prompt=prompt, sampled=[answer], model=self.name)
        return PlayerResult(answer)


class NashPlayer(BuiltinPlayer):
    """Equilibrium play: the game's NE action for this seat (0; a truthful bid; the BNE bid b(v))."""

    name = "econarena/nash"
    understanding = "I play the Nash equilibrium of the game."

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["nash"](facts, rng)


class RandomPlayer(BuiltinPlayer):
    """Uniform over the valid range: [0, c_bar], or [0, assets] for a bid. Also ``econarena/level0``."""

    name = "econarena/random"
    understanding = "I pick uniformly at random from the allowed range."

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["random"](facts, rng)


class LevelKPlayer(BuiltinPlayer):
    """Level-k reasoning (Nagel 1995; Stahl and Wilson 1995), k >= 1; each game says what level k plays."""

    k = 1

    def __init__(self, registry: Optional[Any] = None, k: Optional[Any] = None, **options: Any) -> None:
        super().__init__(registry, **options)
        if k is not None:
            self.k = int(k)
        if self.k < 1:
            raise ValueError("level-k players need k >= 1; level 0 is econarena/level0")
        self.name = options.get("name") or f"econarena/level{self.k}"

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["level_k"](facts, rng, self.k)


class CognitiveHierarchyPlayer(BuiltinPlayer):
    """Cognitive hierarchy (Camerer, Ho and Chong 2004) with its own τ (mean number of steps; people
    ≈ 1.5) and σ (noise sd of a step's choice, as a share of the range): each call draws a step from
    Poisson(τ), and the game says what that step plays. Registry: econarena/ch (τ = 1.5, or
    --completion_args tau=..,sigma=..), econarena/ch-0.5, ch-1.5, ch-3."""

    name = "econarena/ch"
    understanding = "I think a few steps ahead of players who think fewer steps than I do."

    def __init__(self, registry: Optional[Any] = None, tau: Any = 1.5, sigma: Any = 0.03, **options: Any) -> None:
        super().__init__(registry, **options)
        self.tau, self.sigma = float(tau), float(sigma)
        if not (0 <= self.tau <= 100):
            raise ValueError(f"econarena/ch needs 0 <= tau <= 100, got {tau!r}")
        if not (0 < self.sigma <= 1):
            raise ValueError(f"econarena/ch needs 0 < sigma <= 1 (a share of the range), got {sigma!r}")

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["cognitive_hierarchy"](facts, rng, self.tau, self.sigma)


class ShadingBidder(BuiltinPlayer):
    """Bids a fixed share of its value (default 0.75, near the 0.74-0.78 of value GPT-4 and GPT-4o bid
    in GAMA-Bench's first-price auction). Where there is no bid (beauty contest) it plays like level 1."""

    name = "econarena/shade"
    understanding = "I bid below my value to keep a margin."

    def __init__(self, registry: Optional[Any] = None, share: Any = 0.75, **options: Any) -> None:
        super().__init__(registry, **options)
        self.share = float(share)

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["shade"](facts, rng, self.share)


class OverbiddingBidder(ShadingBidder):
    """Bids above its value (default 1.25 times, capped at its assets), the classic laboratory
    mistake in second-price auctions. Where there is no bid (beauty contest) it plays like level 1."""

    name = "econarena/overbid"
    understanding = "I bid above my value to make sure I win."

    def __init__(self, registry: Optional[Any] = None, share: Any = 1.25, **options: Any) -> None:
        super().__init__(registry, share=share, **options)

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["shade"](facts, rng, self.share)


class HumanPlayer(BuiltinPlayer):
    """Calibrated to laboratory people: Nagel (1995) in the beauty contest, overbidding in the
    second-price auction, bids between the equilibrium and the value in the first-price auction.
    The models and their sources are in each game's module; figures in README, "Players"."""

    name = "econarena/human"
    understanding = "I think about what the others will choose."

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["human"](facts, rng)
