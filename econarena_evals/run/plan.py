"""What a run will ask of an endpoint, before it asks: seat calls, prompt tokens, tokens reserved.

The eval prints one such line before its first call, and ``econarena-plan MODEL EVAL_OR_SET``
prints the same for a whole eval set without any call, with the cost if given prices per million
tokens (no price table is shipped: prices go stale) and the time at given limits.

Prompt tokens are counted on the prompts the sessions will really get (the samples file's c̄ or
values; history runs filled with typical numbers), with tiktoken for OpenAI models where its
encoding is on disk, else estimated as characters / 4. Completion tokens are what each request
reserves against a tokens-per-minute limit (``max_tokens``), an upper bound on what is paid, and
what is to be expected: ``TYPICAL_REPLY_TOKENS`` a reply (at most ``max_tokens``), until the run's
first answers say what this model writes (``expected_from_answers``).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

import yaml

from ..calls.batches import MAX_LINES
from ..core.closest import closest
from ..core.option_domains import outside_domain
from ..core.prompts import PastRun, prompt_text
from ..core.schedule import balance_words, seat_roster
from ..core.sessions import CellConfig, Session, history_window, waves
from ..fns.registry_files import builtin_players, packaged_registries
from ..fns.roster import RosterError
from ..fns.roster import load as load_roster
from ..games import cell as game_cell
from ..games import check_cell, session_from_sample
from ..games import get as get_game
from .config import check_roster_once, melee_args
from .evalset import members

OPENAI_MODEL = re.compile(r"^(gpt-|o\d|chatgpt|text-|davinci|babbage)")
MESSAGE_OVERHEAD = 4  # tokens a chat message adds around its content
# Completion tokens of a typical reply: the JSON answer alone is about 40; models that explain
# themselves in "understanding" and "reason" write 100-250 (docs/benchmarks.md, token usage).
# Reasoning models write more, which the first answers show (``expected_from_answers``).
TYPICAL_REPLY_TOKENS = 150
# answers whose usage the run waits for before it says what its completions will come to
ANSWERS_FOR_EXPECTED = 20
_counters: dict[str, tuple[Callable[[str], int], str]] = {}


def _chars(text: str) -> int:
    return max(1, round(len(text) / 4))


def token_counter(model: Optional[str]) -> tuple[Callable[[str], int], str]:
    """(count, how it counts) for ``model``'s prompts."""
    name = str(model or "")
    if not OPENAI_MODEL.match(name):
        return _chars, "characters/4"
    if name in _counters:
        return _counters[name]
    found: list[Any] = []

    def load() -> None:
        try:
            import tiktoken

            try:
                found.append(tiktoken.encoding_for_model(name))
            except KeyError:
                found.append(tiktoken.get_encoding("o200k_base"))
        except Exception:  # noqa: BLE001 - no tiktoken, or its encoding cannot be fetched offline
            pass

    # tiktoken downloads its encoding on first use; a machine without network must not hang here
    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(5.0)
    if found:
        encoding = found[0]
        _counters[name] = (lambda text: len(encoding.encode(text, disallowed_special=())), f"tiktoken {encoding.name}")
    else:
        _counters[name] = (_chars, "characters/4, tiktoken's encoding files not being cached on this machine")
    return _counters[name]


