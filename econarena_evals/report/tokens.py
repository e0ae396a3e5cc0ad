"""Tokens used and what they cost, per player and column, beside what the plan estimated.

Counted from the log alone (``EvalLog.usage``: each seat call's ``sampling`` event, by the seat
tag's player) and priced at what the user passes, ``--price-in`` and ``--price-out`` per million
prompt and completion tokens, as ``econarena-plan`` takes them (no price table is shipped: prices go
stale). Reasoning tokens are a part of the completion tokens (the API bills them as such), shown
apart where the endpoint reported them, never priced twice. Built-in players send no request and
have no row. A resumed log holds the calls it kept from the log it resumed from (paid in the
first run) beside the ones it sent; the report uses one log per condition, the earlier one is
superseded, so each call is counted once, in the log whose figures it made. docs/report.md has the table.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..core.option_domains import outside_domain
from ..fns.identity import is_builtin
from ..log.evallog import USAGE_FIELDS
from .selection import Chosen

PRICE_OPTIONS = ("--price-in", "--price-out", "--batch-discount")


@dataclass(frozen=True)
class Prices:
    """Per million tokens, in whatever currency the user gave them; None: not given."""

    price_in: Optional[float] = None
    price_out: Optional[float] = None
    batch_discount: Optional[float] = None  # the share of the price a call a batch answered pays (None: all)

    @property
    def given(self) -> bool:
        return self.price_in is not None or self.price_out is not None

    def cost(self, prompt: Optional[int], completion: Optional[int], batch_prompt: int = 0,
             batch_completion: int = 0) -> Optional[float]:
        """prompt × price in + completion × price out, per million, the ``batch_`` part of the tokens
        (answered by a batch) at the batch discount; None without prices or tokens."""
        if not self.given or prompt is None or completion is None:
            return None
        share = 1.0 if self.batch_discount is None else self.batch_discount
        full = (prompt - batch_prompt) * (self.price_in or 0) + (completion - batch_completion) * (self.price_out or 0)
        batched = (batch_prompt * (self.price_in or 0) + batch_completion * (self.price_out or 0)) * share
        return round((full + batched) / 1e6, 12)

    def as_json(self) -> Optional[dict[str, Optional[float]]]:
        if not self.given:
            return None
        given = {"price_in": self.price_in, "price_out": self.price_out}
        return given if self.batch_discount is None else {**given, "batch_discount": self.batch_discount}


NO_PRICES = Prices()


def add_price_options(parser: argparse.ArgumentParser) -> None:
    """econarena-plan's two price flags, with its meaning."""
    parser.add_argument("--price-in", type=float, default=None, help="price per million prompt tokens")
    parser.add_argument("--price-out", type=float, default=None, help="price per million completion tokens")
    parser.add_argument("--batch-discount", type=float, default=None,
                        help="the share of the price a call a batch answered pays, e.g. 0.5 (batch mode)")


def price_problem(opts: argparse.Namespace) -> Optional[str]:
    """A price outside econarena-plan's domain (negative, nan, inf), said in one line, or None."""
    problem = outside_domain(opts, PRICE_OPTIONS)
    if problem:
        return problem
    share = getattr(opts, "batch_discount", None)
    if share is not None and share > 1:
        return f"--batch-discount is the share of the price a batch call pays (0 to 1), got {share:g}"
    return None


def prices_of(opts: argparse.Namespace) -> Prices:
    return Prices(opts.price_in, opts.price_out, getattr(opts, "batch_discount", None))


def token_rows(chosen: Sequence[Chosen], prices: Prices) -> list[dict[str, Any]]:
    """One row per player that sat in a column and sent requests (its evaluated player first, then
    its opponents; built-in players, which send none, are left out): seat calls, those whose reply
    reported usage, prompt, completion and reasoning tokens (None where no call reported them),
    their cost, and on the log's first row what the plan estimated for it (every seat's calls of
    the sessions it played; None: a log from before the plan was recorded)."""
    rows = []
    for c in chosen:
        log = c.log
        settings = {e.get("name"): e for e in log.player_settings}
        first = True
        for player in dict.fromkeys(c.players + log.players + list(log.usage)):
            counts = log.usage.get(player) or dict.fromkeys(USAGE_FIELDS, 0)
            entry = settings.get(player)
            if (is_builtin(entry.get("class")) if entry else not counts["reported"]):
                continue  # sent no request: a built-in player (an older log's opponents name no class)
            told = counts["reported"] > 0
            row: dict[str, Any] = {
                "player": log.labels.get(player, player), "column": c.column, "log": str(log.path),
                "evaluated": player == c.players[0], "seat_calls": counts["calls"],
                "reported_calls": counts["reported"], "batch_calls": counts.get("batch_calls", 0),
                "batch_prompt_tokens": counts.get("batch_prompt_tokens", 0),
                "batch_completion_tokens": counts.get("batch_completion_tokens", 0),
                **{k: counts[k] if told else None for k in ("prompt_tokens", "completion_tokens")},
                "reasoning_tokens": counts["reasoning_tokens"] if counts["reasoning"] else None,
            }
            row["cost"] = prices.cost(row["prompt_tokens"], row["completion_tokens"], row["batch_prompt_tokens"],
                                      row["batch_completion_tokens"])
            # a resumed log holds calls it kept from the log it resumed from: what this run sent is the rest
            kept = log.kept_usage.get(player) or dict.fromkeys(USAGE_FIELDS, 0)
            sent = {k: counts[k] - kept[k] for k in USAGE_FIELDS}
            row["kept_calls"] = kept["calls"]
            row["sent"] = {
                "seat_calls": sent["calls"], "reported_calls": sent["reported"],
                **{k: sent[k] if sent["reported"] else None for k in ("prompt_tokens", "completion_tokens")},
                "reasoning_tokens": sent["reasoning_tokens"] if sent["reasoning"] else None,
                "cost": prices.cost(sent["prompt_tokens"] if sent["reported"] else None,
                                    sent["completion_tokens"] if sent["reported"] else None,
                                    sent["batch_prompt_tokens"], sent["batch_completion_tokens"]),
            }
            plan, first = (log.plan if first else None), False
            row["plan"] = ({k: plan.get(k) for k in ("calls", "kept", "prompt_tokens", "completion_reserved",
                                                      "counted")} if plan else None)
            # a run in batch mode planned its calls for batches: at the batch discount
            planned = (plan.get("prompt_tokens"), plan.get("completion_reserved")) if plan else None
            row["plan_cost"] = prices.cost(*planned, *(planned if log.batches else (0, 0))) if planned else None
            rows.append(row)
    return rows


