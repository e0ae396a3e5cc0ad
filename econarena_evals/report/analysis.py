"""What the report adds to the means (contract §9, §10): floors, paired comparisons, diagnostics.

* ``floors``: every metric for a player that always breaks the rules, one that plays uniformly at
  random over the valid range, and Nash play, scored on the column's own sessions by the game's own
  scorer, so a reader sees where a metric starts (auction ``rationality`` starts near 0.89).
* ``comparisons``: for two players with sessions of the same condition, the mean difference of each
  metric over the sessions both finished, a paired bootstrap interval and a sign-flip p-value.
* ``diagnostics``: what each game says the EAS hides (the beauty contest's depth of reasoning τ,
  the auctions' truthful, over- and underbid shares); the report only renders what the game gives.
"""
from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ..core.depth import TAU_MAX
from ..games import action_range, report_of, score_event
from ..log.evallog import EvalLog
from ..score.metrics import METRICS, session_metrics
from ..score.paired import paired_comparisons

FLOOR_PLAYER = "floor"
RANDOM_REPEATS = 5  # uniform play is scored this many times on every session, then averaged
FLOOR_SEED = 1995
COMPARISON_RESAMPLES, COMPARISON_SEED = 2000, 1995


def finished_runs(log: EvalLog) -> dict[int, list[Mapping[str, Any]]]:
    """Run events of the finished sessions, by session, in run order."""
    finished = {int(s["session"]) for s in log.sessions if not s.get("errored")}
    by_session: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for event in log.runs:
        if int(event["session"]) in finished:
            by_session[int(event["session"])].append(event)
    return {k: sorted(v, key=lambda e: e["run"]) for k, v in by_session.items()}


def _policy_actions(policy: str, event: Mapping[str, Any], rng: random.Random) -> list[Optional[float]]:
    seats = event["seats"]
    if policy == "rule_break":
        return [None] * len(seats)
    if policy == "nash":
        return [float(s["ne_action"]) for s in seats]
    lo, hi = action_range(event)
    return [rng.uniform(lo, hi) for _ in seats]


def floors(log: EvalLog) -> dict[str, dict[str, Optional[float]]]:
    """{metric: {rule_break, random, nash}} on this log's finished sessions, every seat playing the policy."""
    sessions = finished_runs(log)
    out: dict[str, dict[str, Optional[float]]] = {m: {} for m in METRICS}
    rng = random.Random(FLOOR_SEED)
    for policy in ("rule_break", "random", "nash"):
        values: dict[str, list[float]] = defaultdict(list)
        for _, events in sorted(sessions.items()):
            for _ in range(RANDOM_REPEATS if policy == "random" else 1):
                outcomes = []
                for event in events:
                    actions = _policy_actions(policy, event, rng)
                    outcomes.append(score_event(event, actions, [FLOOR_PLAYER] * len(actions)))
                metrics = session_metrics(outcomes, FLOOR_PLAYER)
                if metrics is not None:
                    for m in METRICS:
                        values[m].append(metrics[m])
        for m in METRICS:
            out[m][policy] = round(math.fsum(values[m]) / len(values[m]), 12) if values[m] else None
    return out


def nash_ceilings(column_floors: Mapping[str, Mapping[str, Optional[float]]], self_play: bool) -> list[str]:
    """The metrics for which Nash play at every seat is a ceiling of the column: no player can score
    above it there. Every metric is at most 1, and where Nash play scores 1 (rationality, NE
    proximity, rule following, convergence) nothing is above it. In self-play every seat is the one
    player, so its win rate is 1/seats whatever it plays and Nash play tops the EAS too; against
    others a player can win more than its share (a level-1 fn among Nash players scores an EAS of
    0.987 where Nash play's is 0.840), so there Nash play's win rate and EAS are no ceiling."""
    out = []
    for metric in METRICS:
        nash = (column_floors.get(metric) or {}).get("nash")
        if nash is not None and (self_play or nash >= 1.0 - 1e-12):
            out.append(metric)
    return out