@dataclass
class Estimate:
    sessions: int
    calls: int
    prompt_tokens: int
    completion_reserved: int
    counted: str  # how prompt tokens were counted
    kept: int = 0  # seat calls a resumed run takes from its log instead of sending (not in ``calls``)
    # batch mode: the waves that go one after another (one per run with history, else one), and
    # the batches they make (a wave over the API's limit of lines per batch is cut in several)
    waves: int = 0
    batches: int = 0
    # what the completions will likely come to: a typical reply's tokens per call, at most max_tokens
    completion_expected: int = 0

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.sessions + other.sessions, self.calls + other.calls,
                        self.prompt_tokens + other.prompt_tokens,
                        self.completion_reserved + other.completion_reserved, self.counted, self.kept + other.kept,
                        self.waves + other.waves, self.batches + other.batches,  # a set's evals run in turn
                        self.completion_expected + other.completion_expected)

    def batch_line(self) -> str:
        """What batch mode means for this run: how many batches, and how many waits in turn."""
        turns = "one wait" if self.waves == 1 else f"{self.waves} waits one after another"
        return (f"by batch: {self.batches:,} batch(es) in {self.waves} wave(s), {turns} for a batch to end "
                "(the API allows each up to 24 h)")

    def minutes_at(self, rpm: Optional[float], tpm: Optional[float]) -> Optional[float]:
        """The fewest minutes the run can take at these limits (None if neither is known)."""
        bounds = [self.calls / rpm if rpm else 0.0,
                  (self.prompt_tokens + self.completion_reserved) / tpm if tpm else 0.0]
        return max(bounds) if (rpm or tpm) else None

    def line(self) -> str:
        sessions = f"{self.sessions} session" + ("" if self.sessions == 1 else "s")
        calls = f"{self.calls:,} seat calls ({sessions})"
        if self.kept:
            calls = f"{self.kept:,} seat calls kept from the log resumed from, {self.calls:,} to send ({sessions})"
        if not self.calls and not self.prompt_tokens:  # nothing goes out: no tokens to count or reserve
            return f"{calls}: no request to send"
        return (f"{calls}; prompts ~{self.prompt_tokens:,} tokens "
                f"(counted by {self.counted}); completions reserve up to {self.completion_reserved:,} tokens, "
                f"~{self.completion_expected:,} expected ({self.expected_words()})")

    def expected_words(self) -> str:
        """How the completions expected were reckoned: a typical reply, or max_tokens where that is less."""
        per = self.completion_expected // self.calls if self.calls else TYPICAL_REPLY_TOKENS
        if per < TYPICAL_REPLY_TOKENS:
            return f"{per} a reply: max_tokens, under a typical reply's ~{TYPICAL_REPLY_TOKENS}"
        return f"~{TYPICAL_REPLY_TOKENS} a reply, typical of a model that explains its answer"


def estimate_players(cell: CellConfig, sessions: Sequence[Session], seating: Callable[[int], Sequence[int]],
                     models: Sequence[Optional[str]], max_tokens: Sequence[int],
                     kept: Optional[Callable[[int, int, int], bool]] = None) -> list[Estimate]:
    """A melee's seat calls player by player, in one pass: ``seating(session)`` names the roster entry
    in each seat; ``models[p]`` is what player ``p``'s requests name (its own token count), None for a
    built-in player, whose calls are counted but carry no tokens (it sends no request); each player
    reserves its own ``max_tokens[p]``. Calls ``kept(session, run, seat)`` are a resumed run's."""
    counters = [token_counter(m) for m in models]
    out = [Estimate(0, 0, 0, 0, counters[p][1]) for p in range(len(models))]
    game = get_game(cell.game)
    for session in sessions:
        seated = seating(session.index)
        for p in set(seated):
            out[p].sessions += 1
        for run in range(cell.runs):
            past: Optional[list[PastRun]] = None
            for seat in range(1, cell.seats + 1):
                p = seated[seat - 1]
                if kept is not None and kept(session.index, run, seat):
                    out[p].kept += 1
                    continue
                out[p].calls += 1
                if models[p] is None:
                    continue
                if past is None:
                    past = _typical_past(cell, session, run)
                messages = game.seat_prompt(cell, session, run, seat, past)
                out[p].prompt_tokens += counters[p][0](prompt_text(messages)) + MESSAGE_OVERHEAD * len(messages) + 3
    for p, est in enumerate(out):
        if models[p] is not None:
            est.completion_reserved = est.calls * max_tokens[p]
            est.completion_expected = est.calls * typical_reply(max_tokens[p])
    return out


Prices = Mapping[str, tuple[Optional[float], Optional[float]]]  # player -> (per million prompt, completion tokens)


def _costs(est: Estimate, price_in: Optional[float], price_out: Optional[float],
           share: float = 1.0) -> tuple[float, float]:
    """(expected, at most) of ``est`` at these prices per million tokens (a price not given: 0)."""
    cost_in = est.prompt_tokens * (price_in or 0) / 1e6 * share
    return (cost_in + est.completion_expected * (price_out or 0) / 1e6 * share,
            cost_in + est.completion_reserved * (price_out or 0) / 1e6 * share)


