"""Cognitive-hierarchy depth of reasoning (contract §10): points, likelihood, fits, sampling."""
import math
import random

import numpy as np
import pytest

from econarena_evals.core import depth


def poisson(tau, k):
    return math.exp(-tau) * tau ** k / math.factorial(k)


def test_ch_points_match_a_hand_computation_for_n5():
    tau = 1.5
    pts = depth.ch_points(tau, n=5, p=2 / 3)
    assert pts[0] == 0.5
    assert math.isclose(pts[1], 8 / 13 * 0.5)  # step 1 believes everyone else is step 0
    f0, f1 = poisson(tau, 0), poisson(tau, 1)
    m2 = (f0 * 0.5 + f1 * (8 / 13 * 0.5)) / (f0 + f1)
    assert math.isclose(pts[2], 8 / 13 * m2)
    f2 = poisson(tau, 2)
    m3 = (f0 * 0.5 + f1 * pts[1] + f2 * pts[2]) / (f0 + f1 + f2)
    assert math.isclose(pts[3], 8 / 13 * m3)
    assert np.all(np.diff(pts[:8]) < 0) and np.all(np.diff(pts) <= 0)  # each step goes lower, to a limit


def test_ch_points_for_ten_players_and_tau_zero():
    assert math.isclose(depth.ch_points(1.0, n=10)[1], (2 / 3) * 9 * 0.5 / (10 - 2 / 3))
    # τ = 0: every step believes the others are all step 0, so all steps >= 1 play the same point
    assert np.allclose(depth.ch_points(0.0, n=5)[1:], 8 / 13 * 0.5)


def test_ch_points_cap_at_the_upper_bound_for_p_above_one():
    assert depth.ch_points(1.5, n=5, p=4 / 3).max() <= 1.0


def test_erfc_approximation_is_accurate():
    z = np.linspace(-6, 6, 2001)
    exact = np.array([math.erfc(v) for v in z])
    assert np.max(np.abs(depth._erfc(z) / exact - 1)) < 2e-7


def direct_log_likelihood(tau, sigma, xs, n, p, K=depth.K_DEFAULT):
    """The model written out with math only: step weights, points, truncated normals."""
    pts = [0.5]
    factor = p * (n - 1) / (n - p)
    f = [poisson(tau, k) for k in range(K)]
    f.append(1 - sum(f))
    for k in range(1, K + 1):
        pts.append(min(1.0, factor * sum(f[j] * pts[j] for j in range(k)) / sum(f[:k])))

    def cdf(z):
        return 0.5 * math.erfc(-z / math.sqrt(2))

    total = 0.0
    for x in xs:
        dens = f[0]
        for k in range(1, K + 1):
            inside = cdf((1 - pts[k]) / sigma) - cdf(-pts[k] / sigma)
            dens += f[k] * math.exp(-0.5 * ((x - pts[k]) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi) * inside)
        total += math.log(dens)
    return total


@pytest.mark.parametrize("tau,sigma", [(0.0, 0.05), (0.7, 0.02), (1.5, 0.03), (4.0, 0.1), (9.0, 0.006)])
def test_log_likelihood_agrees_with_a_direct_computation(tau, sigma):
    xs = [0.0, 0.01, 0.2, 0.2367, 0.31, 0.5, 0.77, 1.0]
    got = depth.log_likelihood(tau, sigma, xs, n=5, p=2 / 3)
    assert math.isclose(got, direct_log_likelihood(tau, sigma, xs, 5, 2 / 3), rel_tol=1e-6, abs_tol=1e-6)


def test_step_zero_only_has_uniform_density():
    assert depth.log_likelihood(0.0, 0.03, [0.1, 0.9, 0.42]) == pytest.approx(0.0, abs=1e-12)


def test_binned_likelihood_is_the_continuous_model_integrated():
    tau, sigma = 1.5, 0.04
    rng = np.random.default_rng(3)
    edges = depth.histogram_edges()
    # the bin masses of the model, from the binned likelihood of a single choice in each bin
    masses = [math.exp(depth.log_likelihood_binned(tau, sigma, edges, np.eye(10)[j], n=5)) for j in range(10)]
    assert math.isclose(sum(masses), 1.0, rel_tol=1e-9)
    draws = depth.sample_ch(tau, sigma, 5, 2 / 3, rng, 200_000)
    counts = np.histogram(draws, bins=edges)[0] / draws.size
    assert np.allclose(masses, counts, atol=0.004)


@pytest.mark.parametrize("tau", [0.5, 1.5, 3.0])
def test_fit_recovers_a_known_tau_with_an_interval_that_covers_it(tau):
    rng = np.random.default_rng(11)
    choices = depth.sample_ch(tau, 0.03, 5, 2 / 3, rng, 500)
    sessions = [choices[i:i + 5] for i in range(0, 500, 5)]  # 100 sessions of 5 seats, as beauty_L.test
    fit = depth.fit_with_interval(sessions, n=5, p=2 / 3, resamples=500, seed=1)
    assert abs(fit["tau"] - tau) <= 0.3
    assert fit["ci_low"] <= tau <= fit["ci_high"]
    assert fit["ci_low"] <= fit["tau"] <= fit["ci_high"]
    assert abs(fit["sigma"] - 0.03) < 0.01
    assert fit["choices"] == 500 and fit["sessions"] == 100
    assert not fit["tau_at_bound"]
    # the pooled fit is the same estimate
    assert fit_tau_close(depth.fit_ch(choices), fit["tau"])


