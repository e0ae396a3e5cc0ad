"""The known names closest to a mistyped one, for refusals that say what was probably meant.

One helper for every such refusal (eval args, completion args, eval and eval-set names), so they
all rank alike: difflib's similarity ratio, case aside; ties keep the order the names are known in
(an eval's cells as its registry lists them: beauty_L, beauty_M, beauty_H, not alphabetically).
"""
from __future__ import annotations

import difflib
from typing import Iterable

# difflib.get_close_matches' own default: below it the "closest" names are noise
CUTOFF = 0.6


def closest(name: str, known: Iterable[str], n: int = 3, cutoff: float = CUTOFF) -> list[str]:
    """Up to ``n`` of ``known`` most like ``name``, best first; none below ``cutoff``, nor ``name``
    itself (a name known in another role, a request option given where only args go, is no typo)."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(str(name).lower())
    scored = []
    for order, candidate in enumerate(c for c in dict.fromkeys(known) if c != name):
        matcher.set_seq1(str(candidate).lower())
        # the cheap upper bounds first, as get_close_matches does: a registry holds ~1,500 evals
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scored.append((-ratio, order, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:n]]


def with_closest(names: Iterable[str], known: Iterable[str]) -> str:
    """``names`` for a refusal, each followed by its closest known names: ``temprature (closest:
    temperature), foo``."""
    known = list(known)
    out = []
    for name in names:
        close = closest(name, known)
        out.append(f"{name} (closest: {', '.join(close)})" if close else str(name))
    return ", ".join(out)