def cost_words(est: Estimate, price_in: Optional[float], price_out: Optional[float], share: float = 1.0) -> str:
    """What ``est`` costs at these prices per million tokens: expected, and at most (every reply at max_tokens)."""
    expected, most = _costs(est, price_in, price_out, share)
    missing = [what for what, price in (("prompt", price_in), ("completion", price_out)) if price is None]
    unpriced = f" (no {' or '.join(missing)} price given: counted as 0)" if missing else ""
    return f"cost ~{expected:.2f} expected, at most {most:.2f}{unpriced}"


def melee_lines(names: Sequence[str], models: Sequence[Optional[str]], estimates: Sequence[Estimate], tables: int,
                seats: int, runs: int, prices: Optional[Prices] = None, balance: Optional[str] = None) -> list[str]:
    """A melee's plan: the schedule's size and the calls in all (who sends them, who answers in
    process), then one line for each model (its tables, calls, tokens and, at prices given, cost), one
    for the built-in players, which send no request and cost nothing, and last the schedule's balance
    (``core.schedule.balance_words``), where given."""
    sent = sum(e.calls for e, m in zip(estimates, models) if m is not None)
    local = sum(e.calls for e, m in zip(estimates, models) if m is None)
    n_models = sum(m is not None for m in models)
    plural = lambda n, word: f"{n:,} {word}" + ("" if n == 1 else "s")  # noqa: E731
    lines = [f"melee of {len(names)} players at {plural(tables, 'table')} of {seats} seats, "
             f"{plural(runs, 'run')} a table: "
             f"{sent + local:,} seat calls, {sent:,} sent by {plural(n_models, 'model')}, {local:,} answered by "
             f"{plural(len(names) - n_models, 'built-in player')} (no request, no cost)"]
    for name, model, est in zip(names, models, estimates):
        if model is None:
            continue
        kept = f" ({est.kept:,} kept from the log resumed from)" if est.kept else ""
        line = (f"{name}: {est.calls:,} seat calls to send{kept} at {plural(est.sessions, 'table')}; prompts "
                f"~{est.prompt_tokens:,} tokens ({est.counted}); completions reserve up to "
                f"{est.completion_reserved:,} tokens, ~{est.completion_expected:,} expected")
        if prices and name in prices:
            line += "; " + cost_words(est, *prices[name])
        lines.append(line)
    priced = [(est, prices[name]) for name, model, est in zip(names, models, estimates)
              if prices and model is not None and name in prices]
    if len(priced) > 1:  # the models at their own prices, in all
        expected = sum(_costs(est, *at)[0] for est, at in priced)
        most = sum(_costs(est, *at)[1] for est, at in priced)
        lines.append(f"the {len(priced)} models priced, in all: cost ~{expected:.2f} expected, at most {most:.2f}")
    builtin = [(name, est) for name, model, est in zip(names, models, estimates) if model is None]
    if builtin:
        groups: dict[tuple[int, int], list[str]] = {}
        for name, est in builtin:
            groups.setdefault((est.calls, est.sessions), []).append(name)
        parts = []
        for (calls, at), who in sorted(groups.items(), reverse=True):
            named = ", ".join(who) if len(who) <= 3 else f"{len(who)} of them"
            parts.append(f"{named}: {calls:,} calls at {plural(at, 'table')}" + (" each" if len(who) > 1 else ""))
        lines.append("built-in players, answered in process: " + "; ".join(parts))
    if balance:
        lines.append(balance)
    return lines


def typical_reply(max_tokens: int) -> int:
    """The completion tokens a reply is expected to take before any answer says: a typical reply,
    cut at ``max_tokens`` when that is smaller."""
    return min(TYPICAL_REPLY_TOKENS, max_tokens) if max_tokens > 0 else TYPICAL_REPLY_TOKENS


def expected_from_answers(answers: int, completion_tokens: int, calls: int, reserved: int) -> str:
    """What the completions of ``calls`` come to at the mean the first ``answers`` replies used."""
    mean = completion_tokens / max(1, answers)
    return (f"the first {answers:,} replies used {mean:,.0f} completion tokens on average: ~{round(mean * calls):,} "
            f"expected for this run's {calls:,} seat calls ({reserved:,} reserved)")


