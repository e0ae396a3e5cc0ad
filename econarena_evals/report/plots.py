"""The report's plots: drawing what ``compute`` measured, and writing the PNG files.

One plot of convergence to equilibrium and one of first-run choices per cell, each labelled by the
game (``GameReport.LABELS``), with the human reference and published series of other benchmarks in greys.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from ..games import GameReport, report_of
from ..games.protocol import Reference

HUMAN_COLOUR = "#7f007f"  # the human reference line; players take matplotlib's colour cycle
# Published series of other benchmarks: greys, so they never pass for a player here, each with its
# own dash pattern and marker so that four of them can be told apart, and labelled on the plot.
REFERENCE_GREYS = ("#303030", "#606060", "#8a8a8a", "#b0b0b0")
REFERENCE_DASHES = ((0, (1, 1.5)), (0, (5, 2)), (0, (6, 2, 1, 2)), (0, (2, 3)))
REFERENCE_MARKERS = ("^", "s", "D", "v")


def _reference_style(i: int) -> dict[str, Any]:
    return {"color": REFERENCE_GREYS[i % 4], "linestyle": REFERENCE_DASHES[i % 4], "marker": REFERENCE_MARKERS[i % 4],
            "linewidth": 1.5, "markersize": 5}


def _spread(ys: Sequence[float], gap: float) -> list[float]:
    """Label heights near ``ys`` (same order), at least ``gap`` apart, so that labels do not overlap."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for prev, i in zip(order, order[1:]):
        out[i] = max(out[i], out[prev] + gap)
    return out


def _short(label_text: str) -> str:
    """A reference's name for a label on the plot: the model, without the setting."""
    return label_text.split(" (")[0].split(":")[0]


def plot_file(kind: str, cell: str) -> str:
    """A plot's file name in ``--out``: the cell comes from the log, so only plain characters of
    it are used (a "/" or ".." would write outside the report's directory)."""
    return f"{kind}_{re.sub(r'[^A-Za-z0-9_.-]', '_', cell)}.png"


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is in the report extra
        raise SystemExit("econarena-report needs matplotlib: pip install 'econarena-evals[report]'") from exc
    return plt


def preload() -> None:
    """Import matplotlib now: forked workers then start with it, instead of each importing it."""
    _plt()


def draw_convergence(cell: str, game_name: str, *args: Any) -> dict[str, Any]:
    """``plot_convergence`` of the game named ``game_name``: what a worker process is given (a game is a module)."""
    return plot_convergence(cell, report_of(game_name), *args)


def draw_first_run(cell: str, game_name: str, *args: Any) -> dict[str, Any]:
    """``plot_first_run`` of the game named ``game_name``."""
    return plot_first_run(cell, report_of(game_name), *args)


