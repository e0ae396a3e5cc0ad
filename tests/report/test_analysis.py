"""report/analysis.py: paired comparisons over the sessions two players both finished."""
from __future__ import annotations

from econarena_evals.report.analysis import comparisons, figure
from econarena_evals.score.metrics import METRICS


def metrics(value: float) -> dict[str, float]:
    return {m: value for m in METRICS}


def test_a_player_ahead_on_every_session_compares_ahead_with_a_small_p_value():
    per_session = {("a", "beauty_L"): {s: metrics(0.9) for s in range(20)},
                   ("b", "beauty_L"): {s: metrics(0.5 + 0.01 * s) for s in range(20)}}
    rows = comparisons(per_session)
    assert {r["metric"] for r in rows} == set(METRICS)
    eas = next(r for r in rows if r["metric"] == "eas")
    assert (eas["a"], eas["b"], eas["sessions"]) == ("a", "b", 20)
    assert eas["diff"] > 0 and eas["ci_low"] > 0 and eas["p_value"] < 0.01


def test_only_the_sessions_both_finished_count_and_other_columns_are_apart():
    per_session = {("a", "c1"): {0: metrics(1.0), 1: metrics(1.0), 2: metrics(1.0)},
                   ("b", "c1"): {1: metrics(0.0), 2: metrics(0.0)},
                   ("c", "c2"): {0: metrics(0.5)}}
    rows = comparisons(per_session)
    assert {(r["a"], r["b"], r["column"]) for r in rows} == {("a", "b", "c1")}
    assert all(r["sessions"] == 2 for r in rows)


def test_identical_players_differ_by_nothing():
    same = {s: metrics(0.7) for s in range(10)}
    rows = comparisons({("a", "c"): same, ("b", "c"): dict(same)})
    assert all(r["diff"] == 0 for r in rows)


def test_figures_read_as_the_tables_show_them():
    assert (figure(None), figure(3), figure(0.12345)) == ("-", "3", "0.123")
