"""The call policy: how many tries a seat call gets, how long each may take, how retries back off,
when a player's endpoint is presumed down, and how long rate limits are waited out."""
from __future__ import annotations

import random
from dataclasses import dataclass

# The HTTP timeout of the eval's own requests (evals' OpenAI fns, econarena/chat): the eval's
# deadline (``concurrency.Concurrency.due``) ends a call the endpoint stopped answering, so the
# client's timeout only has to outlast a healthy server's queue, and frees the thread and socket of
# a call given up on.
REQUEST_TIMEOUT_S = 3600.0


def request_timeout(call_timeout_s: float) -> float:
    """The HTTP timeout of a request whose call has deadline ``call_timeout_s``."""
    return max(call_timeout_s, REQUEST_TIMEOUT_S)


@dataclass(frozen=True)
class CallPolicy:
    # calls in flight at once, for the whole process (or $ECONARENA_MAX_CONCURRENCY)
    max_concurrency: int = 256
    call_timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 20.0
    # After this many endpoint failures in a row for one player, with no success in between, its
    # endpoint is presumed down: further calls fail at once (one probe per probe_interval_s
    # may close it again), so a dead endpoint costs one deadline, not one per wave of sessions.
    breaker_threshold: int = 20
    probe_interval_s: float = 30.0
    # How long an endpoint may refuse us with rate limits (429) without a single answer in between
    # before the run stops: waiting is right for a busy endpoint, not forever for a stuck one.
    rate_limit_patience_s: float = 600.0

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or self.max_attempts < 1 or not self.call_timeout_s > 0:
            raise ValueError("need max_concurrency >= 1, max_attempts >= 1 and call_timeout_s > 0")

    def backoff(self, attempt: int, jitter: random.Random) -> float:
        """Capped exponential backoff with full jitter, for attempt 1, 2, ..."""
        return jitter.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1)))
