"""The schedule of a tournament (a melee): which players sit at which table, in which seat.

``schedule(players, seats, tables_per_player, seed)`` draws ``table_count`` tables of ``seats``
seats from a roster of ``players`` (indices 0 .. players - 1), fixed by the seed, balanced three ways:

- **tables**: each player takes as many seats as any other, within one (every table seats
  ``seats`` players, so ``players × tables_per_player`` seats are shared out as evenly as they go);
- **seat positions**: each player sits in each seat position as often as in any other, within one
  (no player keeps the lowest seat's tie-break, or the first seat of every prompt);
- **pairs**: each pair of players meets (sits at one table) within one of the mean number of
  meetings, where the design allows it (``pair_band_counts_allow`` states what counting requires;
  docs/arena.md what is reached); a roster no larger than a table meets in full at every table.

How: the tables are filled one by one with the players that have sat least (ties broken by fewest
meetings with those already seated, then by the seed's draw), which keeps the first balance; a
seeded local search then swaps players between tables (which keeps it) while the sum of squared
meetings falls, and where that leaves pairs outside the band of one around their mean, a seeded
annealing goes on from there (four long tries, then on a small shape many short ones, each from a
fill of its own); last, each table's seats are given out so that each player's seat
positions even out, and any player still two apart in two positions is mended by swapping seats
along a chain of tables (de Werra's equitable colouring: it always exists). Pure Python, no I/O:
the same arguments give the same schedule on every machine and every Python version (no draw
depends on the order a ``set`` lists its members in: ``_TableSet``).
"""
from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

# what a pair meeting outside the band of one around the mean costs the search, per step out,
# squared, beyond its squared distance from the mean
OUT_OF_BAND = 4.0
# searches for pair meetings in the band before the best one found is taken
SEARCHES = 4
# the most swaps one search tries: a large roster the band is out of reach for (100 players, 5 seats,
# 20 tables each) would otherwise hold its run's start for a minute; tables of up to 125 seats in all
# search their full 400 swaps a seat
MAX_STEPS = 50_000
# short tries after the long ones, on a shape small enough that a long try fits within MAX_STEPS,
# where the long ones leave a pair out of the band: a try gets there or not mostly by its start, not
# its length (12 players at 6 seats, 9 tables each: a try of 10,000 swaps reaches the band a quarter
# of the time, one of 43,200 about 40 %, in seven times as long), so many short tries beat a few long
RESTARTS = 24
RESTART_STEPS = 10_000
# Shapes (players, seats, tables per player) whose counts allow the band (``pair_band_counts_allow``)
# but that have no schedule in it at all: an exact search proves it (``bench/schedule_designs.py``,
# a SAT encoding; tests/core/test_schedule_designs.py runs it again). 3 to 12 players, 2 to 6 seats,
# 1 to 10 tables each; the short tries are not spent on them.
NO_DESIGN = frozenset({(8, 4, 3), (9, 4, 3), (9, 5, 3), (10, 5, 4), (10, 6, 4), (11, 5, 3), (11, 5, 4),
                       (11, 6, 3), (12, 5, 3), (12, 5, 4), (12, 6, 3), (12, 6, 4), (12, 6, 5)})


@dataclass(frozen=True)
class Schedule:
    """``tables[t][s]``: the player (roster index) in seat ``s + 1`` of table ``t``."""

    players: int
    seats: int
    tables: tuple[tuple[int, ...], ...]

    def seat_counts(self) -> list[int]:
        """Seats each player takes over the whole schedule."""
        out = [0] * self.players
        for table in self.tables:
            for p in table:
                out[p] += 1
        return out

    def table_counts(self) -> list[int]:
        """Tables each player sits at (once however many seats it takes there)."""
        out = [0] * self.players
        for table in self.tables:
            for p in set(table):
                out[p] += 1
        return out

    def position_counts(self) -> list[list[int]]:
        """``[player][seat - 1]``: how often each player sits in each seat position."""
        out = [[0] * self.seats for _ in range(self.players)]
        for table in self.tables:
            for s, p in enumerate(table):
                out[p][s] += 1
        return out

    def pair_counts(self) -> dict[tuple[int, int], int]:
        """``(a, b)`` with a < b -> the tables at which both sat, for every pair of the roster."""
        out = {(a, b): 0 for a in range(self.players) for b in range(a + 1, self.players)}
        for table in self.tables:
            members = sorted(set(table))
            for i, a in enumerate(members):
                for b in members[i + 1:]:
                    out[(a, b)] += 1
        return out