# The rows under every metric table: (policy, label); Nash play is split by whether it is a ceiling.
# A rule breaker's row is the metric's zero point, not a score earned: where the game pays a seat that
# breaks the rules something (an auction: its assets less the fee, contract §4), payoff-based metrics
# give it a figure above 0, which a reader must not take for credit.
FLOOR_ROWS = (("rule_break", "zero point: every answer a rule break (no credit up to here)"),
              ("random", "floor: uniform random"), ("nash", "ceiling: Nash play"))
FLOORS_NOTE = ("Under each table, the metric on the column's own sessions for three tables of one policy, scored by "
               "the game's scorer: the zero point, every answer a rule break, which is what the metric gives for "
               "no valid play at all and no credit (where a game pays a rule breaker something, as an auction "
               "pays its assets less the fee, payoff-based metrics start above 0: a player's figure means "
               "something only above this row); uniform random play over the valid range; and Nash play, the "
               "ceiling only where no player can score above it (self-play, or a metric where it scores 1); "
               "against opponents a player can win more than its share, and there Nash play's row says it is "
               "no ceiling.")
NASH_NO_CEILING = "Nash play at every seat (no ceiling: a player can score above it against these opponents)"


def floor_rows(result: Mapping[str, Any], metric: str,
               columns: Sequence[str]) -> list[tuple[str, list[Optional[float]]]]:
    """(label, value per column, None for none) of each row under a metric table: the two floors,
    Nash play where it is the column's ceiling, and Nash play where it is not (only if some column has it)."""
    floors_of = result.get("floors") or {}
    ceilings = result.get("ceilings") or {}

    def value(col: str, policy: str) -> Optional[float]:
        return ((floors_of.get(col) or {}).get(metric) or {}).get(policy)

    rows = [(text, [value(col, policy) if policy != "nash" or metric in ceilings.get(col, ()) else None
                    for col in columns]) for policy, text in FLOOR_ROWS]
    beaten = [None if metric in ceilings.get(col, ()) else value(col, "nash") for col in columns]
    if not any(v is not None for v in rows[-1][1]):
        rows.pop()  # no column has Nash play as its ceiling
    if any(v is not None for v in beaten):
        rows.append((NASH_NO_CEILING, beaten))
    return rows


def diagnostics(log: EvalLog, player: str) -> dict[str, dict[str, Any]]:
    """The game's own figures for one player on this log's finished sessions ({} if it has none)."""
    runs = [e for events in finished_runs(log).values() for e in events]
    if not runs:
        return {}
    return report_of(runs[0]["game"]).diagnostics(runs, player)


# A column of at most this many players compares every pair; a larger one, each player with its
# neighbours in the column's EAS order and with the column's best (``scope="all"``: every pair anyway).
ALL_PAIRS_UP_TO = 10
EVERY_PAIR, NEIGHBOURS = "every pair", "neighbours in rank and the best"


def compared_pairs(means: Mapping[str, Optional[float]], scope: str = "auto",
                   extra: Sequence[tuple[str, str]] = ()) -> tuple[set[tuple[str, str]], str]:
    """The pairs (a < b by name) of one column's players to compare, and which rule chose them.

    ``means``: each player's mean EAS in the column (None: none). Up to ``ALL_PAIRS_UP_TO`` players,
    or with ``scope="all"``, every pair; beyond, each player with the next in the column's order
    (mean EAS, best first, then name) and with the best: 2 n - 3 pairs for n players, not n (n - 1) / 2.
    ``extra`` pairs are compared too where both players are in the column (``--compare A B``)."""
    players = sorted(means)
    if scope == "all" or len(players) <= ALL_PAIRS_UP_TO:
        wanted = set(itertools.combinations(players, 2))
        rule = EVERY_PAIR
    else:
        order = sorted(players, key=lambda p: (-(means[p] if means[p] is not None else -math.inf), p))
        wanted = {tuple(sorted(pair)) for pair in zip(order, order[1:])}
        wanted |= {tuple(sorted((order[0], p))) for p in order[1:]}
        rule = NEIGHBOURS
    wanted |= {tuple(sorted(pair)) for pair in extra if pair[0] != pair[1] and set(pair) <= set(players)}
    return wanted, rule  # type: ignore[return-value]


