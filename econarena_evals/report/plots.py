"""The report's plots: drawing what ``compute`` measured, and writing the PNG files.

One plot of convergence to equilibrium and one of first-run choices per cell, each labelled by the
game (``GameReport.LABELS``), with the human reference and published series of other benchmarks in greys.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any, Sequence

from ..games import GameReport, report_of
from ..games.protocol import Reference

HUMAN_COLOUR = "#7f007f"  # the human reference line; players take matplotlib's colour cycle
# Published series of other benchmarks: greys, so they never pass for a player here, each with its
# own dash pattern and marker so that four of them can be told apart in the legend.
REFERENCE_GREYS = ("#303030", "#606060", "#8a8a8a", "#b0b0b0")
REFERENCE_DASHES = ((0, (1, 1.5)), (0, (5, 2)), (0, (6, 2, 1, 2)), (0, (2, 3)))
REFERENCE_MARKERS = ("^", "s", "D", "v")


# The plots are drawn for report.html's width, one a row (static/report.css): 12 inches at 120 dpi are
# 1440 pixels, shown at about their own size, their fonts as large as the page's. Every label is in
# the legend under the plot (two columns, an entry wrapped after LEGEND_WRAP characters), so no
# label can overlap another or a line; the figure grows by the legend's height.
DPI = 120
WIDTH = 12.0
AXES_HEIGHT = 4.8  # inches for the plot, its title and its axes' labels
STYLE = {"font.size": 12, "axes.titlesize": 15, "axes.labelsize": 13, "xtick.labelsize": 12,
         "ytick.labelsize": 12, "legend.fontsize": 11.5}
LEGEND_COLUMNS = 2
LEGEND_WRAP = 56


def _reference_style(i: int) -> dict[str, Any]:
    return {"color": REFERENCE_GREYS[i % 4], "linestyle": REFERENCE_DASHES[i % 4], "marker": REFERENCE_MARKERS[i % 4],
            "linewidth": 1.8, "markersize": 6}


def _figure(plt: Any) -> tuple[Any, Any]:
    """A figure and its axes, laid out by matplotlib (``constrained``: the legend outside, nothing cut)."""
    return plt.subplots(figsize=(WIDTH, AXES_HEIGHT), dpi=DPI, layout="constrained")


def _legend(fig: Any, ax: Any) -> None:
    """Every labelled line in a legend under the plot; the figure made taller by the legend's height."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    wrapped = [textwrap.fill(text, LEGEND_WRAP, break_long_words=False, break_on_hyphens=False) or text
               for text in labels]
    per_column = -(-len(wrapped) // LEGEND_COLUMNS)
    columns = [wrapped[i:i + per_column] for i in range(0, len(wrapped), per_column)]
    lines = max(sum(text.count("\n") + 1 for text in column) for column in columns)
    entries = max(len(column) for column in columns)
    size = STYLE["legend.fontsize"] / 72  # inches
    fig.set_size_inches(WIDTH, AXES_HEIGHT + lines * 1.25 * size + entries * 0.55 * size + 0.35)
    fig.legend(handles, wrapped, loc="outside lower center", ncols=min(LEGEND_COLUMNS, len(wrapped)))


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
    """``convergence_figure``, written to ``path``."""
    return _written(convergence_figure(cell, game, series, references, with_history, note), path)


def _written(drawn: tuple[Any, dict[str, Any]], path: Path) -> dict[str, Any]:
    """A figure written to ``path`` and closed; what it shows.

    The layout is made once, here, and the figure drawn once: given a layout engine, ``savefig`` draws
    the figure a first time to make the layout and then again into the file (the same pixels either way).
    The PNG is RGB: the figure is opaque, and an alpha channel of 255 everywhere only made the file
    (and report.html, which embeds it) larger and slower to write."""
    fig, plotted = drawn
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
        fig.set_layout_engine("none")
    fig.canvas.draw()
    import matplotlib
    from PIL import Image, PngImagePlugin

    width, height = fig.canvas.get_width_height(physical=True)
    image = Image.frombuffer("RGBA", (width, height), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).convert("RGB")
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", f"Matplotlib version{matplotlib.__version__}, https://matplotlib.org/")
    image.save(path, format="png", pnginfo=info, dpi=(fig.dpi, fig.dpi))
    _plt().close(fig)
    return plotted


def convergence_figure(cell: str, game: GameReport, series: dict[str, list[float]],
                       references: Sequence[Reference] = (), with_history: bool = False,
                       note: str = "") -> tuple[Any, dict[str, Any]]:
    """One line per player (mean d by run), in ``series``' order; where the cell shows history, the
    game's human series (people who saw each period's result) and published series of other
    benchmarks, each labelled in the legend as the game labels it (its setting said). The x axis
    ends at the cell's last run.

    A cell without history gets no learning curve of people or models who saw feedback: its runs
    are ten one-shot games, and a falling reference next to them would be read as a target."""
    plt = _plt()
    with plt.rc_context(STYLE):
        fig, ax = _figure(plt)
        longest = max((len(ys) for ys in series.values()), default=0)
        for player, ys in series.items():
            if ys:  # a player whose every session errored has no line
                ax.plot(range(1, len(ys) + 1), ys, marker="o", linewidth=2.2, label=player)
        lines_refs = [r for r in references if r.kind == "line"] if with_history else []
        for i, ref in enumerate(lines_refs):
            ax.plot(ref.xs, ref.ys, label=ref.label, **_reference_style(i))
        title = f"Convergence to equilibrium, {cell}" + (f" ({note})" if note else "")
        human_runs = 0
        if with_history and game.LABELS.human_convergence is not None:
            human_label, human_series = game.LABELS.human_convergence
            human_runs = len(human_series)
            ax.plot(range(1, human_runs + 1), human_series, linestyle="--",
                    marker="s", color=HUMAN_COLOUR, linewidth=2.2, label=human_label)
        elif game.LABELS.human_convergence is not None:
            title += "\nno history in this cell, so no learning curve of people or models who saw results"
        ax.set_xlabel("run")
        ax.set_ylabel(game.LABELS.distance)
        ax.set_title(title)
        ax.set_ylim(-0.02, None)  # a player at equilibrium draws its line on d = 0: keep it in view
        # the last run: the players' (a reference longer than the cell's runs is cut there)
        last = longest or max([len(r.xs) for r in lines_refs] + [human_runs, 1])
        ax.set_xlim(0.6, last + 0.4)
        if last <= 20:
            ax.set_xticks(range(1, last + 1))
        ax.grid(alpha=0.3)
        _legend(fig, ax)
    plotted = {"lines": [line.get_label() for line in ax.get_lines()], "x_range": [float(x) for x in ax.get_xlim()]}
    return fig, plotted


def ecdf(xs: Sequence[float]) -> tuple[list[float], list[float]]:
    """The empirical distribution function of ``xs`` as step coordinates."""
    xs = sorted(xs)
    n = len(xs)
    return [0.0] + xs, [0.0] + [(i + 1) / n for i in range(n)]


def plot_first_run(cell: str, game: GameReport, shares: dict[str, list[float]], path: Path,
                   human: Sequence[float] = (), references: Sequence[Reference] = (),
                   note: str = "") -> dict[str, Any]:
    """``first_run_figure``, written to ``path``."""
    return _written(first_run_figure(cell, game, shares, human, references, note), path)


def first_run_figure(cell: str, game: GameReport, shares: dict[str, list[float]],
                     human: Sequence[float] = (), references: Sequence[Reference] = (),
                     note: str = "") -> tuple[Any, dict[str, Any]]:
    """Cumulative distribution of first-run choices, one line per player in ``shares``' order, and the
    human one (``human``: draws of the game's human model, as shares); published figures of other
    benchmarks in greys, each labelled in the legend as the game labels it (its setting said).

    A CDF rather than a histogram: equilibrium play is a point mass that would flatten every other
    histogram, while CDFs of point masses, uniforms and mixtures read side by side.
    """
    plt = _plt()
    with plt.rc_context(STYLE):
        fig, ax = _figure(plt)
        labels_of = game.LABELS
        right = labels_of.first_run_max  # the axis covers every share drawn (a random bid can be 3 v and more)
        for player, xs in shares.items():
            if xs:
                ax.plot(*ecdf(xs), linewidth=2.2, drawstyle="steps-post", label=f"{player} (n={len(xs)})")
                right = max(right, max(xs))
        if human:
            ax.plot(*ecdf(human), linewidth=2.2, linestyle="--", color=HUMAN_COLOUR,
                    drawstyle="steps-post", label=labels_of.human)
            right = max(right, max(human))
        for i, ref in enumerate(r for r in references if r.kind in ("cdf", "vline")):
            style = _reference_style(i)
            if ref.kind == "cdf":
                ax.plot(ref.xs, ref.ys, label=ref.label, **style)
                right = max(right, max(ref.xs))
            else:
                ax.axvline(ref.xs[0], label=ref.label,
                           **{k: v for k, v in style.items() if not k.startswith("marker")})
                right = max(right, ref.xs[0])
        if labels_of.human_marker is not None:
            x, text = labels_of.human_marker
            ax.axvline(x, color="grey", linestyle=":", linewidth=1.2)
            ax.text(x, 0.02, " " + text, color="grey", fontsize=STYLE["font.size"],
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
        ax.set_xlabel(labels_of.first_run)
        ax.set_ylabel("share of first-run choices at or below x")
        ax.set_title(f"First-run choices, {cell}" + (f" ({note})" if note else ""))
        ax.set_xlim(-0.01 * right, right * 1.02)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        _legend(fig, ax)
    plotted = {"lines": [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")],
               "x_range": [float(x) for x in ax.get_xlim()]}
    return fig, plotted