def table_count(players: int, seats: int, tables_per_player: int) -> int:
    """The tables a tournament needs so that each player sits at ``tables_per_player`` of them: a
    roster larger than a table shares the seats out; a smaller one sits at every table."""
    _check(players, seats, tables_per_player)
    return math.ceil(players * tables_per_player / min(players, seats))


def pair_band(players: int, seats: int, tables_per_player: int) -> tuple[int, int]:
    """The band of one around the mean pair meetings, as whole numbers: (lowest, highest)."""
    n_tables = table_count(players, seats, tables_per_player)
    if players <= seats:
        return n_tables, n_tables
    mean = n_tables * seats * (seats - 1) / (players * (players - 1))
    return max(0, math.ceil(mean - 1 - 1e-9)), math.floor(mean + 1 + 1e-9)


def pair_band_counts_allow(players: int, seats: int, tables_per_player: int) -> bool:
    """Whether counting allows every pair's meetings in ``pair_band``: necessary, not sufficient.

    With seat counts held within one, a player of ``r`` seats meets ``r × (seats - 1)`` others in all,
    so the band must hold those sums: the meetings less the band's low end are the edges of a
    multigraph with at most (high - low) edges a pair and those degrees, which exists exactly when
    Chungphaisan's condition holds (Erdős–Gallai's, for a band of two values). And two players that
    meet high + 1 times share high + 1 tables, so no (high + 1)-set of tables may lie in the tables of
    two players: the sum over players of C(r, high + 1) is at most C(tables, high + 1)."""
    n_tables = table_count(players, seats, tables_per_player)
    if players <= seats:
        return True
    low, high = pair_band(players, seats, tables_per_player)
    q, extra = divmod(n_tables * seats, players)
    counts = [q + 1] * extra + [q] * (players - extra)
    if sum(math.comb(r, high + 1) for r in counts) > math.comb(n_tables, high + 1):
        return False
    b = high - low
    degrees = sorted((r * (seats - 1) - (players - 1) * low for r in counts), reverse=True)
    if any(d < 0 or d > b * (players - 1) for d in degrees):
        return False
    return all(sum(degrees[:m]) <= b * m * (m - 1) + sum(min(b * m, d) for d in degrees[m:])
               for m in range(1, players + 1))


def balance_words(drawn: Schedule, tables_per_player: int) -> str:
    """How balanced a drawn schedule is, as a plan line says it: tables a player, seat positions,
    and pair meetings against their mean, with whether every pair is within one of it, and if not,
    whether any schedule of the shape could be (the counting conditions, ``NO_DESIGN``)."""
    tables = drawn.table_counts()
    spread = max(max(c) - min(c) for c in drawn.position_counts())
    meetings = list(drawn.pair_counts().values())
    mean = sum(meetings) / len(meetings)
    low, high = pair_band(drawn.players, drawn.seats, tables_per_player)
    if low <= min(meetings) and max(meetings) <= high:
        pairs = "every pair within one of it"
    elif (not pair_band_counts_allow(drawn.players, drawn.seats, tables_per_player)
          or (drawn.players, drawn.seats, tables_per_player) in NO_DESIGN):
        pairs = "no schedule of this shape has every pair within one of it: docs/arena.md"
    else:
        pairs = "not every pair within one of it: the search did not get there"
    positions = "each seat position within one" if spread <= 1 else f"seat positions up to {spread} apart"
    return (f"schedule: {min(tables)}-{max(tables)} tables a player, {positions}, pairs meet "
            f"{min(meetings)}-{max(meetings)} times (mean {mean:.2f}; {pairs})")


