"""Paired comparisons (contract §9): bootstrap interval and sign-flip p-value, redone by hand."""
import itertools
import math

import numpy as np
import pytest

from econarena_evals.score.paired import EXACT_MAX, format_comparison, paired_comparison, paired_comparisons


def percentile(values, q):
    """numpy's default (linear) percentile, in plain Python."""
    s = sorted(values)
    pos = q / 100 * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def direct(a, b, resamples, seed):
    """The documented procedure with loops: same draws, statistics computed one by one."""
    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    obs = sum(d) / n
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n)).tolist()
    means = [sum(d[i] for i in row) / n for row in idx]
    if n <= EXACT_MAX:
        flips = list(itertools.product((1, -1), repeat=n))
    else:
        flips = (1 - 2 * rng.integers(0, 2, size=(resamples, n))).tolist()
    hits = sum(abs(sum(s * x for s, x in zip(signs, d)) / n) >= abs(obs) - 1e-12 for signs in flips)
    p = hits / len(flips) if n <= EXACT_MAX else (1 + hits) / (1 + resamples)
    return {"diff": obs, "ci_low": percentile(means, 2.5), "ci_high": percentile(means, 97.5), "p_value": p,
            "sessions": n}


@pytest.mark.parametrize("n", [6, 12, 40])  # exact enumeration below EXACT_MAX, Monte Carlo above
def test_agrees_with_a_direct_computation_on_a_fixed_seed(n):
    rng = np.random.default_rng(n)
    a = rng.uniform(0.5, 1.0, n).tolist()
    b = (np.array(a) - 0.03 + rng.normal(0, 0.06, n)).tolist()
    got = paired_comparison(a, b, resamples=1500, seed=42)
    want = direct(a, b, 1500, 42)
    assert got["sessions"] == want["sessions"] == n
    for key in ("diff", "ci_low", "ci_high", "p_value"):
        assert math.isclose(got[key], want[key], rel_tol=1e-9, abs_tol=1e-12), key


def test_identical_arrays_give_p_one_and_a_zero_interval():
    for n in (5, 50):
        a = np.linspace(0, 1, n).tolist()
        c = paired_comparison(a, a, resamples=500)
        assert c["p_value"] == 1.0
        assert c["diff"] == c["ci_low"] == c["ci_high"] == 0.0


def test_a_clear_shift_gives_a_small_p_and_an_interval_around_it():
    rng = np.random.default_rng(1)
    b = rng.uniform(0.2, 0.8, 100)
    a = b + 0.05 + rng.normal(0, 0.02, 100)
    c = paired_comparison(a.tolist(), b.tolist(), resamples=2000, seed=3)
    assert c["p_value"] == pytest.approx(1 / 2001)  # nothing reached it: the Monte Carlo floor
    assert 0.04 < c["ci_low"] < c["diff"] < c["ci_high"] < 0.06
    assert c["sessions"] == 100


def test_exact_p_for_all_equal_signs():
    # 5 sessions all +0.1: only all-plus and all-minus reach |mean| = 0.1, p = 2 / 32
    c = paired_comparison([0.6] * 5, [0.5] * 5)
    assert c["p_value"] == pytest.approx(2 / 32)


def test_pairing_matters():
    # a large common session effect: unpaired intervals overlap, the paired difference is clear
    base = np.linspace(0, 1, 30)
    c = paired_comparison((base + 0.01).tolist(), base.tolist(), resamples=500)
    assert c["diff"] == pytest.approx(0.01) and c["ci_low"] == pytest.approx(0.01)
    assert c["p_value"] < 0.01


def test_missing_sessions_are_dropped_pairwise():
    a = [0.5, None, 0.7, float("nan"), 0.9]
    b = [0.4, 0.5, None, 0.6, 0.8]
    c = paired_comparison(a, b)
    assert c["sessions"] == 2 and c["diff"] == pytest.approx(0.1)
    empty = paired_comparison([None, 0.3], [0.2, None])
    assert empty == {"diff": None, "ci_low": None, "ci_high": None, "p_value": None, "sessions": 0}
    assert paired_comparison([], [])["sessions"] == 0
    with pytest.raises(ValueError):
        paired_comparison([0.1], [0.1, 0.2])


