"""Depth of reasoning: a cognitive-hierarchy fit of beauty-contest choices (contract §10).

Camerer, Ho and Chong (2004): a step-0 player picks uniformly on [0, c̄]; a step-k player (k >= 1)
best-responds to the belief that the other n - 1 seats are steps 0..k-1 in the proportions of a
Poisson(τ) distribution restricted to 0..k-1 and renormalized. With target p × mean of all n
choices (own included), the best response to an expected mean m of the others is
p(n - 1)m / (n - p), capped at c̄.

Everything here works on *shares*, choices divided by c̄, so the model lives on [0, 1].

Observation model: step k with probability Poisson(τ)(k) for k = 0..K, the tail mass P(k >= K) on K;
a step-0 choice is uniform on [0, 1] (density 1); a step-k choice is its CH point plus Gaussian noise
with sd σ, truncated to [0, 1]. τ and σ are fitted by maximum likelihood.

How the fit works, and why this way (numpy only):
- The log-likelihood is evaluated on a fixed grid (τ in [0, 10] by 0.1, σ log-spaced on
  [0.005, 0.15]) in one vectorized pass, then refined by zooming a small grid around the best point
  a few times. A grid first makes the fit robust: the likelihood is smooth in τ but can have
  several local maxima in σ (one narrow peak per cluster of choices), which a local optimizer
  started in the wrong place would miss.
- The bootstrap over sessions reuses the grid: the per-session log-likelihood on the grid is
  computed once, so a resample's log-likelihood is a weighted sum of session rows (one matrix
  product for all resamples). Each resample's τ is the argmax of the profile likelihood over σ,
  refined by a parabola through the three grid points around it (a resolution of a few hundredths,
  well below any interval's width).
- Binned data (a histogram of choices, e.g. GAMA-Bench's round-1 counts per [0, 10), ..., [90, 100])
  uses the binned likelihood: each bin's probability is the model's mass over it. This is the
  principled choice over bin midpoints: it does not invent precision, and it does not punish the
  model for a cluster at 33 when its step-1 point is 32.1. The bootstrap of a histogram resamples
  choices (multinomial), because a pooled histogram no longer knows its sessions.
"""
from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

K_DEFAULT = 25  # Poisson(10) puts 6e-5 beyond 25, and there every step's point is already ~0
TAU_MAX = 10.0
# σ's ceiling is an identification choice, not a detail. With σ near 0.5 one "noisy step" is a broad bump
# over the whole range, and the fit uses it to absorb choices that CH can only read as step 0 (a spike at
# 50, or choices above it): all-50 data (GPT-3.5 in GAMA-Bench) then fits τ ≈ 1 instead of τ = 0.
# At 0.15 a step's noise still spans ±30 % of c̄ at 2σ, wider than any human or model cluster seen.
SIGMA_MIN, SIGMA_MAX = 0.005, 0.15
TAU_GRID = np.round(np.arange(0.0, TAU_MAX + 1e-9, 0.1), 10)
SIGMA_GRID = np.exp(np.linspace(math.log(SIGMA_MIN), math.log(SIGMA_MAX), 25))
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_CHUNK = 2_000_000  # elements of a (choices, τ, σ) block evaluated at once: bounds memory at ~16 MB a block

RNG = Union[random.Random, np.random.Generator]