def _check(players: int, seats: int, tables_per_player: int) -> None:
    if players < 2:
        raise ValueError(f"a tournament needs at least 2 players, got {players}")
    if seats < 2:
        raise ValueError(f"a table needs at least 2 seats, got {seats}")
    if tables_per_player < 1:
        raise ValueError(f"tables_per_player must be >= 1, got {tables_per_player}")


def _rng(seed: Any, players: int, seats: int, tables_per_player: int) -> random.Random:
    text = f"econarena-schedule:{seed}:{players}:{seats}:{tables_per_player}".encode("utf-8", "backslashreplace")
    return random.Random(int.from_bytes(hashlib.sha256(text).digest()[:8], "big"))


def schedule(players: int, seats: int, tables_per_player: int, seed: Any) -> Schedule:
    """The balanced schedule of ``table_count(players, seats, tables_per_player)`` tables."""
    n_tables = table_count(players, seats, tables_per_player)
    rng = _rng(seed, players, seats, tables_per_player)
    members = _members(players, seats, n_tables, rng)
    if players > seats:
        # where the first search leaves pairs out of the band, the annealing starts from the first
        # fill (its local minima are not the first search's), again on the seed's next draws where
        # one try does not get there (a few do where one does not); the lowest cost found is kept
        fill = [list(t) for t in members]
        if not _first_search(members, players, rng):
            found = (_even_pairs(members, players, rng, steps=0)[1], members)
            tries = [None] * SEARCHES
            if (400 * n_tables * seats <= MAX_STEPS
                    and (players, seats, tables_per_player) not in NO_DESIGN):
                tries += [RESTART_STEPS] * RESTARTS
            for steps in tries:
                # a short try starts from a fill of its own: where the tries go depends on their start
                trial = [list(t) for t in fill] if steps is None else _members(players, seats, n_tables, rng)
                reached, cost = _even_pairs(trial, players, rng, steps)
                if cost < found[0]:
                    found = (cost, trial)
                if reached:
                    break
            members = found[1]
    return Schedule(players, seats, tuple(tuple(t) for t in _positions(members, players, seats, rng)))


def seat_roster(names: Sequence[str], seats: int, tables_per_player: int, seed: Any) -> Schedule:
    """The schedule of a roster given by name, in terms of its own order: drawn for the names sorted,
    so that the order a command line lists them in changes no table, seat or seed."""
    drawn = schedule(len(names), seats, tables_per_player, seed)
    by_name = sorted(range(len(names)), key=lambda i: names[i])
    return Schedule(drawn.players, seats, tuple(tuple(by_name[p] for p in t) for t in drawn.tables))


def _members(players: int, seats: int, n_tables: int, rng: random.Random) -> list[list[int]]:
    """Who sits at each table (in no seat order yet): every player ``seats // players`` times, and the
    remaining seats to the players that have had fewest of them."""
    base, extra = divmod(seats, players)
    count = [0] * players  # extra seats taken so far
    meet = [[0] * players for _ in range(players)]
    tables = []
    for _ in range(n_tables):
        chosen: list[int] = []
        for _ in range(extra):
            free = [p for p in range(players) if p not in chosen]
            low = min(count[p] for p in free)
            free = [p for p in free if count[p] == low]
            best = min(sum(meet[p][q] for q in chosen) for p in free)
            pick = rng.choice([p for p in free if sum(meet[p][q] for q in chosen) == best])
            chosen.append(pick)
        for p in chosen:
            count[p] += 1
            for q in chosen:
                if q != p:
                    meet[p][q] += 1
        tables.append([p for p in range(players) for _ in range(base)] + chosen)
    return tables


