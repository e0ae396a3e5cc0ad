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

    def __init__(self, registry: Optional[Any] = None, name: Optional[str] = None, **_options: Any) -> None:
        # evals passes registry= to every registered completion fn; players need nothing from it.
        if name is not None:
            self.name = str(name)

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
    """Uniform over the valid range: [0, c_bar], or [0, assets] for a bid. Also ``econarena/level0``."""

    name = "econarena/random"
    understanding = "I pick uniformly at random from the allowed range."

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        return rng.uniform(0.0, facts.upper), "A uniform draw over the allowed range."


def last_average(facts: PromptFacts) -> Optional[float]:
    """The average of the valid choices of the last run the prompt shows, if any."""
    return facts.past_averages[-1] if facts.past_averages else None


class LevelKPlayer(BuiltinPlayer):
    """Level-k reasoning (Nagel 1995; Stahl and Wilson 1995), k >= 1.

    Beauty contest: (2/3)^k * c_bar / 2 with no history; with history, (2/3)^k times the last
    run's average of valid choices. Auction: a truthful bid, since in a second-price auction
    bidding one's value is optimal whatever one believes about the others.
    """

    k = 1

    def __init__(self, registry: Optional[Any] = None, k: Optional[Any] = None, **options: Any) -> None:
        super().__init__(registry, **options)
        if k is not None:
            self.k = int(k)
        if self.k < 1:
            raise ValueError("level-k players need k >= 1; level 0 is econarena/level0")
        self.name = options.get("name") or f"econarena/level{self.k}"

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        if facts.game == "auction":
            assert facts.value is not None
            return facts.value, "In a second-price auction bidding my value is optimal."
        factor = (2 / 3) ** self.k
        anchor = last_average(facts)
        if anchor is None:
            return factor * facts.upper / 2, f"I expect an average of c/2 and apply {self.k} step(s) of 2/3."
        return factor * anchor, f"I take last run's average and apply {self.k} step(s) of 2/3."


class ShadingBidder(BuiltinPlayer):
    """Bids a fixed share of its value (default 0.75, near the 0.74-0.78 of value GPT-4 and GPT-4o bid
    in GAMA-Bench's first-price auction). In a beauty contest it plays like level 1."""

    name = "econarena/shade"
    understanding = "I bid below my value to keep a margin."

    def __init__(self, registry: Optional[Any] = None, share: Any = 0.75, **options: Any) -> None:
        super().__init__(registry, **options)
        self.share = float(share)

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        if facts.game == "beauty":
            return LevelKPlayer(k=1).choose(facts, rng)
        assert facts.value is not None
        return min(facts.upper, self.share * facts.value), f"I bid {self.share:g} of my value."


class OverbiddingBidder(ShadingBidder):
    """Bids above its value (default 1.25 times, capped at its assets), the classic laboratory
    mistake in second-price auctions. In a beauty contest it plays like level 1."""

    name = "econarena/overbid"
    understanding = "I bid above my value to make sure I win."

    def __init__(self, registry: Optional[Any] = None, share: Any = 1.25, **options: Any) -> None:
        super().__init__(registry, share=share, **options)


# Nagel (1995), first period, p = 2/3, [0, 100]: mean 36.73, median 33, spikes at 50 * (2/3)^n.
# A mixture of level-0 (uniform) and level-1..3 types with noise around their spikes. Weights are
# chosen so that the mixture's mean is 36.7 and its median 32-33 (see bench/human_calibration.py).
HUMAN_FIRST_RUN = (  # (weight, centre as a fraction of c_bar or None for uniform, noise sd as a fraction)
    (0.40, None, 0.0),
    (0.35, 0.5 * (2 / 3), 0.03),
    (0.17, 0.5 * (2 / 3) ** 2, 0.03),
    (0.08, 0.5 * (2 / 3) ** 3, 0.03),
)
# Nagel's four-period session fell 39.7, 28.6, 20.2, 16.7: each mean about 0.72 of the last. With
# history, a human anchors on the last average and applies 0, 1 or 2 steps of 2/3 (mean factor 0.72).
HUMAN_WITH_HISTORY = ((0.30, 1.0), (0.50, 2 / 3), (0.20, 4 / 9))
HUMAN_NOISE = 0.10  # multiplicative noise sd on the anchored choice
# Auctions: laboratory bidders in second-price auctions bid their value only about a third of the
# time and otherwise mostly overbid (Kagel and Levin 1993); we model 1/3 truthful, 2/3 value x (1 + N(0.1, 0.1)).
HUMAN_TRUTHFUL_SHARE = 1 / 3
HUMAN_OVERBID_MEAN, HUMAN_OVERBID_SD = 0.10, 0.10


def weighted_choice(rng: random.Random, table: tuple) -> tuple:
    x = rng.random()
    for row in table:
        if x < row[0]:
            return row
        x -= row[0]
    return table[-1]


def human_first_run_share(game: str, rng: random.Random) -> float:
    """One first-run draw of the human model: a fraction of c_bar (beauty) or of the value (auction)."""
    if game == "auction":
        if rng.random() < HUMAN_TRUTHFUL_SHARE:
            return 1.0
        return 1 + rng.gauss(HUMAN_OVERBID_MEAN, HUMAN_OVERBID_SD)
    _, centre, sd = weighted_choice(rng, HUMAN_FIRST_RUN)
    if centre is None:
        return rng.random()
    return min(1.0, max(0.0, rng.gauss(centre, sd)))


class HumanPlayer(BuiltinPlayer):
    """A beauty-contest player calibrated to Nagel (1995); a second-price bidder calibrated to the
    laboratory finding that people overbid. Constants above; figures in README, "Players"."""

    name = "econarena/human"
    understanding = "I think about what the others will choose."

    def choose(self, facts: PromptFacts, rng: random.Random) -> tuple[float, str]:
        upper = facts.upper
        if facts.game == "auction":
            assert facts.value is not None
            bid = min(upper, max(0.0, human_first_run_share("auction", rng) * facts.value))
            return bid, "I bid about what the item is worth to me, a little more to be sure to win."
        anchor = last_average(facts)
        if anchor is not None:
            _, factor = weighted_choice(rng, HUMAN_WITH_HISTORY)
            choice = anchor * factor * (1 + rng.gauss(0, HUMAN_NOISE))
            return min(upper, max(0.0, choice)), "Last run's average, adjusted for what others will do."
        return upper * human_first_run_share("beauty", rng), "What I expect the others to say, and a bit less."