def totals(rows: Sequence[dict[str, Any]], prices: Prices) -> dict[str, Any]:
    """The sums over every row (None for tokens no row reported)."""
    out: dict[str, Any] = {key: sum(r[key] for r in rows) for key in (
        "seat_calls", "reported_calls", "batch_calls", "batch_prompt_tokens", "batch_completion_tokens")}
    for key in ("prompt_tokens", "completion_tokens", "reasoning_tokens"):
        known = [r[key] for r in rows if r[key] is not None]
        out[key] = sum(known) if known else None
    out["cost"] = prices.cost(out["prompt_tokens"], out["completion_tokens"], out["batch_prompt_tokens"],
                              out["batch_completion_tokens"])
    plans = [r for r in rows if r["plan"]]
    costs = [r["plan_cost"] for r in plans if r["plan_cost"] is not None]  # each at its own log's discount
    out["plan_cost"] = round(math.fsum(costs), 12) if costs and prices.given else None
    return out


def tokens_result(chosen: Sequence[Chosen], prices: Prices) -> dict[str, Any]:
    """report.json's ``tokens``: the prices given, the rows and their totals."""
    rows = token_rows(chosen, prices)
    return {"prices": prices.as_json(), "rows": rows, "total": totals(rows, prices)}


def count(x: Optional[int]) -> str:
    return "-" if x is None else f"{x:,}"


def money(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:,.4f}"


def table_cells(row: dict[str, Any], prices: Prices) -> list[str]:
    """A row as the tables show it (``TABLE_HEAD``), the cost columns only when prices were given."""
    plan = row["plan"] or {}
    cells = [count(row["seat_calls"]), count(row["reported_calls"]), count(row["prompt_tokens"]),
             count(row["completion_tokens"]), count(row["reasoning_tokens"])]
    cells += [money(row["cost"])] if prices.given else []
    cells += [count(plan.get("calls")), count(plan.get("prompt_tokens")), count(plan.get("completion_reserved"))]
    cells += [money(row["plan_cost"])] if prices.given else []
    return cells


SENT_BY_THIS_RUN = "  sent by this run"


def shown_rows(row: dict[str, Any], prices: Prices) -> list[tuple[str, str, list[str]]]:
    """A row as the tables show it: (player, column, cells). A resumed log's row counts every call
    the log holds, the kept ones included, and a second line, ``sent by this run``, the calls the run
    sent itself, beside its plan (which counted only those)."""
    cells = table_cells(row, prices)
    if not row.get("kept_calls"):
        return [(row["player"], row["column"], cells)]
    plan_at = 5 + prices.given
    sent = table_cells({**row["sent"], "plan": row["plan"], "plan_cost": row["plan_cost"]}, prices)
    return [(row["player"], row["column"], cells[:plan_at] + [""] * (len(cells) - plan_at)),
            (SENT_BY_THIS_RUN, "", sent)]


def total_cells(total: dict[str, Any], prices: Prices) -> list[str]:
    """The totals row's cells: what the logs used and, with prices, the plans' cost at most."""
    cells = table_cells({**total, "plan": None}, prices)[: 5 + prices.given] + ["", "", ""]
    return cells + ([money(total["plan_cost"])] if prices.given else [])


def table_head(prices: Prices) -> list[str]:
    head = ["seat calls", "with usage", "prompt tokens", "completion tokens", "of which reasoning"]
    head += ["cost"] if prices.given else []
    head += ["plan: calls", "plan: prompt tokens", "plan: completion reserved"]
    head += ["plan: cost at most"] if prices.given else []
    return head


NOTE = ("Tokens as each seat call's reply reported them ('-': none reported); built-in players send no request "
        "and have no row; "
        "reasoning tokens are part of the completion tokens. The plan is the estimate the run printed before its "
        "first call, for every seat of the sessions it played ('-': a log from before it was recorded); its "
        "completion figure is what the requests reserved (max_tokens), an upper bound. A resumed log's row counts "
        "every seat call the log holds, those kept from the log it resumed from (paid by that run) included; the "
        "line under it, 'sent by this run', counts the calls the run sent itself, which is what its plan counted.")


def cost_note(prices: Prices) -> str:
    if not prices.given:
        return "No prices given: --price-in and --price-out (per million tokens) add the cost."
    said = (f"Cost at {prices.price_in or 0:g} per million prompt tokens and {prices.price_out or 0:g} per million "
            "completion tokens, in the currency of the prices given")
    if prices.batch_discount is not None:
        said += f"; the calls a batch answered at {prices.batch_discount:g} of that (--batch-discount)"
    return said + "."