def comparisons(per_session: Mapping[tuple[str, str], Mapping[int, Mapping[str, Optional[float]]]],
                scope: str = "auto", extra: Sequence[tuple[str, str]] = (), order: Sequence[str] = ()
                ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Paired comparisons of the pairs of players ``compared_pairs`` chooses in every column, and
    per column the rule that chose them.

    ``per_session[(player, column)]`` maps session index -> metrics for the sessions the player
    finished. Two players of one column played the same condition on the same session indices
    (self-play logs of one cell, or one arena log); only the sessions both finished count. A row's
    figures do not depend on which other rows are computed (``paired``). Each pair reads ``a`` − ``b``
    with ``a`` the higher in ``order`` (the report's one order of players, the overall EAS ranking's;
    players it leaves out after, by name), so that a difference reads in the ranking's order.
    """
    place = {p: i for i, p in enumerate(order)}
    by_column: dict[str, list[str]] = defaultdict(list)
    for player, column in per_session:
        by_column[column].append(player)
    rows, keys = [], []
    rules: dict[str, str] = {}
    for column, players in sorted(by_column.items()):
        means = {}
        for p in players:
            eas = [m["eas"] for m in per_session[(p, column)].values() if m.get("eas") is not None]
            means[p] = math.fsum(eas) / len(eas) if eas else None
        wanted, rules[column] = compared_pairs(means, scope, extra)
        for a, b in itertools.combinations(sorted(players), 2):
            if (a, b) not in wanted:
                continue
            a, b = sorted((a, b), key=lambda p: (place.get(p, len(place)), p))
            sa, sb = per_session[(a, column)], per_session[(b, column)]
            common = sorted(set(sa) & set(sb))
            if not common:
                continue
            for metric in METRICS:
                diff = [np.nan if sa[s][metric] is None or sb[s][metric] is None
                        else float(sa[s][metric]) - float(sb[s][metric]) for s in common]
                rows.append(diff)
                keys.append((a, b, column, metric, len(common)))
    if not rows:
        return [], rules
    width = max(len(r) for r in rows)
    matrix = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        matrix[i, : len(r)] = r
    stats = paired_comparisons(matrix, resamples=COMPARISON_RESAMPLES, seed=COMPARISON_SEED)
    out = []
    for i, (a, b, column, metric, _) in enumerate(keys):
        figures = {k: float(stats[k][i]) for k in ("diff", "ci_low", "ci_high", "p_value")}
        out.append({"a": a, "b": b, "column": column, "metric": metric,
                    **{k: None if math.isnan(v) else round(v, 12) for k, v in figures.items()},
                    "sessions": int(stats["sessions"][i])})
    return out, rules


# The depth of reasoning's two tables, named apart, one heading form: the τ of each player by column,
# under the leaderboard, and the fits in full (interval, noise, bound) among the diagnostics.
DEPTH_SUMMARY_TITLE = "Depth of reasoning τ: each player's τ by column"
DEPTH_FITS_TITLE = "Depth of reasoning τ: the fits in full"
# How the report titles and explains each kind of game diagnostic (report.md and report.html).
DIAGNOSTIC_TITLES = {
    "depth": (DEPTH_FITS_TITLE,
              "A maximum-likelihood cognitive-hierarchy fit (Camerer, Ho and Chong 2004) of each player's valid "
              "first-run choices / c̄, pooled over sessions, with a 95 % bootstrap interval over sessions "
              "(contract §10); σ is the fit's noise around the hierarchy's choices, and \"τ at the fit's bound\" "
              "says τ is a bound, not a depth. People: τ ≈ 1.5."),
    "bids": ("Bids: what the EAS hides",
             "Over each player's valid bids: the share within 1 % of value (truthful), above it and below it, "
             "and the mean bid / value."),
}
# A diagnostic's figures as its table heads them (a key not here is shown as the game named it).
DIAGNOSTIC_HEADERS = {"tau": "τ", "ci_low": "τ 95 % low", "ci_high": "τ 95 % high", "sigma": "σ (noise)",
                      "tau_at_bound": "τ at the fit's bound", "mean_bid_over_value": "mean bid / value",
                      "bids": "valid bids"}


def diagnostic_header(key: str) -> str:
    return DIAGNOSTIC_HEADERS.get(key, key)


def column_labels(result: dict[str, Any]) -> list[str]:
    """The columns in the report's order (the eval sets'), as ``compute`` listed them."""
    listed = [c["label"] for c in result.get("columns") or []]
    return listed + sorted({d["column"] for d in result["conditions"]} - set(listed))


def players_of(result: Mapping[str, Any]) -> list[str]:
    """The players in the report's one order (``compute``: ``leaderboard.player_order``), every table's."""
    listed = list(result.get("players") or [])
    return listed + sorted({d["player"] for d in result["conditions"]} - set(listed))


def player_items(mapping: Mapping[str, Any], order: Sequence[str]) -> list[tuple[str, Any]]:
    """A {player: x} mapping's items in the report's order of players (any other player after, by name)."""
    place = {p: i for i, p in enumerate(order)}
    return sorted(mapping.items(), key=lambda item: (place.get(item[0], len(place)), item[0]))


def inputs_in_order(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The inputs table's logs: by their player in the report's order, then as listed (a log of no
    player, skipped, last)."""
    place = {p: i for i, p in enumerate(players_of(result))}
    return sorted(result["inputs"], key=lambda n: place.get(n.get("player"), len(place)))


