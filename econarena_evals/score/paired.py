"""Paired comparisons of two players on the same sessions (contract §9, `comparisons`).

Two players run on the same session indices of one condition face identical instances, so the
right comparison is of their per-session differences d_i = a_i - b_i, not of two separate intervals:

- `diff`: the mean of d over the sessions both finished.
- `ci_low`, `ci_high`: 95 % percentile paired bootstrap: resample sessions with replacement (the
  same index for a and b), take the mean of d, and read the 2.5 and 97.5 percentiles (numpy's
  linear interpolation) of the resampled means.
- `p_value`: two-sided sign-flip permutation test of mean d = 0. Under the null that a and b are
  exchangeable within a session, each d_i is equally likely to have either sign. The statistic is
  |mean(s_i d_i)|. With at most EXACT_MAX (12) sessions every one of the 2^n sign vectors is
  enumerated and p is the exact proportion with |stat| >= |observed| (the observed vector is one
  of them, so p >= 2 / 2^n). With more, `resamples` random sign vectors are drawn and
  p = (1 + count) / (1 + resamples), the Monte Carlo p-value that is never 0 and is valid (its
  size is at most the nominal level) for any number of draws. |stat| counts as >= |observed| within
  a relative 1e-9, so float summation order cannot break an exact tie (identical arrays give p = 1).

Random draws, for reproducibility and for the tests that redo them by hand: a fresh
``numpy.random.default_rng(seed)`` per group of rows that share their sessions, then the bootstrap
indices ``rng.integers(0, n, size=(resamples, n))``, then (Monte Carlo only) the signs
``1 - 2 * rng.integers(0, 2, size=(resamples, n))``. A row's result therefore depends only on its own
values, its session count and the seed, not on which other rows share the batch.

Speed and memory: the batch version does the rows that share their sessions with two matrix
products, one for the bootstrap (resample counts × differences) and one for the signs, so every
pair × metric × column of a report (28 × 6 × 13 = 2184 rows of 100 sessions) takes a fraction of a
second. The products go ``CHUNK_ROWS`` rows at a time, with the draws made once per group: the
memory they take is bounded by the chunk (about 2,000 × 1,024 floats, 16 MB, for each product),
not by the number of rows, and each row's figures are what one product over all rows gives.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np

EXACT_MAX = 12  # 2^12 = 4,096 sign vectors: exact costs about what 2,000 Monte Carlo draws do
_BLOCK = 4096  # sign vectors per matrix product when enumerating
CHUNK_ROWS = 1024  # rows per matrix product: bounds the memory of a batch of any size


def _sign_matrix(start: int, stop: int, n: int) -> np.ndarray:
    """Rows start..stop-1 of the 2^n sign vectors: bit j of the row number flips session j."""
    codes = np.arange(start, stop, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(n, dtype=np.int64)[None, :]) & 1
    return 1.0 - 2.0 * bits


def _group(d: np.ndarray, resamples: int, seed: int) -> Dict[str, np.ndarray]:
    """All statistics for rows of d (rows × n) that have no missing value, ``CHUNK_ROWS`` rows at a time."""
    rows, n = d.shape
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.arange(resamples)[:, None], idx), 1.0)
    signs = None if n <= EXACT_MAX else 1.0 - 2.0 * rng.integers(0, 2, size=(resamples, n))
    out = {k: np.empty(rows) for k in ("diff", "ci_low", "ci_high", "p_value")}
    starts = list(range(0, rows, max(2, CHUNK_ROWS)))
    if len(starts) > 1 and rows - starts[-1] == 1:
        starts.pop()  # no chunk of one row in a group of several: one row is a matrix-vector product,
        # whose last digit can differ from the same row's in a matrix product
    for start, stop in zip(starts, starts[1:] + [rows]):
        part = slice(start, stop)
        for k, v in _chunk(d[part], counts, signs).items():
            out[k][part] = v
    return out


def _chunk(d: np.ndarray, counts: np.ndarray, signs: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """The statistics of a few rows of d, from the group's resample counts and (Monte Carlo) signs."""
    rows, n = d.shape
    obs = d.mean(axis=1)
    boot = counts @ d.T / n  # (R, rows): the mean of each resample
    ci_low, ci_high = np.percentile(boot, [2.5, 97.5], axis=0)
    del boot
    tol = 1e-9 * np.maximum(np.abs(d).max(axis=1), 1e-300)
    threshold = np.abs(obs) - tol
    if signs is None:
        total = 1 << n
        hits = np.zeros(rows)
        for lo in range(0, total, _BLOCK):
            stats = _sign_matrix(lo, min(total, lo + _BLOCK), n) @ d.T / n
            hits += (np.abs(stats) >= threshold).sum(axis=0)
        p = hits / total
    else:
        stats = signs @ d.T / n
        p = (1.0 + (np.abs(stats) >= threshold).sum(axis=0)) / (1.0 + signs.shape[0])
    return {"diff": obs, "ci_low": np.minimum(ci_low, obs), "ci_high": np.maximum(ci_high, obs),
            "p_value": np.minimum(p, 1.0)}