def test_batch_rows_match_single_comparisons():
    rng = np.random.default_rng(9)
    d = rng.normal(0.01, 0.05, size=(7, 25))
    d[3, [2, 5]] = np.nan  # a row with two sessions missing is its own group
    batch = paired_comparisons(d, resamples=800, seed=5)
    for i in range(7):
        row = d[i]
        single = paired_comparison(row.tolist(), [0.0] * 25, resamples=800, seed=5)
        assert batch["sessions"][i] == single["sessions"] == int(np.sum(~np.isnan(row)))
        for key in ("diff", "ci_low", "ci_high", "p_value"):
            assert math.isclose(batch[key][i], single[key], rel_tol=1e-9, abs_tol=1e-12)


def test_batch_of_a_full_report():
    # 28 pairs × 6 metrics × 13 columns, 100 sessions each; its time is bench/report_speed.py's to print
    d = np.random.default_rng(0).normal(0, 0.1, size=(28 * 6 * 13, 100))
    out = paired_comparisons(d, resamples=2000, seed=0)
    assert out["ci_low"].shape == (28 * 6 * 13,)
    assert np.all(out["ci_low"] <= out["diff"]) and np.all(out["diff"] <= out["ci_high"])
    assert np.all((out["p_value"] > 0) & (out["p_value"] <= 1))


def test_format():
    c = {"diff": 0.0623, "ci_low": 0.0311, "ci_high": 0.0942, "p_value": 0.0004, "sessions": 100}
    assert format_comparison(c) == "+0.062 [0.031, 0.094], p < 0.001, 100 sessions"
    assert format_comparison({**c, "p_value": 0.2}) == "+0.062 [0.031, 0.094], p = 0.200, 100 sessions"
    assert format_comparison({"sessions": 0}) == "no common sessions"


# Figures of the implementation before the products went in chunks (one product over all rows), for a small
# case: 3 rows of 20 sessions (Monte Carlo signs; one row missing a session) and 2 rows of 10 (exact).
BEFORE_CHUNKS = {
    "mc": {"diff": [0.023435749999999998, 0.014490736842105265, -0.05088475],
           "ci_low": [-0.0064034987499999975, -0.016843863157894733, -0.07917656749999999],
           "ci_high": [0.052490697499999996, 0.04464362499999997, -0.021682010000000057],
           "p_value": [0.16041979010494753, 0.4027986006996502, 0.0074962518740629685], "sessions": [20, 19, 20]},
    "exact": {"diff": [0.013226499999999999, 0.0135546], "ci_low": [-0.032075162500000004, -0.0298973125],
              "ci_high": [0.05686134499999999, 0.05796324999999998], "p_value": [0.583984375, 0.623046875],
              "sessions": [10, 10]},
}


def small_case():
    d = np.round(np.sin(np.arange(60).reshape(3, 20) * 0.7) * 0.1 + np.array([[0.02], [0.0], [-0.05]]), 6)
    d[1, 4] = np.nan
    e = np.round(np.cos(np.arange(20).reshape(2, 10) * 1.3) * 0.1 + 0.01, 6)
    return {"mc": d, "exact": e}


@pytest.mark.parametrize("chunk", [1, 2, 1024])  # 1: taken as 2
def test_figures_are_those_of_one_product_over_all_rows_whatever_the_chunk(monkeypatch, chunk):
    from econarena_evals.score import paired

    monkeypatch.setattr(paired, "CHUNK_ROWS", chunk)
    for name, d in small_case().items():
        got = paired.paired_comparisons(d, resamples=2000, seed=1995)
        for key, want in BEFORE_CHUNKS[name].items():
            assert got[key].tolist() == want, (name, key)


def test_memory_is_bounded_by_the_chunk_not_by_the_rows():
    """Peak allocation (numpy reports its arrays to tracemalloc) for 8 times the rows: the input and the
    answers grow, the resample products do not. Before the chunks, 8,192 rows took 2000 x 8192 floats
    (131 MB) for each product."""
    import tracemalloc

    from econarena_evals.score.paired import CHUNK_ROWS

    def peak(rows):
        d = np.random.default_rng(0).normal(0, 0.1, size=(rows, 20))
        tracemalloc.start()
        try:
            paired_comparisons(d, resamples=2000, seed=0)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(CHUNK_ROWS), peak(8 * CHUNK_ROWS)
    product = 2000 * CHUNK_ROWS * 8  # one resample product of a chunk, in bytes
    assert small > product  # the products are counted at all
    assert large < small + 8 * CHUNK_ROWS * 20 * 8 * 4  # only what grows with the rows: input, answers