def _typical_past(cell: CellConfig, session: Session, run: int) -> list[PastRun]:
    """History runs as a prompt may show them, with typical numbers (a third of the range)."""
    game = get_game(cell.game)
    past = []
    for r in history_window(run, cell.history_runs):
        _, hi = game.action_range(game.event_params(cell, session, r))
        past.append(game.typical_past_run(r, cell.seats, round(hi / 3, 2)))
    return past


def estimate_cell(cell: CellConfig, sessions: Sequence[Session], model: Optional[str], max_tokens: int,
                  kept: Optional[Callable[[int, int, int], bool]] = None,
                  sends: Optional[Callable[[int, int], bool]] = None) -> Estimate:
    """Every seat call of these sessions that goes out: less those ``kept(session, run, seat)`` says a
    resumed run takes from its log, and those of seats whose player sends no request
    (``sends(session, seat)`` False: a built-in player; None: every seat sends, the bound
    ``econarena-plan`` gives for one model in an arena)."""
    count, counted = token_counter(model)
    game = get_game(cell.game)
    tokens = calls = skipped = 0
    wave_of = {run: i for i, wave in enumerate(waves(cell.runs, cell.history_runs)) for run in wave}
    per_wave = [0] * len(set(wave_of.values()))  # calls to send in each wave (a resumed run's may be none)
    for session in sessions:
        for run in range(cell.runs):
            past = _typical_past(cell, session, run)
            for seat in range(1, cell.seats + 1):
                if sends is not None and not sends(session.index, seat):
                    continue
                if kept is not None and kept(session.index, run, seat):
                    skipped += 1
                    continue
                messages = game.seat_prompt(cell, session, run, seat, past)
                tokens += count(prompt_text(messages)) + MESSAGE_OVERHEAD * len(messages) + 3
                calls += 1
                per_wave[wave_of[run]] += 1
    sent = [n for n in per_wave if n]  # the sessions' calls of a wave go in one batch, or as few as fit
    return Estimate(len(sessions), calls, tokens, calls * max_tokens, counted, skipped, len(sent),
                    sum(math.ceil(n / MAX_LINES) for n in sent), calls * typical_reply(max_tokens))


# ---- econarena-plan: the same for evals named in the registry, without any call ----

def _registry_entries(roots: Sequence[Path]) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for root in roots:
        for path in sorted((root / "evals").glob("*.yaml")):
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if isinstance(loaded, dict):
                entries.update(loaded)
    return entries


def eval_args(name: str, roots: Optional[Sequence[Path]] = None) -> tuple[str, dict[str, Any], Path]:
    """(full name, args, data root) of an eval or its alias in the registry."""
    roots = list(roots or packaged_registries())
    entries = _registry_entries(roots)
    entry = entries.get(name)
    if isinstance(entry, dict) and "id" in entry:
        name, entry = entry["id"], entries.get(entry["id"])
    if not isinstance(entry, dict) or "args" not in entry:
        known = [n for n, e in entries.items() if isinstance(e, dict) and ("args" in e or "id" in e)]
        close = closest(name, known)
        raise KeyError(f"no eval {name!r}" + (f"; closest: {', '.join(close)}" if close else "")
                       + f" (registries: {', '.join(map(str, roots))})")
    return name, dict(entry["args"]), roots[0] / "data"


def estimate_eval(name: str, model: Optional[str], max_samples: Optional[int] = None,
                  max_tokens: Optional[int] = None) -> tuple[str, Estimate]:
    full, args, data = eval_args(name)
    cell = check_cell(game_cell(args))
    lines = (data / args["samples_jsonl"]).read_text(encoding="utf-8").splitlines()
    samples = [json.loads(line) for line in lines if line.strip()][: max_samples or None]
    sessions = [session_from_sample(s, cell) for s in samples]
    reserve = int(max_tokens if max_tokens is not None else args.get("max_tokens") or 0)
    return full, estimate_cell(cell, sessions, model, reserve)


DEFAULT_SEED = 20220722  # oaieval's default --seed, as the eval gets it (the schedule is drawn from it)


def request_model(fn_name: str) -> str:
    """What a completion fn's requests name, for counting their tokens: ``econarena/chat:NAME`` sends
    NAME; another fn (evals' own, or one of the user's registry) is counted as its name says."""
    return fn_name.split(":", 1)[1] if fn_name.startswith("econarena/chat:") else fn_name