def _first_search(tables: list[list[int]], players: int, rng: random.Random) -> bool:
    """The first search, kept as it was when melee logs were first written (schedules it brings into
    the band stay the same; ``_even_pairs`` takes over where it does not). Swap players between tables
    (each keeps its number of seats) while the sum of squared pair meetings falls, or stays (a sideways
    step, half the time), until every pair is within one of the mean or the search's budget is spent.
    True if it got there. Half the swaps are aimed: a pair that meets too often is parted, one that
    meets too seldom brought together. Tables hold distinct players here. Its aimed swaps draw from
    the tables two players share (or one has and not the other) in the order CPython 3.10 and later
    list such a set (``_TableSet``), on every Python version: its schedules stay those of those versions."""
    meet, at = _meetings(tables, players, _TableSet)
    seats = len(tables[0])
    mean = len(tables) * seats * (seats - 1) / (players * (players - 1))
    low, high = math.ceil(mean - 1 - 1e-9), math.floor(mean + 1 + 1e-9)
    pairs = [(a, b) for a in range(players) for b in range(a + 1, players)]
    bad: list[tuple[int, int]] = []
    check_every = 4 * len(tables)
    for step in range(200 * len(tables) * seats):
        if step % check_every == 0:
            bad = [(a, b) for a, b in pairs if not low <= meet[a][b] <= high]
            if not bad:
                return True
        swap = _proposed(tables, at, meet, bad, high, rng, _TableSet.common, _TableSet.only)
        if swap is None:
            continue
        # what the swap does to the sum of the squares of the pairs' meetings
        delta = 0
        for (u, v), d in swap[4].items():
            if d:
                m = meet[u][v]
                delta += 2 * m * d + d * d
        if delta > 0 or (delta == 0 and rng.random() < 0.5):
            continue
        _swap(tables, at, meet, *swap)
    return False


def _even_pairs(tables: list[list[int]], players: int, rng: random.Random,
                steps: Optional[int] = None) -> tuple[bool, float]:
    """Swap players between tables (each keeps its number of seats, so the first balance holds) until
    every pair is within one of the mean or the search's budget is spent: a seeded annealing on the
    sum of squared distances from the mean, where a meeting outside the band of one costs
    ``OUT_OF_BAND`` more per step out (a sum of squares alone stalls in local minima with a few pairs
    two off). Worse swaps are taken with a chance that falls as the search goes on. Half the swaps
    are aimed: a pair that meets too often is parted, one that meets too seldom brought together
    (drawing from the tables in sorted order). The best state looked at is kept. Tables hold distinct
    players here. Returns (every pair in the band, the cost of the tables left); ``steps=0`` only says
    so of the tables as they are."""
    meet, at = _meetings(tables, players, set)
    seats = len(tables[0])
    mean = len(tables) * seats * (seats - 1) / (players * (players - 1))
    low, high = math.ceil(mean - 1 - 1e-9), math.floor(mean + 1 + 1e-9)

    def cost(m: int) -> float:
        out = max(0, low - m, m - high)
        return (m - mean) ** 2 + OUT_OF_BAND * out * out

    pairs = [(a, b) for a in range(players) for b in range(a + 1, players)]
    bad = [(a, b) for a, b in pairs if not low <= meet[a][b] <= high]
    # added one by one, not by sum(): Python 3.12's sum() of floats rounds otherwise (Neumaier's
    # compensated sum), and a last bit's difference picks another try's tables as the best
    total = 0.0
    for a, b in pairs:
        total += cost(meet[a][b])
    best, best_tables = total, [list(t) for t in tables]
    if steps == 0:
        return not bad, total
    steps = min(400 * len(tables) * seats, MAX_STEPS) if steps is None else steps
    check_every = 4 * len(tables)
    for step in range(steps):
        if step % check_every == 0:
            bad = [(a, b) for a, b in pairs if not low <= meet[a][b] <= high]
            if not bad:
                return True, total
            if total < best - 1e-9:  # looked at now and then: a copy at every better step costs too much
                best, best_tables = total, [list(t) for t in tables]
        swap = _proposed(tables, at, meet, bad, high, rng, _sorted_common, _sorted_only)
        if swap is None:
            continue
        delta = 0.0
        for (u, v), d in swap[4].items():
            if d:
                delta += cost(meet[u][v] + d) - cost(meet[u][v])
        heat = 0.6 * (1 - step / steps) + 0.02  # falls from 0.62 to 0.02 over the budget
        if delta > 0 and rng.random() >= math.exp(-delta / heat):
            continue
        if delta == 0 and rng.random() < 0.5:
            continue
        _swap(tables, at, meet, *swap)
        total += delta
    if total > best + 1e-9:
        tables[:] = best_tables
    return False, min(total, best)


