"""Built-in players: CompletionFns that read the same prompt a model reads and answer in the same JSON.

They need no network and no API key. Each leaves a ``sampling`` event, like any completion fn.
Randomness comes only from the call: the eval passes a per-(session, run, seat) ``seed``, which
the players mix with the prompt text (``games.players.call_rng``), so a rerun with the same eval seed
gives identical choices while different runs and seats get different draws.

How each plays is ``games.players``' (shared with the inspect_ai front end): a player knows the game
from the prompt (``read_prompt``) and asks that game's module how its kind of player plays (``nash``,
``random_play``, ``level_k``, ``cognitive_hierarchy``, ``human``, ``shade``, ``overbid``): the figures
and their sources live with each game in ``games/``. This module makes each an evals CompletionFn.
"""
from __future__ import annotations

from typing import Any

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from ..core.prompts import prompt_text
from ..games import players as rules

__all__ = ["PlayerResult", "BuiltinPlayer", "NashPlayer", "RandomPlayer", "LevelKPlayer",
           "CognitiveHierarchyPlayer", "ShadingBidder", "OverbiddingBidder", "NoisyBidder", "HumanPlayer"]


class PlayerResult(CompletionResult):
    def __init__(self, answer: str) -> None:
        self.answer = answer

    def get_completions(self) -> list[str]:
        return [self.answer]


class BuiltinPlayer(rules.BuiltinPlayer, CompletionFn):
    """Base class: a ``games.players`` player called as a completion fn; subclasses say what to
    choose and why, given the game and the facts of the prompt."""

    def __call__(self, prompt: Any, **kwargs: Any) -> CompletionResult:
        answer = self.reply(prompt_text(prompt), kwargs.get("seed"))
        record_sampling(prompt=prompt, sampled=[answer], model=self.name)
        return PlayerResult(answer)


class NashPlayer(BuiltinPlayer, rules.NashPlayer):
    __doc__ = rules.NashPlayer.__doc__


class RandomPlayer(BuiltinPlayer, rules.RandomPlayer):
    __doc__ = rules.RandomPlayer.__doc__


class LevelKPlayer(BuiltinPlayer, rules.LevelKPlayer):
    __doc__ = rules.LevelKPlayer.__doc__


class CognitiveHierarchyPlayer(BuiltinPlayer, rules.CognitiveHierarchyPlayer):
    __doc__ = rules.CognitiveHierarchyPlayer.__doc__


class ShadingBidder(BuiltinPlayer, rules.ShadingBidder):
    __doc__ = rules.ShadingBidder.__doc__


class OverbiddingBidder(ShadingBidder, rules.OverbiddingBidder):
    __doc__ = rules.OverbiddingBidder.__doc__


class NoisyBidder(ShadingBidder, rules.NoisyBidder):
    __doc__ = rules.NoisyBidder.__doc__


class HumanPlayer(BuiltinPlayer, rules.HumanPlayer):
    __doc__ = rules.HumanPlayer.__doc__