def is_melee(name: str) -> bool:
    """True if the eval ``name`` is a melee cell (its roster is the completion fns)."""
    return melee_args(eval_args(name)[1]) is not None


def plan_melee(roster: Sequence[str], name: str, tables_per_player: Optional[int] = None, seed: Any = DEFAULT_SEED,
               max_tokens: Optional[int] = None, prices: Optional[Prices] = None,
               models_of: Optional[Mapping[str, Optional[str]]] = None) -> tuple[str, Estimate, list[str]]:
    """(full name, what the models send in all, the plan's lines) of a melee cell played by ``roster`` (the
    completion fns, as ``oaieval`` takes them): the schedule the eval will draw from the same roster,
    seats, tables per player and seed, and each model's calls on the tables it will sit at.
    ``models_of``: what each player's requests name, where a roster file says (None: built-in)."""
    full, args, data = eval_args(name)
    if tables_per_player is not None:
        args["tables_per_player"] = tables_per_player
    per_player = melee_args(args)
    if per_player is None:
        raise ValueError(f"{full} is no melee cell: one model plays it, not a roster")
    if len(roster) < 2:
        raise ValueError(f"a melee needs a roster of at least 2 completion fns, got {len(roster)}")
    check_roster_once(roster)
    cell = check_cell(game_cell(args))
    lines = (data / args["samples_jsonl"]).read_text(encoding="utf-8").splitlines()
    sessions = [session_from_sample(json.loads(line), cell) for line in lines if line.strip()]
    if not sessions:
        raise ValueError(f"{full}: no session in its samples file")
    drawn = seat_roster(list(roster), cell.seats, per_player, seed)
    tables = [Session(k, sessions[k % len(sessions)].drawn) for k in range(len(drawn.tables))]
    builtin = builtin_players()
    models = [models_of[n] if models_of is not None and n in models_of else None if n in builtin else request_model(n)
              for n in roster]
    reserve = int(max_tokens if max_tokens is not None else args.get("max_tokens") or 0)
    each = estimate_players(cell, tables, lambda k: drawn.tables[k], models, [reserve] * len(roster))
    sent = [e for e, m in zip(each, models) if m is not None]
    counted = {e.counted for e in sent}
    total = Estimate(len(tables), sum(e.calls for e in sent), sum(e.prompt_tokens for e in sent),
                     sum(e.completion_reserved for e in sent),
                     counted.pop() if len(counted) == 1 else "each model's own count",
                     completion_expected=sum(e.completion_expected for e in sent))
    return full, total, melee_lines(list(roster), models, each, len(drawn.tables), cell.seats, cell.runs, prices,
                                    balance_words(drawn, per_player))