Listing = Callable[[Any, Any], list[int]]  # (x, y) -> the tables of x & y, or of x - y, in a set order


def _meetings(tables: list[list[int]], players: int, new_set: Callable[[], Any]) -> tuple[list[list[int]], list[Any]]:
    """([a][b] -> the tables a and b share, [a] -> the set of tables a sits at, made by ``new_set``)."""
    meet = [[0] * players for _ in range(players)]
    at = [new_set() for _ in range(players)]
    for t, members in enumerate(tables):
        for a in members:
            at[a].add(t)
            for b in members:
                if a != b:
                    meet[a][b] += 1
    return meet, at


def _proposed(tables: list[list[int]], at: list[Any], meet: list[list[int]], bad: list[tuple[int, int]], high: int,
              rng: random.Random, common: Listing, only: Listing
              ) -> Optional[tuple[int, int, int, int, dict[tuple[int, int], int]]]:
    """A swap both searches weigh: (t1, a, t2, b, change), a leaving t1 for t2 and b t2 for t1, aimed
    at a pair out of the band half the time (``common`` and ``only`` list the tables two players share,
    or one has and the other not), else drawn at random; ``change``: how each pair's meetings change
    (a player at both tables meets a and b either way). None: no swap to weigh this step."""
    move = _aimed(tables, at, meet, rng.choice(bad), high, rng, common, only) if rng.random() < 0.5 else None
    if move is None:
        t1, t2 = rng.randrange(len(tables)), rng.randrange(len(tables))
        a, b = rng.choice(tables[t1]), rng.choice(tables[t2])
    else:
        t1, a, t2, b = move
    if t1 == t2 or t2 in at[a] or t1 in at[b]:
        return None
    change: dict[tuple[int, int], int] = {}
    for x in tables[t1]:
        if x != a:
            change[(a, x)] = change.get((a, x), 0) - 1
            change[(b, x)] = change.get((b, x), 0) + 1
    for y in tables[t2]:
        if y != b:
            change[(b, y)] = change.get((b, y), 0) - 1
            change[(a, y)] = change.get((a, y), 0) + 1
    return t1, a, t2, b, change


def _swap(tables: list[list[int]], at: list[Any], meet: list[list[int]], t1: int, a: int, t2: int, b: int,
          change: dict[tuple[int, int], int]) -> None:
    """Make the swap ``_proposed`` gave."""
    for (u, v), d in change.items():
        meet[u][v] += d
        meet[v][u] += d
    tables[t1][tables[t1].index(a)] = b
    tables[t2][tables[t2].index(b)] = a
    at[a].remove(t1)
    at[a].add(t2)
    at[b].remove(t2)
    at[b].add(t1)