def in_order(by_column: dict[str, Any], columns: Sequence[str]) -> list[tuple[str, Any]]:
    """A {column: x} mapping's items in the report's column order (any other column after, by name)."""
    place = {col: i for i, col in enumerate(columns)}
    return sorted(by_column.items(), key=lambda item: (place.get(item[0], len(place)), item[0]))


def tau_text(fit: Mapping[str, Any]) -> str:
    """'τ = 1.52', and where the fit sits on an edge of τ's range (``core.depth``), which edge: a τ
    at the upper bound is no depth measured, only that no finite depth fits better."""
    tau = float(fit["tau"])
    said = f"τ = {tau:.2f}"
    if not fit.get("tau_at_bound"):
        return said
    if tau >= TAU_MAX:
        return said + f" (at the fit's upper bound, τ ≤ {TAU_MAX:g}: a bound, not a depth)"
    return said + " (at the fit's lower bound, τ ≥ 0)"


DEPTH_LEAD = ("Depth of reasoning τ, one row per player, one column per beauty-contest column (cognitive hierarchy, "
              "first runs; people: τ ≈ 1.5, Camerer, Ho and Chong 2004; intervals and noise: the table "
              f"{DEPTH_FITS_TITLE} below).")


def depth_table(result: Mapping[str, Any], columns: Sequence[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The depth of reasoning as a table: the columns that have a fit (in the report's order), and per
    player (in the report's order) its τ in each of them ('-': none); ([], []) where no column has one."""
    depth = result.get("depth") or {}
    fitted = {col for cols in depth.values() for col in cols}
    shown = [col for col, _ in in_order(dict.fromkeys(fitted), columns)]
    rows = [(p, [tau_text(cols[col]) if col in cols else "-" for col in shown])
            for p, cols in player_items(depth, players_of(result))]
    return shown, rows


def figure(x: Any) -> str:
    """A figure as the report's tables show it: three decimals, '-' for none, yes or no."""
    if isinstance(x, bool) or x is None:
        return "-" if x is None else ("yes" if x else "no")
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return "-" if math.isnan(x) else f"{x:.3f}"
    return str(x)