def evals_of(name: str) -> list[str]:
    try:
        return members(name)
    except KeyError:
        return [name]


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="econarena-plan",
        description="Seat calls, tokens, time at a rate limit and cost of an eval or eval set, without any call.")
    parser.add_argument("model", help="the model the requests name (for counting tokens), e.g. gpt-4o; for a melee "
                        "cell, its roster as oaieval takes it: P1,P2,... (built-in players send nothing)")
    parser.add_argument("eval", help="an eval (econarena.beauty_L, econarena.beauty_L.test.v0) or an eval set (econarena)")
    parser.add_argument("--tables_per_player", type=int, default=None,
                        help="a melee's tables per player (default: the eval's), as --extra_eval_params gives it")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="as oaieval's --seed: a melee's schedule")
    parser.add_argument("--max_samples", type=int, default=None, help="as oaieval's --max_samples")
    parser.add_argument("--max_tokens", type=int, default=None, help="completion tokens reserved per call (default: the eval's)")
    parser.add_argument("--rpm", type=float, default=None, help="your requests-per-minute limit (0: none)")
    parser.add_argument("--tpm", type=float, default=None, help="your tokens-per-minute limit (0: none)")
    parser.add_argument("--price-in", type=float, default=None, help="price per million prompt tokens")
    parser.add_argument("--price-out", type=float, default=None, help="price per million completion tokens")
    parser.add_argument("--batch", action="store_true",
                        help="the calls go by the batch API (econarena/chat batch=yes): batches and waves")
    parser.add_argument("--batch-discount", type=float, default=None,
                        help="with --batch: the share of the price a batch call pays, e.g. 0.5 (no table is shipped)")
    args = parser.parse_args(argv)
    refused = outside_domain(args)
    if refused is None and args.batch_discount is not None and (not args.batch or args.batch_discount > 1):
        refused = (f"--batch-discount is the share of the price a batch call pays (0 to 1), got {args.batch_discount:g}"
                   if args.batch else "--batch-discount goes with --batch")
    if refused:
        print(f"econarena-plan: {refused}", file=sys.stderr)
        return 2
    roster = args.model.split(",")
    model = request_model(args.model)
    prices = {n: (args.price_in, args.price_out) for n in roster} if args.price_in is not None or \
        args.price_out is not None else None
    models_of: Optional[dict[str, Optional[str]]] = None
    if args.model.endswith((".yaml", ".yml")) and Path(args.model).is_file():  # a roster file: its own prices
        try:
            lab = load_roster(Path(args.model))
        except RosterError as exc:
            print(f"econarena-plan: {exc}", file=sys.stderr)
            return 2
        roster = [p.name for p in lab.players]
        models_of = {p.name: p.model for p in lab.players}
        prices = {**{n: (args.price_in, args.price_out) for n in roster},
                  **{p.name: p.prices for p in lab.players if p.prices is not None}}
    total: Optional[Estimate] = None
    try:
        names = evals_of(args.eval)
        for name in names:
            if is_melee(name):  # the roster at the schedule's tables, each model on its own
                if args.max_samples is not None:
                    raise ValueError("--max_samples: a melee's tables are its schedule's; plan the whole of it")
                full, est, lines = plan_melee(roster, name, args.tables_per_player, args.seed, args.max_tokens,
                                              prices, models_of)
                for line in lines:
                    print(f"{full}: {line}")
            else:
                if len(roster) > 1:
                    raise ValueError(f"{name} is played by one model; a roster of {len(roster)} plays melee cells")
                if args.tables_per_player is not None:
                    raise ValueError(f"--tables_per_player is a melee's; {name} is no melee cell")
                full, est = estimate_eval(name, model, args.max_samples, args.max_tokens)
                said = f"{full}: {est.line()}"  # how tokens are counted and expected: said on the first line only
                print(said.replace(f" (counted by {est.counted})", "").replace(f" ({est.expected_words()})", "")
                      if total is not None else said)
            total = est if total is None else total + est
    except (KeyError, OSError, ValueError) as exc:
        # a KeyError's str() is its message quoted: the message is what the user reads
        said = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"econarena-plan: {said}", file=sys.stderr)
        return 2
    assert total is not None
    if len(names) > 1:
        print(f"total: {total.line()}")
    if args.batch:
        print(total.batch_line())
    minutes = total.minutes_at(args.rpm, args.tpm)
    if minutes is not None and args.batch:  # a batch API has limits of its own (enqueued tokens), not these
        print("--rpm and --tpm are the synchronous limits: a batch run is bound by the batch API's own limits "
              "(enqueued tokens per model), not by them")
    elif minutes is not None:
        print(f"at {args.rpm or 0:g} requests/min and {args.tpm or 0:g} tokens/min (0: no limit): at least {minutes:.1f} min")
    if args.price_in is not None or args.price_out is not None:
        share = args.batch_discount if args.batch and args.batch_discount is not None else 1.0
        cost_in = total.prompt_tokens * (args.price_in or 0) / 1e6 * share
        cost_out = total.completion_reserved * (args.price_out or 0) / 1e6 * share
        expected_out = total.completion_expected * (args.price_out or 0) / 1e6 * share
        at = f" at {share:g} of the prices given (the batch discount)" if share != 1.0 else ""
        prompts = f"prompts ~{cost_in:.2f}" if args.price_in is not None else "prompts: no --price-in given"
        completions = (f"completions ~{expected_out:.2f} expected ({total.expected_words().split(',')[0]}), at most "
                       f"{cost_out:.2f} (if every reply used max_tokens)"
                       if args.price_out is not None else "completions: no --price-out given")
        in_all = (f"; in all ~{cost_in + expected_out:.2f} expected, at most {cost_in + cost_out:.2f}"
                  if args.price_in is not None and args.price_out is not None else "")
        print(f"cost: {prompts}; {completions}{in_all}{at}; in the currency of the prices given")
    return 0


if __name__ == "__main__":
    sys.exit(main())