# --------------------------------------------------------------------------------------- helpers
def _erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function, vectorized, fractional error below 1.2e-7 everywhere.

    Chebyshev fit of Numerical Recipes (erfcc). Relative accuracy in the tails is what a
    likelihood needs (a truncation mass or a bin probability far from a component's centre).
    """
    x = np.asarray(x, dtype=float)
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    r = t * np.exp(poly)
    return np.where(x >= 0, r, 2.0 - r)


def _upper_tail(z: np.ndarray) -> np.ndarray:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * _erfc(z / _SQRT2)


def _normal_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(a < Z < b), computed in whichever tail keeps its precision."""
    lower = 0.5 * _erfc(-b / _SQRT2) - 0.5 * _erfc(-a / _SQRT2)  # Φ(b) - Φ(a): exact where a < 0
    upper = _upper_tail(a) - _upper_tail(b)  # Q(a) - Q(b): exact where a >= 0
    return np.maximum(np.where(a >= 0, upper, lower), 0.0)


def _check_game(n: int, p: float) -> None:
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not (0 < p < n):
        raise ValueError(f"p must be in (0, n), got {p!r}")


def _best_response_factor(n: int, p: float) -> float:
    """x = factor × m: the choice equal to p × mean(own, n - 1 others with mean m)."""
    return p * (n - 1) / (n - p)


def _poisson_ratios(taus: np.ndarray, K: int) -> np.ndarray:
    """τ^k / k! for k = 0..K (rows: τ), by cumulative products, so τ = 0 gives 1, 0, 0, ..."""
    taus = np.asarray(taus, dtype=float)
    steps = np.concatenate([np.ones((taus.size, 1)), taus[:, None] / np.arange(1, K + 1)[None, :]], axis=1)
    return np.cumprod(steps, axis=1)


def _step_weights(taus: np.ndarray, K: int) -> np.ndarray:
    """Poisson(τ)(k) for k = 0..K-1 and P(k >= K) on K (rows: τ); each row sums to 1."""
    taus = np.asarray(taus, dtype=float)
    w = _poisson_ratios(taus, K) * np.exp(-taus)[:, None]
    w[:, K] = np.maximum(0.0, 1.0 - w[:, :K].sum(axis=1))
    return w


def _points_grid(taus: np.ndarray, n: int, p: float, K: int) -> np.ndarray:
    """CH points (shares) of steps 0..K for every τ (rows); step 0 is the uniform's mean 1/2."""
    taus = np.asarray(taus, dtype=float)
    ratios = _poisson_ratios(taus, K)  # e^{-τ} cancels in the beliefs
    factor = _best_response_factor(n, p)
    pts = np.empty((taus.size, K + 1))
    pts[:, 0] = 0.5
    num = np.zeros(taus.size)
    den = np.zeros(taus.size)
    for k in range(1, K + 1):
        num += ratios[:, k - 1] * pts[:, k - 1]
        den += ratios[:, k - 1]
        pts[:, k] = np.minimum(1.0, factor * num / den)
    return pts


def ch_points(tau: float, n: int = 5, p: float = 2 / 3, K: int = K_DEFAULT) -> np.ndarray:
    """The CH point of each step k = 0..K as a share of c̄ (step 0: the uniform's mean, 1/2)."""
    _check_game(n, p)
    if not (tau >= 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    return _points_grid(np.array([tau]), n, p, K)[0]


def ch_mean(tau: float, n: int = 5, p: float = 2 / 3, K: int = K_DEFAULT) -> float:
    """Expected choice (share of c̄) of a CH population with no noise: Σ_k Poisson(τ)(k) × point_k."""
    pts = ch_points(tau, n, p, K)
    return float(_step_weights(np.array([tau]), K)[0] @ pts)


def _as_shares(shares: Sequence[float]) -> np.ndarray:
    x = np.asarray(list(shares), dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("choices must be finite numbers")
    if x.size and (x.min() < -1e-9 or x.max() > 1 + 1e-9):
        raise ValueError("choices must be shares of c̄, in [0, 1]")
    return np.clip(x, 0.0, 1.0)


# ------------------------------------------------------------------------------ likelihood engine
class _Model:
    """Points, weights and truncation masses on a (τ, σ) grid, shared by every likelihood below."""

    def __init__(self, taus: np.ndarray, sigmas: np.ndarray, n: int, p: float, K: int):
        self.taus = np.asarray(taus, dtype=float)
        self.sigmas = np.asarray(sigmas, dtype=float)
        self.K = K
        self.points = _points_grid(self.taus, n, p, K)  # (T, K+1)
        self.weights = _step_weights(self.taus, K)  # (T, K+1)
        s = self.sigmas[None, None, :]
        c = self.points[:, 1:, None]
        # mass of N(c, σ) inside [0, 1]: (T, K, S)
        self.inside = _normal_mass((0.0 - c) / s, (1.0 - c) / s)

    def log_density(self, x: np.ndarray) -> np.ndarray:
        """log model density of each choice at every grid point: (N, T, S).

        Each distinct choice is evaluated once (players repeat their choices: an equilibrium player's
        are all 0) and its row copied to every place it holds: each row is computed on its own, so the
        answer is the same to the last bit."""
        x = np.asarray(x, dtype=float)
        distinct, where = np.unique(x, return_inverse=True)
        if distinct.size < x.size:
            return self._log_density(distinct)[where.ravel()]
        return self._log_density(x)

    def _log_density(self, x: np.ndarray) -> np.ndarray:
        T, S, K = self.taus.size, self.sigmas.size, self.K
        out = np.empty((x.size, T, S))
        step = max(1, _CHUNK // max(1, T * S))
        neg_half_prec = (-0.5 / self.sigmas ** 2)[None, None, :]  # (1, 1, S)
        log_norm = np.log(self.sigmas)[None, :] + _LOG_SQRT_2PI  # (1, S)
        # weight of step k over its truncation mass and the normal's constant: (T, K, S)
        coef = self.weights[:, 1:, None] / np.maximum(self.inside, 1e-300) * np.exp(-log_norm)[:, None, :]
        for lo in range(0, x.size, step):
            xs = x[lo:lo + step, None]
            m = xs.shape[0]
            dens = np.broadcast_to(self.weights[None, :, 0:1], (m, T, S)).copy()  # step 0: density 1
            buf = np.empty((m, T, S))
            for k in range(1, K + 1):
                d2 = (xs - self.points[None, :, k]) ** 2  # (m, T): the σ axis is only broadcast below
                np.multiply(d2[:, :, None], neg_half_prec, out=buf)
                np.exp(buf, out=buf)
                buf *= coef[None, :, k - 1, :]
                dens += buf
            out[lo:lo + step] = np.log(np.maximum(dens, 1e-300))
        return out

    def log_bin_probs(self, edges: np.ndarray) -> np.ndarray:
        """log model mass of each bin [edges[j], edges[j+1]) at every grid point, conditional on the
        bins' union (edges spanning [0, 1] make that union certain): (J, T, S)."""
        s = self.sigmas[None, None, :]
        c = self.points[:, 1:, None]
        wk = self.weights[:, 1:, None] / np.maximum(self.inside, 1e-300)  # (T, K, S)
        masses = []
        for a, b in zip(edges[:-1], edges[1:]):
            gauss = (wk * _normal_mass((a - c) / s, (b - c) / s)).sum(axis=1)  # (T, S)
            masses.append(self.weights[:, 0:1] * (b - a) + gauss)
        m = np.maximum(np.stack(masses), 1e-300)
        return np.log(m) - np.log(m.sum(axis=0, keepdims=True))


@lru_cache(maxsize=8)
def _grid_model(n: int, p: float, K: int) -> _Model:
    """The model on the whole (τ, σ) grid: the same for every fit of a game, so built once."""
    return _Model(TAU_GRID, SIGMA_GRID, n, p, K)


def log_likelihood(tau: float, sigma: float, shares: Sequence[float], n: int = 5, p: float = 2 / 3,
                   K: int = K_DEFAULT) -> float:
    """Total log-likelihood of the choices (shares of c̄) under CH(τ) with noise sd σ (shares)."""
    _check_game(n, p)
    if not (tau >= 0 and math.isfinite(tau)) or not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"need tau >= 0 and sigma > 0, got tau={tau!r}, sigma={sigma!r}")
    x = _as_shares(shares)
    return float(_Model(np.array([tau]), np.array([sigma]), n, p, K).log_density(x).sum())


def log_likelihood_binned(tau: float, sigma: float, edges: Sequence[float], counts: Sequence[float], n: int = 5,
                          p: float = 2 / 3, K: int = K_DEFAULT) -> float:
    """Binned log-likelihood: Σ_j counts[j] × log P(choice in bin j), edges as shares of c̄."""
    _check_game(n, p)
    e, c = _check_bins(edges, counts)
    return float(c @ _Model(np.array([tau]), np.array([sigma]), n, p, K).log_bin_probs(e)[:, 0, 0])


# ------------------------------------------------------------------------------------ maximizing
def _zoom(objective, tau0: float, sigma0: float, rounds: int = 5) -> Tuple[float, float, float]:
    """Refine a grid optimum by repeatedly evaluating a 9 × 9 grid around it and halving its span.

    objective(taus, sigmas) -> (T, S) log-likelihood. σ is searched on a log scale.
    """
    dtau, dlog = 0.1, math.log(SIGMA_GRID[1] / SIGMA_GRID[0])
    best = (tau0, sigma0)
    value = -math.inf
    for _ in range(rounds):
        taus = np.clip(best[0] + dtau * np.linspace(-1, 1, 9), 0.0, TAU_MAX)
        sigmas = np.clip(best[1] * np.exp(dlog * np.linspace(-1, 1, 9)), SIGMA_MIN, SIGMA_MAX)
        ll = objective(taus, sigmas)
        i, j = np.unravel_index(np.argmax(ll), ll.shape)
        if ll[i, j] >= value:
            best, value = (float(taus[i]), float(sigmas[j])), float(ll[i, j])
        dtau, dlog = dtau / 2, dlog / 2
    return best[0], best[1], value


def _profile_tau(ll: np.ndarray) -> np.ndarray:
    """τ maximizing each row of (R, T, S) log-likelihoods: grid argmax of the σ-profile, refined by
    the vertex of the parabola through it and its two neighbours."""
    # the σ-profile (R, T): the max over the last axis, taken one σ column at a time, since numpy's reduction
    # along a short contiguous axis is slower than S elementwise maxima; a max is exact, so it is the same array
    prof = ll[:, :, 0].copy()
    for j in range(1, ll.shape[2]):
        np.maximum(prof, ll[:, :, j], out=prof)
    i = np.argmax(prof, axis=1)
    step = TAU_GRID[1] - TAU_GRID[0]
    tau = TAU_GRID[i].astype(float)
    inner = (i > 0) & (i < TAU_GRID.size - 1)
    r = np.nonzero(inner)[0]
    if r.size:
        y0, y1, y2 = prof[r, i[r] - 1], prof[r, i[r]], prof[r, i[r] + 1]
        den = y0 - 2 * y1 + y2
        shift = np.where(den < 0, 0.5 * (y0 - y2) / np.where(den < 0, den, -1.0), 0.0)
        tau[r] += np.clip(shift, -0.5, 0.5) * step
    return tau


def _fit_from_grid(ll_grid: np.ndarray, objective) -> Tuple[float, float]:
    i, j = np.unravel_index(np.argmax(ll_grid), ll_grid.shape)
    tau, sigma, _ = _zoom(objective, float(TAU_GRID[i]), float(SIGMA_GRID[j]))
    return tau, sigma


def fit_ch(shares: Sequence[float], n: int = 5, p: float = 2 / 3, K: int = K_DEFAULT) -> Tuple[float, float]:
    """Maximum-likelihood (τ, σ) for choices given as shares of c̄ (τ in [0, 10], σ in [0.005, 0.15]).

    Raises ValueError for no choices. One choice, or all choices equal, still gives the maximum on
    the bounded parameter space (σ at its floor; e.g. all zeros sit at τ's upper bound, 10): the
    likelihood has no interior maximum there and the bound says so.
    """
    _check_game(n, p)
    x = _as_shares(shares)
    if x.size == 0:
        raise ValueError("no choices to fit")
    grid = _grid_model(n, p, K).log_density(x).sum(axis=0)
    return _fit_from_grid(grid, lambda t, s: _Model(t, s, n, p, K).log_density(x).sum(axis=0))


def _check_bins(edges: Sequence[float], counts: Sequence[float]) -> Tuple[np.ndarray, np.ndarray]:
    e = np.asarray(list(edges), dtype=float)
    c = np.asarray(list(counts), dtype=float)
    if e.ndim != 1 or e.size < 2 or c.size != e.size - 1:
        raise ValueError("need len(edges) == len(counts) + 1 >= 2")
    if np.any(np.diff(e) <= 0) or e[0] < 0 or e[-1] > 1 + 1e-12 or not np.all(np.isfinite(e)):
        raise ValueError("edges must increase within [0, 1] (shares of c̄)")
    if np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("counts must be finite and >= 0")
    return e, c


def fit_ch_binned(edges: Sequence[float], counts: Sequence[float], n: int = 5, p: float = 2 / 3,
                  K: int = K_DEFAULT) -> Tuple[float, float]:
    """Maximum-likelihood (τ, σ) from a histogram: counts of choices in [edges[j], edges[j+1]),
    edges as shares of c̄ (for [0, 100] in bins of 10: 0, 0.1, ..., 1). Raises ValueError if empty."""
    _check_game(n, p)
    e, c = _check_bins(edges, counts)
    if c.sum() <= 0:
        raise ValueError("no choices to fit")
    grid = np.tensordot(c, _Model(TAU_GRID, SIGMA_GRID, n, p, K).log_bin_probs(e), axes=1)
    return _fit_from_grid(grid, lambda t, s: np.tensordot(c, _Model(t, s, n, p, K).log_bin_probs(e), axes=1))


def _bounds(tau: float, sigma: float) -> Dict[str, bool]:
    """Whether an estimate sits on the edge of the parameter space (then it is a bound, not a fit)."""
    return {"tau_at_bound": tau <= 0.0 or tau >= TAU_MAX,
            "sigma_at_bound": tau > 0.0 and (sigma <= SIGMA_MIN * 1.0001 or sigma >= SIGMA_MAX * 0.9999)}


def _percentile_interval(taus: np.ndarray) -> Tuple[float, float]:
    lo, hi = np.percentile(taus, [2.5, 97.5])
    return float(lo), float(hi)


def fit_with_interval(shares_by_session: Sequence[Sequence[float]], n: int = 5, p: float = 2 / 3,
                      resamples: int = 1000, seed: int = 0, K: int = K_DEFAULT) -> Dict[str, object]:
    """ML fit of the pooled choices and a 95 % percentile bootstrap interval of τ over sessions.

    Returns {tau, sigma, ci_low, ci_high, choices, sessions, tau_at_bound, sigma_at_bound}: `sessions`
    counts the sessions with at least one choice (the bootstrap's units); the flags say an estimate
    sits on the edge of its range (τ at 0 or 10; σ at 0.005 or 0.15). σ means nothing when τ = 0.
    Sessions without choices are ignored. Raises ValueError if no session has a choice.
    """
    _check_game(n, p)
    sessions = [_as_shares(s) for s in shares_by_session]
    sessions = [s for s in sessions if s.size]
    if not sessions:
        raise ValueError("no choices to fit")
    x = np.concatenate(sessions)
    per_choice = _grid_model(n, p, K).log_density(x)  # (N, T, S)
    starts = np.cumsum([0] + [s.size for s in sessions[:-1]])
    per_session = np.add.reduceat(per_choice, starts, axis=0).reshape(len(sessions), -1)  # (S_n, G)
    grid = per_session.sum(axis=0).reshape(TAU_GRID.size, SIGMA_GRID.size)
    tau, sigma = _fit_from_grid(grid, lambda t, s: _Model(t, s, n, p, K).log_density(x).sum(axis=0))
    rng = np.random.default_rng(seed)
    boot = []
    for lo in range(0, resamples, 250):  # bounded memory: 250 resamples × grid at a time
        r = min(250, resamples - lo)
        picks = rng.integers(0, len(sessions), size=(r, len(sessions)))
        weights = np.zeros((r, len(sessions)))
        np.add.at(weights, (np.arange(r)[:, None], picks), 1.0)
        boot.append(_profile_tau((weights @ per_session).reshape(r, TAU_GRID.size, SIGMA_GRID.size)))
    ci_low, ci_high = _percentile_interval(np.concatenate(boot)) if resamples > 0 else (tau, tau)
    return {"tau": tau, "sigma": sigma, "ci_low": min(ci_low, tau), "ci_high": max(ci_high, tau),
            "choices": int(x.size), "sessions": len(sessions), **_bounds(tau, sigma)}


def fit_binned_with_interval(edges: Sequence[float], counts: Sequence[float], n: int = 5, p: float = 2 / 3,
                             resamples: int = 1000, seed: int = 0, K: int = K_DEFAULT) -> Dict[str, object]:
    """fit_ch_binned plus a 95 % percentile bootstrap interval of τ that resamples choices
    (multinomial on the observed counts): a pooled histogram has lost its sessions, so this interval
    ignores any correlation within a session and is, if anything, too narrow."""
    _check_game(n, p)
    e, c = _check_bins(edges, counts)
    total = c.sum()
    if total <= 0:
        raise ValueError("no choices to fit")
    logp = _Model(TAU_GRID, SIGMA_GRID, n, p, K).log_bin_probs(e).reshape(c.size, -1)  # (J, G)
    grid = (c @ logp).reshape(TAU_GRID.size, SIGMA_GRID.size)
    tau, sigma = _fit_from_grid(grid, lambda t, s: np.tensordot(c, _Model(t, s, n, p, K).log_bin_probs(e), axes=1))
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(round(total)), c / total, size=resamples).astype(float)  # (R, J)
    boot = _profile_tau((draws @ logp).reshape(resamples, TAU_GRID.size, SIGMA_GRID.size))
    ci_low, ci_high = _percentile_interval(boot) if resamples > 0 else (tau, tau)
    return {"tau": tau, "sigma": sigma, "ci_low": min(ci_low, tau), "ci_high": max(ci_high, tau),
            "choices": int(round(total)), **_bounds(tau, sigma)}


def histogram_edges(upper: float = 100.0, width: float = 10.0) -> List[float]:
    """Edges, as shares, of the bins [0, w), [w, 2w), ..., [upper - w, upper] of a histogram of choices."""
    count = int(round(upper / width))
    return [i * width / upper for i in range(count + 1)]


# -------------------------------------------------------------------------------------- sampling
def _step_cdf(tau: float, K: int) -> np.ndarray:
    return np.cumsum(_step_weights(np.array([tau]), K)[0])


def _draw_step(cdf: np.ndarray, rng: random.Random, K: int) -> int:
    return min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), K)


