"""What a server's headers state about the key's rate limits, in the dialects the providers use.

- OpenAI (and most gateways, vLLM's router, Azure): ``x-ratelimit-limit-{requests,tokens}``,
  ``x-ratelimit-remaining-*`` and ``x-ratelimit-reset-*``, the reset a duration ("6m0s", "250ms").
- Anthropic: ``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``,
  the reset an RFC 3339 time ("2025-10-25T12:01:00Z"); the limits are per minute.

Pure parsing: the lanes (``pace.Pace.learn``) pace by what this reads.
"""
from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping, Optional

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$")
# RFC 3339 as Anthropic writes it; any number of fractional digits (datetime.fromisoformat takes
# only 3 or 6 before Python 3.11, and no "Z")
_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)$")

ANTHROPIC = "anthropic-ratelimit-"
# the allowances Anthropic states; "tokens" is the most restrictive of the token limits in effect
ANTHROPIC_KINDS = ("requests", "tokens", "input-tokens", "output-tokens")
OPENAI_KINDS = ("requests", "tokens")


def parse_duration(text: Any) -> Optional[float]:
    """Seconds in the forms the API uses: "1s", "6m0s", "250ms", "1h2m3.5s", or a bare number of seconds."""
    text = str(text or "").strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    m = _DURATION.match(text)
    if not m or not any(m.groups()):
        return None
    h, mins, sec, ms = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mins * 60 + sec + ms / 1000


def seconds_until(text: Any, now: Optional[float] = None) -> Optional[float]:
    """Seconds from ``now`` (wall clock, default the present) to an RFC 3339 time; 0 for a time past."""
    m = _RFC3339.match(str(text or "").strip())
    if not m:
        return None
    year, month, day, hour, minute, second, fraction, zone = m.groups()
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = -1 if zone[0] == "-" else 1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        at = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=tz)
    except ValueError:
        return None
    at_s = at.timestamp() + (float("0." + fraction) if fraction else 0.0)
    return max(0.0, at_s - (time.time() if now is None else now))


def _number(value: Any) -> Optional[float]:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


Stated = tuple[Optional[float], Optional[float], list[tuple[float, str]]]


def stated_limits(headers: Mapping[str, str]) -> Optional[Stated]:
    """(requests a minute, tokens a minute, the allowances used up) an answer states, or None if it
    states no limit. An allowance used up is (seconds until it resets, the header that said so).

    Anthropic states input and output tokens apart; a request reserves its prompt plus
    ``max_tokens`` against one limit here, so the most restrictive of them paces (Anthropic itself
    counts ``max_tokens`` against the output limit when a request starts)."""
    rpm, tpm = _number(headers.get("x-ratelimit-limit-requests")), _number(headers.get("x-ratelimit-limit-tokens"))
    if rpm is not None or tpm is not None:
        return rpm, tpm, _used_up(headers, [(f"x-ratelimit-remaining-{k}", f"x-ratelimit-reset-{k}")
                                           for k in OPENAI_KINDS], parse_duration)
    rpm, tokens = _number(headers.get(ANTHROPIC + "requests-limit")), _number(headers.get(ANTHROPIC + "tokens-limit"))
    if rpm is None and tokens is None:
        return None  # the common case, a server that states nothing: two lookups more, not six
    stated = [t for t in (tokens, *(_number(headers.get(f"{ANTHROPIC}{kind}-limit")) for kind in ANTHROPIC_KINDS[2:]))
              if t is not None]
    return rpm, (min(stated) if stated else None), _used_up(
        headers, [(f"{ANTHROPIC}{k}-remaining", f"{ANTHROPIC}{k}-reset") for k in ANTHROPIC_KINDS], seconds_until)


def _used_up(headers: Mapping[str, str], pairs: list[tuple[str, str]],
             when: Callable[[Any], Optional[float]]) -> list[tuple[float, str]]:
    found = []
    for remaining, reset in pairs:
        left = headers.get(remaining)
        try:
            if left is None or float(left) >= 1:
                continue
        except ValueError:
            continue
        seconds = when(headers.get(reset))
        if seconds is not None:
            found.append((seconds, reset))
    return found
