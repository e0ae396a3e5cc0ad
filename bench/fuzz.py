"""Parser and scorer on 10,000 random and adversarial replies: no exception, bounded time per reply.

    python bench/fuzz.py [--n 10000] [--seed 0]

Replies are built from a seeded generator: random text and control characters, unicode digits,
huge and non-finite numbers, deep and unclosed nesting, reasoning blocks, fences, and megabyte
replies. Prints the count of numbers and rule breaks, and the mean, p99 and max time per reply.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from econarena_evals.core.answers import parse_choice  # noqa: E402
from econarena_evals.games import (
    auction,  # noqa: E402
    beauty,  # noqa: E402
)

DIGITS = ["0", "7", "\u0667", "\uff17", "1e309", "-0", "NaN", "Infinity", "1" * 5000, "33.3", "-1e-400"]
TOKENS = ['{"choice": ', "}", "{", '"', "```json\n", "```", "<think>", "</think>", "[", "]", ",", "\\u0000", ":"]


def reply(rng: random.Random) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        return "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(200)))
    if kind == 1:
        return "".join(rng.choice(TOKENS + DIGITS) for _ in range(rng.randrange(60)))
    if kind == 2:
        n = rng.randrange(20000)
        return '{"a":' * n + "1" + "}" * rng.randrange(n + 1)
    if kind == 3:
        return "{" * rng.randrange(200000)
    if kind == 4:
        return "<think>" + "x" * rng.randrange(2_000_000) + '</think>{"choice": 5}'
    if kind == 5:
        return "y" * rng.randrange(2_000_000) + '{"choice": 5}'
    if kind == 6:
        return json.dumps({"understanding": "u", "choice": rng.choice(DIGITS), "reason": "r"})
    if kind == 7:
        return "```json\n" + json.dumps({"choice": rng.uniform(-1e6, 1e6)}) + "\n```" * rng.randrange(2)
    if kind == 8:
        return "".join(chr(rng.randrange(32)) for _ in range(rng.randrange(1000))) + '{"choice": 1}'
    return json.dumps({"outer": {"choice": 3}, "list": [{"choice": 4}] * rng.randrange(100)})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    times, numbers, breaks, longest = [], 0, 0, 0
    for _ in range(opts.n):
        text = reply(rng)
        longest = max(longest, len(text))
        start = time.perf_counter()
        choice = parse_choice(text)
        beauty.score_run([choice] * 5, c_bar=100, prize=100, players=["p"] * 5)
        auction.score_run([choice] * 5, values=[50] * 5, assets=100, fee=10, players=["p"] * 5)
        times.append(time.perf_counter() - start)
        numbers += choice is not None
        breaks += choice is None
    times.sort()
    print(f"{opts.n} replies (longest {longest:,} chars), 0 exceptions: {numbers} numbers, {breaks} unparseable")
    print(f"time per reply (parse + score both games): mean {statistics.mean(times) * 1e3:.2f} ms, "
          f"p99 {times[int(0.99 * len(times))] * 1e3:.1f} ms, max {times[-1] * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
