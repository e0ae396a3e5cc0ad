"""Published reference figures (humans and other benchmarks' language models), each with its source.

The figures live in ``references.json`` next to this module (shipped as package data): Nagel (1995)
for people, Camerer, Ho and Chong (2004) for τ, and GAMA-Bench (Huang et al., ICLR 2025) for
language models. GAMA-Bench's setting differs from ours (10 players, 20 rounds, integer answers on
[0, 100]); every use of its figures should carry ``GAMA_LABEL`` and compare on choice / upper bound.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict

GAMA_LABEL = "GAMA-Bench, 10 players, [0, 100]"
# its sealed-bid auctions: the same 10 players, each value drawn from 0..200 in steps of 10 (``auction_bid_value``)
GAMA_AUCTION_LABEL = "GAMA-Bench, 10 players, values 0-200"
_NAME = "references.json"


@lru_cache(maxsize=1)
def _text() -> str:
    try:
        from importlib.resources import files

        return files("econarena_evals.core").joinpath(_NAME).read_text(encoding="utf-8")
    except (ImportError, FileNotFoundError, ModuleNotFoundError, TypeError):  # unusual loaders: the file system
        return (Path(__file__).resolve().parent / _NAME).read_text(encoding="utf-8")


def load_references() -> Dict[str, Any]:
    """The parsed reference data (a fresh copy each call, so callers may modify it)."""
    return json.loads(_text())


def gama_round1() -> Dict[str, Dict[str, Any]]:
    """GAMA-Bench round-1 guessing-game choices per model: {model: {edges (shares of the upper
    bound, 0..1), counts, mean, median, sd}} — the histogram a binned depth fit takes."""
    g = load_references()["gama_bench"]["guessing_round1"]
    upper = g["bin_edges"][-1]
    edges = [e / upper for e in g["bin_edges"]]
    return {m: {"edges": edges, **v} for m, v in g["models"].items()}
