"""What ``oaieval``'s INFO logging prints per request, cut to what a user needs.

oaieval puts the root logger at INFO, so httpx prints ``HTTP Request: POST <full URL>`` once per
request (a gateway's user, password or query key included, burying the progress lines). Those
lines are dropped unless ``oaieval --debug`` put the root logger at DEBUG; whatever httpx still
logs has its URLs masked. (evals' recorder's line per flush is the recorder wrapper's to quiet:
``integration.recorder``.)
"""
from __future__ import annotations

import logging

from ..core.redact import redact_text

# httpx's request lines, and httpcore's (DEBUG) trace lines on the loggers of its modules; openai's
# newer releases use the renamed httpx2 / httpcore2. A filter on a logger sees only that logger's own
# records, so each one is named.
HTTP_LOGGERS = tuple(f"{lib}{v}{part}" for v in ("", "2") for lib, parts in (
    ("httpx", ("",)), ("httpcore", (".connection", ".http11", ".http2", ".proxy", ".socks"))) for part in parts)


def _debugging() -> bool:
    return logging.getLogger().getEffectiveLevel() <= logging.DEBUG


class HttpLogFilter:
    """Drops httpx's and httpcore's lines below WARNING unless debugging; masks what it lets through."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING and not _debugging():
            return False
        try:
            record.msg = redact_text(record.getMessage())
            record.args = None
        except Exception:  # noqa: BLE001 - a line that cannot be masked is not shown
            return False
        return True


def quiet_http_logs() -> None:
    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, HttpLogFilter) for f in logger.filters):
            logger.addFilter(HttpLogFilter())