def _aimed(tables: list[list[int]], at: list[Any], meet: list[list[int]], pair: tuple[int, int], high: int,
           rng: random.Random, common: Listing, only: Listing) -> Optional[tuple[int, int, int, int]]:
    """A swap (t1, a, t2, b) for a pair out of balance: one of a pair that meets too often leaves a
    table of theirs; one of a pair that meets too seldom joins the other's table."""
    u, v = pair if rng.random() < 0.5 else pair[::-1]
    if meet[u][v] > high:
        t1 = rng.choice(common(at[u], at[v]))
        t2 = rng.randrange(len(tables))
        return t1, u, t2, rng.choice(tables[t2])
    apart = only(at[v], at[u])
    if not apart or not at[u]:
        return None
    t1, t2 = rng.choice(only(at[u], at[v]) or [-1]), rng.choice(apart)
    if t1 < 0:
        return None
    b = rng.choice(tables[t2])
    return (t1, u, t2, b) if b != v else None


def _sorted_common(x: set[int], y: set[int]) -> list[int]:
    return sorted(x & y)


def _sorted_only(x: set[int], y: set[int]) -> list[int]:
    return sorted(x - y)


# CPython's set of ints: its table, probed as setobject.c does (a non-negative int is its own hash)
LINEAR_PROBES, PERTURB_SHIFT, SET_MIN_SIZE = 9, 5, 8
_DUMMY = -1  # a slot whose member was removed


class _TableSet:
    """A set of non-negative ints that lists its members in the order CPython 3.10 and later list a
    ``set`` that went through the same adds and removes: their slots in its hash table. Python 3.9's
    set put a member added after a removal elsewhere (it never took back a removed member's slot;
    3.10 and later take the last such slot on the new member's probe path), so ``list(a & b)`` of
    such sets differed between the versions, and with it which table a seeded draw picked."""

    __slots__ = ("table", "fill", "members")

    def __init__(self, items: Iterable[int] = ()) -> None:
        self.table: list[Optional[int]] = [None] * SET_MIN_SIZE
        self.fill = 0  # slots ever taken since the last resize: members and removed members
        self.members: set[int] = set()
        for x in items:
            self.add(x)

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, x: int) -> bool:
        return x in self.members

    def order(self) -> list[int]:
        return [x for x in self.table if x is not None and x != _DUMMY]

    def add(self, x: int) -> None:
        if x in self.members:
            return
        self.members.add(x)
        table, mask = self.table, len(self.table) - 1
        j = x & mask
        if table[j] is not None:  # else x's home slot is free: most adds
            free = None  # the last removed member's slot on x's probe path: taken if the path reaches an empty one
            for j in _probe(x, mask):
                if table[j] is None:
                    break
                if table[j] == _DUMMY:
                    free = j
            if free is not None:
                table[free] = x
                return
        table[j] = x
        self.fill += 1
        if self.fill * 5 >= mask * 3:
            used = len(self.members)
            self._resize(used * 2 if used > 50000 else used * 4)

    def remove(self, x: int) -> None:
        self.members.remove(x)
        home = x & (len(self.table) - 1)
        if self.table[home] == x:
            self.table[home] = _DUMMY
            return
        for j in _probe(x, len(self.table) - 1):
            if self.table[j] == x:
                self.table[j] = _DUMMY
                return

    def _resize(self, least: int) -> None:
        size = SET_MIN_SIZE
        while size <= least:
            size <<= 1
        old, self.table = self.table, [None] * size
        for x in old:
            if x is not None and x != _DUMMY:
                _place(self.table, size - 1, x)
        self.fill = len(self.members)

    @staticmethod
    def common(x: "_TableSet", y: "_TableSet") -> list[int]:
        """``list(x & y)`` as CPython orders it: the smaller set's members (y's at equal sizes) that the
        other holds, in a new set."""
        small, big = (y, x) if len(y) <= len(x) else (x, y)
        return _listed([t for t in small.order() if t in big.members])

    @staticmethod
    def only(x: "_TableSet", y: "_TableSet") -> list[int]:
        """``list(x - y)`` as CPython orders it where len(x) // 4 <= len(y), as in a schedule (every player
        sits at q or q + 1 tables, q >= 1): x's members that y does not hold, in a new set."""
        return _listed([t for t in x.order() if t not in y.members])


