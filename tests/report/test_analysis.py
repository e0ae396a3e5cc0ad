"""report/analysis.py: paired comparisons over the sessions two players both finished."""
from __future__ import annotations

import itertools

from econarena_evals.report.analysis import ALL_PAIRS_UP_TO, EVERY_PAIR, NEIGHBOURS, comparisons, figure
from econarena_evals.score.metrics import METRICS


def metrics(value: float) -> dict[str, float]:
    return {m: value for m in METRICS}


def test_a_player_ahead_on_every_session_compares_ahead_with_a_small_p_value():
    per_session = {("a", "beauty_L"): {s: metrics(0.9) for s in range(20)},
                   ("b", "beauty_L"): {s: metrics(0.5 + 0.01 * s) for s in range(20)}}
    rows, _ = comparisons(per_session)
    assert {r["metric"] for r in rows} == set(METRICS)
    eas = next(r for r in rows if r["metric"] == "eas")
    assert (eas["a"], eas["b"], eas["sessions"]) == ("a", "b", 20)
    assert eas["diff"] > 0 and eas["ci_low"] > 0 and eas["p_value"] < 0.01


def test_only_the_sessions_both_finished_count_and_other_columns_are_apart():
    per_session = {("a", "c1"): {0: metrics(1.0), 1: metrics(1.0), 2: metrics(1.0)},
                   ("b", "c1"): {1: metrics(0.0), 2: metrics(0.0)},
                   ("c", "c2"): {0: metrics(0.5)}}
    rows, _ = comparisons(per_session)
    assert {(r["a"], r["b"], r["column"]) for r in rows} == {("a", "b", "c1")}
    assert all(r["sessions"] == 2 for r in rows)


def test_identical_players_differ_by_nothing():
    same = {s: metrics(0.7) for s in range(10)}
    rows, _ = comparisons({("a", "c"): same, ("b", "c"): dict(same)})
    assert all(r["diff"] == 0 for r in rows)


def test_figures_read_as_the_tables_show_them():
    assert (figure(None), figure(3), figure(0.12345)) == ("-", "3", "0.123")


def column_of(n: int, sessions: int = 12) -> dict:
    """n players in one column, player i scoring 0.5 + 0.01 i (+ a little per session)."""
    return {(f"p{i:02d}", "beauty_L"): {s: metrics(0.5 + 0.01 * i + 0.001 * (s % 3)) for s in range(sessions)}
            for i in range(n)}


def test_up_to_the_limit_every_pair_is_compared():
    rows, rules = comparisons(column_of(ALL_PAIRS_UP_TO))
    pairs = {(r["a"], r["b"]) for r in rows}
    assert pairs == set(itertools.combinations(sorted(f"p{i:02d}" for i in range(ALL_PAIRS_UP_TO)), 2))
    assert rules == {"beauty_L": EVERY_PAIR}


def test_beyond_it_each_player_meets_its_neighbours_and_the_best_and_all_on_request():
    n = 30
    per_session = column_of(n)
    rows, rules = comparisons(per_session)
    pairs = {(r["a"], r["b"]) for r in rows}
    best = f"p{n - 1:02d}"  # the highest mean
    neighbours = {(f"p{i:02d}", f"p{i + 1:02d}") for i in range(n - 1)}
    against_best = {(f"p{i:02d}", best) for i in range(n - 1)}
    assert pairs == neighbours | against_best and len(pairs) == 2 * n - 3
    assert rules == {"beauty_L": NEIGHBOURS}
    every, rules = comparisons(per_session, scope="all")
    assert len({(r["a"], r["b"]) for r in every}) == n * (n - 1) // 2 and rules == {"beauty_L": EVERY_PAIR}
    # a row's figures are the same whichever other rows are computed
    by_key = {(r["a"], r["b"], r["metric"]): r for r in every}
    assert all(by_key[(r["a"], r["b"], r["metric"])] == r for r in rows)
    # a pair asked for by name (--compare) is added
    asked, _ = comparisons(per_session, extra=[("p03", "p17")])
    assert ("p03", "p17") in {(r["a"], r["b"]) for r in asked}


def test_the_rows_compared_grow_with_the_players_not_with_their_square():
    counts = {n: len(comparisons(column_of(n, sessions=4))[0]) for n in (20, 40, 80)}
    assert counts[40] == counts[20] * (2 * 40 - 3) // (2 * 20 - 3)
    assert counts[80] < 2.1 * counts[40]


def test_a_pair_reads_higher_ranked_minus_lower_ranked_whatever_the_names():
    """Alphabetically "a" < "z"; ranked "z" first, the pair reads z − a and its difference is positive
    (it read a − z, negative, for the better player ranked first)."""
    per_session = {("a", "beauty_L"): {s: metrics(0.4 + 0.01 * s) for s in range(12)},
                   ("z", "beauty_L"): {s: metrics(0.9) for s in range(12)}}
    ranked, _ = comparisons(per_session, order=["z", "a"])
    by_name, _ = comparisons(per_session)
    eas = next(r for r in ranked if r["metric"] == "eas")
    plain = next(r for r in by_name if r["metric"] == "eas")
    assert (eas["a"], eas["b"]) == ("z", "a") and eas["diff"] > 0 and eas["ci_low"] > 0
    assert (plain["a"], plain["b"]) == ("a", "z") and plain["diff"] == -eas["diff"]
    assert eas["p_value"] == plain["p_value"]