def sample_step(tau: float, rng: random.Random, K: int = K_DEFAULT) -> int:
    """One CH step k from Poisson(τ), steps beyond K playing K (as sample_ch draws them), using one
    rng.random() of a random.Random."""
    if not (tau >= 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    return _draw_step(_step_cdf(tau, K), rng, K)


def sample_ch(tau: float, sigma: float, n: int = 5, p: float = 2 / 3, rng: Optional[RNG] = None,
              size: Optional[int] = None, K: int = K_DEFAULT):
    """Draw choices (shares of c̄) from the model: a step from Poisson(τ) (steps beyond K play K), a
    uniform choice for step 0, and the step's CH point plus N(0, σ) noise truncated to [0, 1] otherwise.

    rng: a random.Random (pure Python, one draw at a time) or a numpy Generator (vectorized).
    size None returns one float; otherwise a list (random.Random) or an array (Generator) of size.
    """
    _check_game(n, p)
    if not (tau >= 0 and math.isfinite(tau)) or not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"need tau >= 0 and sigma > 0, got tau={tau!r}, sigma={sigma!r}")
    rng = rng if rng is not None else random.Random()
    pts = ch_points(tau, n, p, K)
    if isinstance(rng, np.random.Generator):
        m = 1 if size is None else int(size)
        steps = np.minimum(rng.poisson(tau, size=m), K)
        out = rng.random(m)  # step 0
        todo = np.nonzero(steps > 0)[0]
        for _ in range(1000):  # rejection sampling of the truncated normal; acceptance >= ~1/2 per round
            if not todo.size:
                break
            draw = pts[steps[todo]] + sigma * rng.standard_normal(todo.size)
            ok = (draw >= 0) & (draw <= 1)
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
        out[todo] = np.clip(pts[steps[todo]], 0, 1)  # unreachable for σ <= ~1e3
        return float(out[0]) if size is None else out
    cdf = _step_cdf(tau, K)

    def one() -> float:
        k = _draw_step(cdf, rng, K)
        if k == 0:
            return rng.random()
        for _ in range(1000):
            v = rng.gauss(pts[k], sigma)
            if 0.0 <= v <= 1.0:
                return v
        return float(min(1.0, max(0.0, pts[k])))

    return one() if size is None else [one() for _ in range(int(size))]


def fit_moment_tau(mean_share: float, n: int = 5, p: float = 2 / 3, K: int = K_DEFAULT) -> float:
    """τ whose noiseless CH mean choice equals mean_share (bisection on [0, 10]; ch_mean falls in τ).

    A method-of-moments figure for data known only by its mean (Nagel's first period), not a fit.
    Returns 0 or 10 when the mean is outside what the model reaches on that range.
    """
    lo, hi = 0.0, TAU_MAX
    if mean_share >= ch_mean(lo, n, p, K):
        return lo
    if mean_share <= ch_mean(hi, n, p, K):
        return hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if ch_mean(mid, n, p, K) > mean_share:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
