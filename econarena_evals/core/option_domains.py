"""The command-line options' domains, said once: ``econarena-plan`` checks every one of them, and
the report tools (``econarena-report``, ``econarena-summary``) the prices they take as the plan does."""
from __future__ import annotations

import math
from typing import Any, Collection, Optional

# option -> (attribute, lowest, lowest excluded): a negative limit or price gives a meaningless time
# or cost (the plan printed "at least -200.0 min"), and so do nan and inf. A limit of 0 is no limit,
# as the plan's line says.
OPTION_DOMAINS = (("--max_samples", "max_samples", 1, False), ("--max_tokens", "max_tokens", 0, False),
                  ("--rpm", "rpm", 0, False), ("--tpm", "tpm", 0, False),
                  ("--price-in", "price_in", 0, False), ("--price-out", "price_out", 0, False),
                  ("--batch-discount", "batch_discount", 0, False))


def outside_domain(values: Any, options: Optional[Collection[str]] = None) -> Optional[str]:
    """The first option (of ``options``, default every one) whose value on ``values`` (parsed
    arguments; an absent attribute is not given) is outside its domain, said in one line; None when
    all are inside."""
    for option, attr, low, above in OPTION_DOMAINS:
        value = getattr(values, attr, None) if options is None or option in options else None
        if value is not None and not (math.isfinite(value) and (value > low if above else value >= low)):
            return f"{option} must be a number {'above' if above else 'of at least'} {low}, got {value:g}"
    return None
