"""Which tournament shapes have a schedule with every pair's meetings within one of their mean: an
exact search, where the schedule's own (``core/schedule.py``) is a seeded local one.

    python bench/schedule_designs.py                  # the shapes core.schedule.NO_DESIGN names
    python bench/schedule_designs.py 12,6,9 8,4,4     # players,seats,tables_per_player
    python bench/schedule_designs.py --grid           # every shape of 3 to 12 players, 2 to 6 seats,
                                                      # 1 to 10 tables each whose counts allow it
    python bench/schedule_designs.py --json ...       # one JSON object per shape, for tests

Needs python-sat (the ``test`` extra). A shape is encoded as a SAT problem: ``x[p][t]`` says player
``p`` sits at table ``t``; each table seats ``seats`` players, each player sits at ``q`` or ``q + 1``
tables (the schedule's own first balance: the seats shared out within one), and each pair's shared
tables, ``y[a][b][t] = x[a][t] and x[b][t]``, number from the band's low to its high end
(``core.schedule.pair_band``); cardinalities by totalizers. Players are interchangeable, and so are
tables, so rows and columns of ``x`` are held in lexicographic order (double-lex: every schedule has
a relabelling in that order), which turns a search of hours into one of seconds. Seat positions
are left out: an equitable colouring always evens them out (core/schedule.py). UNSAT is a proof
that no schedule of that shape has every pair in the band; SAT gives one, checked here with the
``Schedule`` counters. Prints figures, asserts nothing of the package.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from econarena_evals.core.schedule import (  # noqa: E402
    NO_DESIGN,
    Schedule,
    pair_band,
    pair_band_counts_allow,
    table_count,
)


def design(players: int, seats: int, per_player: int) -> Optional[list[list[int]]]:
    """A schedule's tables (who sits at each) with every pair in the band, or None if none exists."""
    from pysat.card import CardEnc, EncType
    from pysat.formula import IDPool
    from pysat.solvers import Cadical153

    n_tables = table_count(players, seats, per_player)
    low, high = pair_band(players, seats, per_player)
    q, extra = divmod(n_tables * seats, players)
    pool = IDPool()
    x = [[pool.id(("x", p, t)) for t in range(n_tables)] for p in range(players)]
    clauses: list[list[int]] = []

    def card(lits: list[int], at_least: Optional[int], at_most: Optional[int]) -> None:
        if at_least:
            clauses.extend(CardEnc.atleast(lits, at_least, vpool=pool, encoding=EncType.totalizer).clauses)
        if at_most is not None:
            clauses.extend(CardEnc.atmost(lits, at_most, vpool=pool, encoding=EncType.totalizer).clauses)

    for t in range(n_tables):
        card([x[p][t] for p in range(players)], seats, seats)
    for p in range(players):
        card(x[p], q, q + (1 if extra else 0))
    for a in range(players):
        for b in range(a + 1, players):
            both = []
            for t in range(n_tables):
                y = pool.id(("y", a, b, t))
                clauses += [[-y, x[a][t]], [-y, x[b][t]], [y, -x[a][t], -x[b][t]]]
                both.append(y)
            card(both, low, high)

    def lex_at_least(first: list[int], second: list[int]) -> None:
        # e_i: the two agree on their first i places; where they do, first[i] >= second[i]
        same = pool.id(("lex", len(clauses)))
        clauses.append([same])
        for u, v in zip(first, second):
            after = pool.id(("lex", len(clauses)))
            clauses.extend([[-same, -v, u], [-same, u, v, after], [-same, -u, -v, after]])
            same = after

    for p in range(players - 1):
        lex_at_least(x[p], x[p + 1])
    for t in range(n_tables - 1):
        lex_at_least([x[p][t] for p in range(players)], [x[p][t + 1] for p in range(players)])
    with Cadical153(bootstrap_with=clauses) as solver:
        if not solver.solve():
            return None
        chosen = {lit for lit in solver.get_model() if lit > 0}
    return [[p for p in range(players) if x[p][t] in chosen] for t in range(n_tables)]


def check(players: int, seats: int, per_player: int, tables: list[list[int]]) -> None:
    """Raise unless ``tables`` is a schedule of the shape with every pair in the band."""
    drawn = Schedule(players, seats, tuple(tuple(t) for t in tables))
    counts = drawn.seat_counts()
    low, high = pair_band(players, seats, per_player)
    meetings = drawn.pair_counts().values()
    if not (max(counts) - min(counts) <= 1 and all(len(set(t)) == seats for t in tables)
            and low <= min(meetings) and max(meetings) <= high):
        raise AssertionError(f"the search's design for {(players, seats, per_player)} is not in the band")


def grid() -> list[tuple[int, int, int]]:
    return [(p, s, t) for s in range(2, 7) for p in range(s + 1, 13) for t in range(1, 11)
            if pair_band_counts_allow(p, s, t)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="*", help="players,seats,tables_per_player (default: NO_DESIGN's)")
    ap.add_argument("--grid", action="store_true", help="every shape of the grid whose counts allow the band")
    ap.add_argument("--json", action="store_true", help="one JSON object per shape")
    args = ap.parse_args()
    if args.grid:
        shapes = grid()
    elif args.shapes:
        shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes]
    else:
        shapes = sorted(NO_DESIGN)
    none = []
    if not args.json:
        print("(players, seats, tables each): the schedule's tables, the band of pair meetings (the whole "
              "numbers within one of the mean), and whether a schedule with every pair in it exists", flush=True)
    for shape in shapes:
        if not args.json:  # one search can take a minute (8 players at 5 seats, 9 tables each, on a busy machine)
            print(f"{shape}: searching ...", flush=True)
        start = time.monotonic()
        tables = design(*shape)
        took = time.monotonic() - start
        if tables is not None:
            check(*shape, tables)
        else:
            none.append(shape)
        if args.json:
            print(json.dumps({"shape": list(shape), "design": tables, "seconds": round(took, 2)}), flush=True)
        else:
            low, high = pair_band(*shape)
            print(f"{shape}: {table_count(*shape)} tables, band {low}-{high}: "
                  f"{'a design' if tables else 'no design'} ({took:.1f} s)", flush=True)
    if not args.json:
        print(f"{len(shapes)} shapes, {len(none)} with no design: {none}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
