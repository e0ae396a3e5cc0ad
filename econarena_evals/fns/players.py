"""Built-in players: CompletionFns that read the same prompt a model reads and answer in the same JSON.

They need no network and no API key. Each leaves a ``sampling`` event, like any completion fn.
Randomness comes only from the call: the eval passes a per-(session, run, seat) ``seed``, which
the players mix with the prompt text (``games.builtin.call_rng``), so a rerun with the same eval seed
gives identical choices while different runs and seats get different draws.

How each plays is ``games.builtin``' (shared with the inspect_ai front end): a player knows the game
from the prompt (``read_prompt``) and asks that game's module how its kind of player plays (``nash``,
``random_play``, ``level_k``, ``cognitive_hierarchy``, ``human``, ``shade``, ``overbid``): the figures
and their sources live with each game in ``games/``. This module makes each an evals CompletionFn.
"""
from __future__ import annotations

from typing import Any, Iterable

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from ..core.closest import with_closest
from ..core.prompts import prompt_text
from ..games import builtin as rules
from .chat import ChatCompletionFn
from .completion_args import keyword_names, request_options

__all__ = ["PlayerResult", "BuiltinPlayer", "builtin_arg_refusal", "NashPlayer", "RandomPlayer", "LevelKPlayer",
           "CognitiveHierarchyPlayer", "ShadingBidder", "OverbiddingBidder", "NoisyBidder", "HumanPlayer"]


class PlayerResult(CompletionResult):
    def __init__(self, answer: str) -> None:
        self.answer = answer

    def get_completions(self) -> list[str]:
        return [self.answer]


class BuiltinPlayer(rules.BuiltinPlayer, CompletionFn):
    """Base class: a ``games.builtin`` player called as a completion fn; subclasses say what to
    choose and why, given the game and the facts of the prompt."""

    def __call__(self, prompt: Any, **kwargs: Any) -> CompletionResult:
        answer = self.reply(prompt_text(prompt), kwargs.get("seed"))
        record_sampling(prompt=prompt, sampled=[answer], model=self.name)
        return PlayerResult(answer)


    def own_args(self) -> frozenset[str]:
        """The completion args this player takes (its kind's: ``k``, ``tau``, ``sigma``, ``share``,
        ``noise``; none for Nash, random and human play), from its ``games.builtin`` constructors."""
        out: set[str] = set()
        for cls in type(self).__mro__:
            if issubclass(cls, rules.BuiltinPlayer) and "__init__" in cls.__dict__:
                out |= keyword_names(cls.__init__, named_only=True) or frozenset()
        # name is the registry's (evals' make_completion_fn has a name of its own: --completion_args
        # name=... never reaches a player)
        return frozenset(out - {"name"} - type(self).fixed_args)


def builtin_arg_refusal(fns: Iterable[Any]) -> str:
    """Why the built-in players of a run cannot take their completion args; "" if they can.

    A built-in player sends no request, so a completion arg that is not its own (``temprature=0.5``,
    or ``temperature=0.5``) changes nothing it does. In a run with another player (an arena with
    ``econarena/chat``, evals' own fns or a user's), every player is given the same completion args
    (evals' ``--completion_args``) and they are that player's: the built-in ones pass over them,
    and the other player judges them (econarena/chat refuses a typo). In a run of built-in players
    only, an arg none of them takes is refused, named with the closest known names (its own and a
    chat model's): said, not taken in silence."""
    fns = list(fns)
    if any(not isinstance(fn, BuiltinPlayer) for fn in fns):
        return ""
    if not fns:
        return ""
    chat_known = (request_options("chat") or frozenset()) | (
        keyword_names(ChatCompletionFn.__init__, named_only=True) or frozenset())
    taken = frozenset().union(*(fn.own_args() for fn in fns))  # evals gives every player the same args
    given = getattr(fns[0], "econarena_completion_args", None) or {}
    unknown = sorted(set(given) - taken)
    if not unknown:
        return ""
    model_args = [a for a in unknown if a in chat_known]
    takes = f"take{'s' if len(fns) == 1 else ''} " + (f"only {', '.join(sorted(taken))}" if taken
                                                      else "no completion arg")
    who = (f"{fns[0].name} is a built-in player, which {takes} and sends no request" if len(fns) == 1 else
           f"this run's players ({', '.join(fn.name for fn in fns)}) are built in, {takes} and send no request")
    return (f"unknown completion arg {with_closest(unknown, sorted(taken) + sorted(chat_known - taken))}: {who}"
            + (f", so {', '.join(model_args)} would change nothing (a chat model's: econarena/chat)"
               if model_args else "")
            + (f"; {'its' if len(fns) == 1 else 'their'} draws follow the eval's seed (oaieval --seed)"
               if "seed" in unknown else ""))


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
