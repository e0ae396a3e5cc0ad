"""The built-in players as plain objects, for every front end: each reads the prompt a model reads,
asks the prompt's game how its kind of player plays (the game's ``PLAYERS``), and answers in the
same JSON a model is asked for.

No evals, no network: ``fns.players`` makes each an evals CompletionFn, and the inspect_ai front end
(``on_inspect.models``) an inspect model. Randomness comes only from the call: ``call_rng``
mixes the call's seed with the prompt text, so a rerun with the same seeds gives identical choices.
"""
from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Optional

from ..core.prompts import PromptFacts
from . import Game, read_prompt
from . import get as get_game


def call_rng(text: str, seed: Any) -> random.Random:
    """A built-in player's generator for the call whose prompt is ``text`` and seed ``seed``: a rerun
    with the same seed makes the same choices, other runs and seats other ones."""
    digest = hashlib.sha256(f"{seed}\x00{text}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class BuiltinPlayer:
    """Base class: subclasses say what to choose and why, given the game and the facts of the prompt."""

    name = "econarena/builtin"
    fixed_args: frozenset[str] = frozenset()  # args of a base class that a subclass sets itself
    understanding = "A game with a clear rule for payoffs."

    def __init__(self, registry: Optional[Any] = None, name: Optional[str] = None, **_options: Any) -> None:
        # evals passes registry= to every registered completion fn; players need nothing from it.
        if name is not None:
            self.name = str(name)

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        raise NotImplementedError

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return self.play(get_game(facts.game), facts, rng)

    def reply(self, text: str, seed: Any) -> str:
        """The answer to the prompt ``text`` of a call sent with ``seed``: the JSON object asked for."""
        choice, reason = self.choose(read_prompt(text), call_rng(text, seed))
        return json.dumps({"understanding": self.understanding, "choice": choice, "reason": reason})


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


class NoisyBidder(ShadingBidder):
    """Bids its value times 1 + noise, the noise drawn for each bid from a normal of sd ``noise``
    (default 0.1): truthful bidding blurred by a known amount, so that in the second-price auction,
    where the truthful bid is dominant, its expected payoff falls as ``noise`` grows (the arena's
    planted order, docs/arena.md). Where there is no bid (beauty contest) it plays like level 1."""

    name = "econarena/noisy"
    understanding = "I bid about what the item is worth to me."
    fixed_args = frozenset({"share"})  # its bids are truthful on average: noise is its one arg

    def __init__(self, registry: Optional[Any] = None, noise: Any = 0.1, **options: Any) -> None:
        if "share" in options:
            raise ValueError(f"{options.get('name') or self.name} bids its value blurred by noise and takes no "
                             "share (econarena/shade and econarena/overbid do): give noise")
        super().__init__(registry, share=1.0, **options)
        self.noise = float(noise)
        if not 0 <= self.noise <= 10:
            raise ValueError(f"econarena/noisy needs 0 <= noise <= 10, got {noise!r}")

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["shade"](facts, rng, max(0.0, 1 + rng.gauss(0, self.noise)))


class HumanPlayer(BuiltinPlayer):
    """Calibrated to laboratory people: Nagel (1995) in the beauty contest, overbidding in the
    second-price auction, bids between the equilibrium and the value in the first-price auction.
    The models and their sources are in each game's module; figures in README, "Players"."""

    name = "econarena/human"
    understanding = "I think about what the others will choose."

    def play(self, game: Game, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return game.PLAYERS["human"](facts, rng)


# The classes the registry's completion fns name (registry/completion_fns/econarena.yaml), by class name.
CLASSES = {cls.__name__: cls for cls in (NashPlayer, RandomPlayer, LevelKPlayer, CognitiveHierarchyPlayer,
                                         ShadingBidder, OverbiddingBidder, NoisyBidder, HumanPlayer)}