def _listed(items: Sequence[int]) -> list[int]:
    """``list(set())`` after adding ``items`` (distinct) in turn, as ``_TableSet`` lists it (the fast way:
    a new set has no removed member's slot)."""
    table: list[Optional[int]] = [None] * SET_MIN_SIZE
    mask = SET_MIN_SIZE - 1
    for n, x in enumerate(items, 1):
        _place(table, mask, x)
        if n * 5 >= mask * 3:  # as _TableSet.add: a new set's slots taken are its members
            size = SET_MIN_SIZE
            while size <= (n * 2 if n > 50000 else n * 4):
                size <<= 1
            old, table, mask = table, [None] * size, size - 1
            for y in old:
                if y is not None:
                    _place(table, mask, y)
    return [x for x in table if x is not None]


def _place(table: list[Optional[int]], mask: int, x: int) -> None:
    """Put ``x`` in the first empty slot of its probe path (a table with no removed member's slot)."""
    j = x & mask
    if table[j] is not None:
        for j in _probe(x, mask):
            if table[j] is None:
                break
    table[j] = x


def _probe(x: int, mask: int) -> Iterator[int]:
    """The slots CPython's set looks at for ``x``, in turn: runs of up to ten from the home slot, then
    perturbed jumps."""
    i, perturb = x & mask, x
    while True:
        yield from range(i, i + (LINEAR_PROBES + 1 if i + LINEAR_PROBES <= mask else 1))
        perturb >>= PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask


def _positions(tables: Sequence[Sequence[int]], players: int, seats: int, rng: random.Random) -> list[list[int]]:
    """Each table's players given seats: each takes the free seat it has sat in least, then any player
    two apart in two seat positions is mended along a chain of swaps."""
    count = [[0] * seats for _ in range(players)]
    out: list[list[int]] = []
    for members in tables:
        order = list(members)
        rng.shuffle(order)
        row = [-1] * seats
        for p in order:
            free = [s for s in range(seats) if row[s] < 0]
            least = min(count[p][s] for s in free)
            s = rng.choice([s for s in free if count[p][s] == least])
            row[s] = p
            count[p][s] += 1
        out.append(row)
    where: list[dict[int, list[int]]] = [{s: [] for s in range(seats)} for _ in range(players)]
    for t, row in enumerate(out):
        for s, p in enumerate(row):
            where[p][s].append(t)
    for _ in range(4 * players * seats + 16):
        uneven = [p for p in range(players) if max(count[p]) - min(count[p]) >= 2]
        if not uneven:
            break
        p = rng.choice(uneven)
        a = max(range(seats), key=lambda s: count[p][s])
        b = min(range(seats), key=lambda s: count[p][s])
        _mend(out, count, where, p, a, b, rng)
    return out


def _mend(out: list[list[int]], count: list[list[int]], where: list[dict[int, list[int]]], p: int, a: int, b: int,
          rng: random.Random) -> None:
    """Move one of ``p``'s seats from position ``a`` to ``b`` by a chain of seat swaps: at a table
    where p sits in ``a``, p and the player in ``b`` change seats; that player, now one more in ``a``,
    goes on the same way if it is now two apart in ``a`` and ``b``. Each swap keeps every table full."""
    used: set[int] = set()
    for _ in range(len(out) + 1):
        tables = [t for t in where[p][a] if t not in used and out[t][b] != p]
        if not tables:
            return
        t = rng.choice(tables)
        used.add(t)
        q = out[t][b]
        out[t][a], out[t][b] = q, p
        where[p][a].remove(t)
        where[p][b].append(t)
        where[q][b].remove(t)
        where[q][a].append(t)
        count[p][a] -= 1
        count[p][b] += 1
        count[q][b] -= 1
        count[q][a] += 1
        if count[q][a] - count[q][b] <= 1:
            return
        p = q