def paired_comparisons(diffs, resamples: int = 2000, seed: int = 0) -> Dict[str, np.ndarray]:
    """Batch version: one paired comparison per row of `diffs` (rows × sessions of a - b).

    NaN marks a session that row does not have (one of the two players did not finish it); rows
    with the same missing pattern are computed together. Returns arrays of length rows under
    `diff`, `ci_low`, `ci_high`, `p_value` (NaN for a row with no session) and `sessions` (int).
    """
    d = np.asarray(diffs, dtype=float)
    if d.ndim == 1:
        d = d[None, :]
    if d.ndim != 2:
        raise ValueError("diffs must be a matrix: rows × sessions")
    if np.any(np.isinf(d)):
        raise ValueError("differences must be finite (NaN marks a missing session)")
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    rows = d.shape[0]
    out = {k: np.full(rows, np.nan) for k in ("diff", "ci_low", "ci_high", "p_value")}
    present = ~np.isnan(d)
    out["sessions"] = present.sum(axis=1)
    patterns, inverse = np.unique(present, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    for g, mask in enumerate(patterns):
        members = np.nonzero(inverse == g)[0]
        if not mask.any():
            continue
        res = _group(d[np.ix_(members, np.nonzero(mask)[0])], resamples, seed)
        for k, v in res.items():
            out[k][members] = v
    return out


def _clean(v: float) -> Optional[float]:
    return None if v is None or math.isnan(v) else float(v)


def paired_comparison(a: Sequence[Optional[float]], b: Sequence[Optional[float]], resamples: int = 2000,
                      seed: int = 0) -> Dict[str, Optional[float]]:
    """Mean of a - b over paired sessions, 95 % paired bootstrap interval, sign-flip p-value.

    a[i] and b[i] are the two players' values on the same session; None or NaN in either drops
    that session. Returns {diff, ci_low, ci_high, p_value, sessions}; with no common session the
    four figures are None (JSON null) and sessions is 0.
    """
    if len(a) != len(b):
        raise ValueError(f"a and b must pair up session by session: {len(a)} != {len(b)}")
    av = np.array([np.nan if x is None else x for x in a], dtype=float)
    bv = np.array([np.nan if x is None else x for x in b], dtype=float)
    res = paired_comparisons((av - bv)[None, :], resamples=resamples, seed=seed)
    out: Dict[str, Optional[float]] = {k: _clean(res[k][0]) for k in ("diff", "ci_low", "ci_high", "p_value")}
    out["sessions"] = int(res["sessions"][0])
    return out


def format_comparison(c: Dict[str, Optional[float]], digits: int = 3) -> str:
    """'+0.062 [0.031, 0.094], p = 0.001, 100 sessions', the report's one-line form."""
    if not c.get("sessions"):
        return "no common sessions"
    p = c["p_value"]
    p_text = f"p < {10 ** -digits:.{digits}f}" if p < 10 ** -digits else f"p = {p:.{digits}f}"
    return (f"{c['diff']:+.{digits}f} [{c['ci_low']:.{digits}f}, {c['ci_high']:.{digits}f}], {p_text}, "
            f"{c['sessions']} session{'s' if c['sessions'] != 1 else ''}")


__all__: List[str] = ["paired_comparison", "paired_comparisons", "format_comparison", "EXACT_MAX", "CHUNK_ROWS"]