def fit_tau_close(tau_sigma, tau):
    return abs(tau_sigma[0] - tau) < 1e-9


def test_binned_fit_recovers_tau_from_a_histogram():
    rng = np.random.default_rng(0)
    edges = depth.histogram_edges(100, 5)  # 20 bins of 5
    draws = depth.sample_ch(1.5, 0.03, 10, 2 / 3, rng, 2000)
    fit = depth.fit_binned_with_interval(edges, np.histogram(draws, bins=edges)[0], n=10, resamples=300)
    assert abs(fit["tau"] - 1.5) <= 0.3
    assert fit["ci_low"] <= 1.5 <= fit["ci_high"]


def test_all_fifty_reads_as_step_zero():
    # GPT-3.5 in GAMA-Bench: every round-1 answer is 50; CH can only call that step 0
    fit = depth.fit_binned_with_interval(depth.histogram_edges(), [0, 0, 0, 0, 0, 50, 0, 0, 0, 0], n=10)
    assert fit["tau"] == 0.0 and fit["tau_at_bound"]


@pytest.mark.parametrize("bad", [[], [[]], [[], []]])
def test_no_choices_is_a_value_error(bad):
    with pytest.raises(ValueError):
        depth.fit_with_interval(bad)
    with pytest.raises(ValueError):
        depth.fit_ch([x for s in bad for x in s])


def test_degenerate_inputs_give_a_bounded_answer():
    tau, sigma = depth.fit_ch([0.0] * 50)  # everyone at the equilibrium: infinitely many steps
    assert tau == depth.TAU_MAX
    tau, sigma = depth.fit_ch([0.3])  # one choice: a fit, on the bounded space
    assert 0 <= tau <= depth.TAU_MAX and depth.SIGMA_MIN <= sigma <= depth.SIGMA_MAX
    fit = depth.fit_with_interval([[0.3, 0.2]], resamples=50)  # one session: the interval collapses
    assert fit["ci_high"] - fit["ci_low"] < 0.01 and fit["sessions"] == 1
    fit = depth.fit_with_interval([[1.0, 1.0], [0.9]], resamples=50)  # above every CH point: step 0
    assert fit["tau"] == 0.0 and fit["tau_at_bound"]


@pytest.mark.parametrize("bad", [[float("nan")], [1.5], [-0.1], [float("inf")]])
def test_invalid_shares_are_rejected(bad):
    with pytest.raises(ValueError):
        depth.fit_ch(bad)


def test_invalid_bins_and_game_are_rejected():
    with pytest.raises(ValueError):
        depth.fit_ch_binned([0, 0.5, 1], [1])
    with pytest.raises(ValueError):
        depth.fit_ch_binned([0, 0.5, 1], [0, 0])
    with pytest.raises(ValueError):
        depth.fit_ch_binned([0, 50, 100], [1, 1])  # edges are shares, not points
    with pytest.raises(ValueError):
        depth.ch_points(1.0, n=1)


def test_sampling_with_python_and_numpy_generators_agree_in_distribution():
    tau, sigma = 1.5, 0.03
    py = depth.sample_ch(tau, sigma, 5, 2 / 3, random.Random(7), 20_000)
    npy = depth.sample_ch(tau, sigma, 5, 2 / 3, np.random.default_rng(7), 20_000)
    assert isinstance(py, list) and isinstance(npy, np.ndarray)
    assert all(0 <= v <= 1 for v in py) and np.all((npy >= 0) & (npy <= 1))
    assert abs(np.mean(py) - np.mean(npy)) < 0.01
    one = depth.sample_ch(tau, sigma, rng=random.Random(1))
    assert isinstance(one, float) and 0 <= one <= 1
    # the same seed gives the same draws
    assert depth.sample_ch(tau, sigma, rng=random.Random(3), size=5) == depth.sample_ch(
        tau, sigma, rng=random.Random(3), size=5)


def test_sample_mean_matches_the_model_mean():
    draws = depth.sample_ch(1.5, 0.01, 5, 2 / 3, np.random.default_rng(0), 100_000)
    assert abs(draws.mean() - depth.ch_mean(1.5, 5, 2 / 3)) < 0.005


def test_moment_fit_inverts_the_model_mean():
    for tau in (0.3, 1.5, 4.0):
        assert math.isclose(depth.fit_moment_tau(depth.ch_mean(tau, 10), n=10), tau, abs_tol=1e-6)
    assert depth.fit_moment_tau(0.6, n=10) == 0.0
