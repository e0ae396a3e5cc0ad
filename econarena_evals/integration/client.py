"""evals builds an OpenAI client when ``evals.registry`` is imported, which needs a key; the
built-in players need none.

A placeholder ``OPENAI_API_KEY`` stands in during that import only; the client evals built is then
replaced by one made on first use from the environment as it is then, so no request ever carries
the placeholder (without a key, evals' model-list lookup fails at once, sending nothing).
"""
from __future__ import annotations

import os
from typing import Any, Callable

PLACEHOLDER_KEY = "econarena-placeholder-key-not-for-openai"


def exec_with_placeholder_key(exec_module: Callable[[Any], None], module: Any) -> None:
    """Run ``exec_module(module)`` (evals.registry's own loader) with the placeholder key set if no
    key is; the environment is as it was afterwards."""
    placeholder = "OPENAI_API_KEY" not in os.environ
    if placeholder:
        os.environ["OPENAI_API_KEY"] = PLACEHOLDER_KEY
    try:
        exec_module(module)
    finally:
        if placeholder and os.environ.get("OPENAI_API_KEY") == PLACEHOLDER_KEY:
            del os.environ["OPENAI_API_KEY"]


class LazyClient:
    """Stands in for the OpenAI client evals builds at import: the real one is made on first use,
    from the environment as it is then (never from the import-time placeholder key)."""

    def __init__(self, factory: Callable[..., Any]) -> None:
        self._factory = factory
        self._client = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            api_key = os.environ.get("OPENAI_API_KEY")
            if api_key == PLACEHOLDER_KEY:
                api_key = None
            self._client = self._factory(api_key=api_key)  # raises OpenAIError without a key
        return getattr(self._client, name)


def replace_client(registry_module: Any) -> None:
    if (hasattr(registry_module, "client") and hasattr(registry_module, "OpenAI")
            and not isinstance(registry_module.client, LazyClient)):
        registry_module.client = LazyClient(registry_module.OpenAI)