def plot_convergence(cell: str, game: GameReport, series: dict[str, list[float]], path: Path,
                     references: Sequence[Reference] = (), with_history: bool = False,
                     note: str = "") -> dict[str, Any]:
    """One line per player (mean d by run); where the cell shows history, the game's human series
    (people who saw each period's result) and published series of other benchmarks, each labelled.

    A cell without history gets no learning curve of people or models who saw feedback: its runs
    are ten one-shot games, and a falling reference next to them would be read as a target."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.4), dpi=100)
    longest = max((len(ys) for ys in series.values()), default=0)
    for player, ys in sorted(series.items()):
        if ys:  # a player whose every session errored has no line
            ax.plot(range(1, len(ys) + 1), ys, marker="o", linewidth=2, label=player)
    lines_refs = [r for r in references if r.kind == "line"] if with_history else []
    for i, ref in enumerate(lines_refs):
        ax.plot(ref.xs, ref.ys, label=ref.label, **_reference_style(i))
    if with_history and game.LABELS.human_convergence is not None:
        human_label, human_series = game.LABELS.human_convergence
        ax.plot(range(1, len(human_series) + 1), human_series, linestyle="--",
                marker="s", color=HUMAN_COLOUR, linewidth=2, label=human_label)
    elif game.LABELS.human_convergence is not None:
        ax.text(1.01, 0.0, "No history in this cell,\nso no learning curve of\npeople or models who\nsaw "
                "results is shown.", transform=ax.transAxes, ha="left", va="bottom", fontsize=8, color="grey")
    if lines_refs:  # each published model named at the end of its line, the names kept apart
        top = max([max(r.ys) for r in lines_refs] + [max(ys) for ys in series.values() if ys] + [0.1])
        heights = _spread([r.ys[-1] for r in lines_refs], 0.045 * top)
        for i, (ref, y) in enumerate(zip(lines_refs, heights)):
            ax.annotate(_short(ref.label), (ref.xs[-1], ref.ys[-1]), xytext=(ref.xs[-1] + 0.25, y),
                        textcoords="data", fontsize=7, color=REFERENCE_GREYS[i % 4], va="center",
                        arrowprops={"arrowstyle": "-", "color": REFERENCE_GREYS[i % 4], "linewidth": 0.6})
    ax.set_xlabel("run")
    ax.set_ylabel(game.LABELS.distance)
    ax.set_title(f"Convergence to equilibrium, {cell}" + (f" ({note})" if note else ""))
    ax.set_ylim(-0.02, None)  # a player at equilibrium draws its line on d = 0: keep it in view
    if longest:
        ax.set_xlim(0.5, max([longest] + [r.xs[-1] for r in lines_refs]) + (2.2 if lines_refs else 0.5))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    plotted = {"lines": [line.get_label() for line in ax.get_lines()], "x_range": [float(x) for x in ax.get_xlim()]}
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return plotted


def ecdf(xs: Sequence[float]) -> tuple[list[float], list[float]]:
    """The empirical distribution function of ``xs`` as step coordinates."""
    xs = sorted(xs)
    n = len(xs)
    return [0.0] + xs, [0.0] + [(i + 1) / n for i in range(n)]


def plot_first_run(cell: str, game: GameReport, shares: dict[str, list[float]], path: Path,
                   human: Sequence[float] = (), references: Sequence[Reference] = (),
                   note: str = "") -> dict[str, Any]:
    """Cumulative distribution of first-run choices, one line per player, and the human one
    (``human``: draws of the game's human model, as shares).

    A CDF rather than a histogram: equilibrium play is a point mass that would flatten every other
    histogram, while CDFs of point masses, uniforms and mixtures read side by side.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.4), dpi=100)
    labels_of = game.LABELS
    right = labels_of.first_run_max  # the axis covers every share drawn (a random bid can be 3 v and more)
    for player, xs in sorted(shares.items()):
        if xs:
            ax.plot(*ecdf(xs), linewidth=2, drawstyle="steps-post", label=f"{player} (n={len(xs)})")
            right = max(right, max(xs))
    if human:
        ax.plot(*ecdf(human), linewidth=2, linestyle="--", color=HUMAN_COLOUR,
                drawstyle="steps-post", label=labels_of.human)
        right = max(right, max(human))
    for i, ref in enumerate(r for r in references if r.kind in ("cdf", "vline")):
        style = _reference_style(i)
        if ref.kind == "cdf":
            ax.plot(ref.xs, ref.ys, label=ref.label, **style)
            # the name where the curve passes its own height (one per model), so that four names do not collide
            level = 0.2 + 0.17 * (i % 4)
            k = next((j for j, y in enumerate(ref.ys) if y >= level), len(ref.ys) - 1)
            ax.annotate(_short(ref.label), (ref.xs[k], ref.ys[k]), xytext=(7, -3), textcoords="offset points",
                        fontsize=7, color=style["color"], va="top",
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
            right = max(right, max(ref.xs))
        else:
            ax.axvline(ref.xs[0], label=ref.label, **{k: v for k, v in style.items() if not k.startswith("marker")})
            ax.text(ref.xs[0], 1.0 - 0.06 * i, " " + _short(ref.label), color=style["color"], fontsize=7,
                    va="top")
            right = max(right, ref.xs[0])
    if labels_of.human_marker is not None:
        x, text = labels_of.human_marker
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
        ax.text(x, 0.02, " " + text, color="grey", fontsize=8)
    ax.set_xlabel(labels_of.first_run)
    ax.set_ylabel("share of first-run choices at or below x")
    ax.set_title(f"First-run choices, {cell}" + (f" ({note})" if note else ""))
    ax.set_xlim(-0.01 * right, right * 1.02)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    plotted = {"lines": [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")],
               "x_range": [float(x) for x in ax.get_xlim()]}
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return plotted
