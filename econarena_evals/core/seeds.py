"""The randomness of a seat call, for every front end (the evals plugin and the inspect_ai one).

* ``call_seed``: the seed each seat call is sent with, a function of (eval seed, cell, session, run,
  seat) alone, so it does not depend on thread timing, the order calls go out, or the front end.
* ``call_rng``: the generator a built-in player draws from for one call, from the prompt's text and
  the call's seed; a rerun with the same seed makes the same choices, other runs and seats others.

Both front ends call these, so a session plays and scores the same under either.
"""
from __future__ import annotations

import hashlib
import random
from typing import Any


def call_seed(eval_seed: Any, cell: str, session: int, run: int, seat: int) -> int:
    """Per (eval seed, cell, session, run, seat): independent of thread timing, stable on rerun."""
    key = f"{eval_seed}:{cell}:{session}:{run}:{seat}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") >> 1


def call_rng(text: str, seed: Any) -> random.Random:
    """A built-in player's generator for the call whose prompt is ``text`` and seed ``seed``."""
    digest = hashlib.sha256(f"{seed}\x00{text}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
