import math

from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.games import auction, beauty, outcome_from_event, run_event
from econarena_evals.log.evallog import rescore_events
from econarena_evals.log.format import final_report
from econarena_evals.score.metrics import METRICS, session_metrics


def beauty_runs(choices_per_run, c_bar=50, players=None):
    players = players or ["me"] * len(choices_per_run[0])
    return [beauty.score_run(c, c_bar=c_bar, prize=100, players=players) for c in choices_per_run]


def test_nash_self_play_scores():
    runs = beauty_runs([[0.0] * 5] * 10)
    m = session_metrics(runs, "me")
    assert m == {"eas": 0.84, "rationality": 1, "ne_proximity": 1, "win_rate": 0.2, "rule_following": 1,
                 "convergence": 1}


def test_formulas_on_a_hand_worked_session():
    # 3 runs, 2 seats, both "me"; c_bar 30. ceil(3/3) = 1 run counts for convergence.
    runs = beauty_runs([[0, 30], [None, 15], [3, 3]], c_bar=30)
    # run 1: target 10, seat 1 wins 100; run 2: only seat 2 valid, target 10, wins; run 3: tie.
    m = session_metrics(runs, "me")
    d = [0, 1, 1, 0.5, 0.1, 0.1]  # |a|/30, rule break = 1
    assert math.isclose(m["ne_proximity"], 1 - sum(d) / 6)
    assert math.isclose(m["convergence"], 1 - 0.1)
    assert math.isclose(m["rule_following"], 5 / 6)
    # ne payoff 50 per seat: ratios 1, 0, 0, 1, 1, 1
    assert math.isclose(m["rationality"], 4 / 6)
    assert math.isclose(m["win_rate"], (1 + 0 + 0 + 1 + 0.5 + 0.5) / 6)
    parts = [m[k] for k in METRICS[1:]]
    assert math.isclose(m["eas"], sum(parts) / 5)


def test_arena_metrics_are_per_player():
    runs = beauty_runs([[20, 40, 40, 40, 40]], players=["a", "b", "b", "b", "b"])  # target 24
    a, b = session_metrics(runs, "a"), session_metrics(runs, "b")
    assert a["win_rate"] == 1 and b["win_rate"] == 0
    assert session_metrics(runs, "nobody") is None


def test_final_report_orders_eas_first_and_counts_errors():
    s = {"me": dict.fromkeys(METRICS, 0.5)}
    report = final_report([s, None, s], ["me"])
    assert list(report)[:6] == list(METRICS) and report["sessions"] == 2 and report["errored_sessions"] == 1
    assert final_report([None], ["me"])["eas"] is None


def test_auction_nash_is_084():
    values = [[50, 60, 70, 40, 30], [55, 55, 20, 10, 90]]
    runs = [auction.score_run(v, values=v, assets=100, fee=10, players=["me"] * 5) for v in values]
    m = session_metrics(runs, "me")
    assert m["eas"] == 0.84 and m["win_rate"] == 0.2 and m["rationality"] == 1


choice = st.one_of(st.none(), st.floats(allow_nan=True), st.floats(0, 100))


@given(st.lists(st.lists(choice, min_size=5, max_size=5), min_size=1, max_size=10))
def test_metrics_are_in_unit_interval_and_survive_the_log(choices):
    runs = beauty_runs(choices, c_bar=100)
    m = session_metrics(runs, "me")
    assert all(0 <= m[k] <= 1 for k in METRICS)
    events = [run_event(r, cell="c", session=0, run=i, runs=len(runs), history_runs=0,
                        game_params={"c_bar": 100, "prize": 100}) for i, r in enumerate(runs)]
    assert [outcome_from_event(e) for e in events] == runs
    per_session, report = rescore_events(events, ["me"])
    assert per_session[0]["me"] == m and report["eas"] == m["eas"]


@given(st.integers(10, 10_000), st.integers(1, 10))
def test_equilibrium_play_scores_one(c_bar, n_runs):
    m = session_metrics(beauty_runs([[0.0] * 5] * n_runs, c_bar=c_bar), "me")
    assert m["rationality"] == m["ne_proximity"] == m["convergence"] == m["rule_following"] == 1


def test_incomplete_session_is_not_scored():
    runs = beauty_runs([[0.0] * 5] * 3)
    events = [run_event(r, cell="c", session=4, run=i, runs=5, history_runs=0,
                        game_params={"c_bar": 50, "prize": 100}) for i, r in enumerate(runs)]
    per_session, report = rescore_events(events, ["me"], sessions=[4, 5])
    assert per_session == {4: None, 5: None} and report["errored_sessions"] == 2
