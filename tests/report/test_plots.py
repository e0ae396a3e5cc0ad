"""The report's plots as a reader sees them: drawn for the page's width, every label readable and
apart from every other, the x axis ending at the cell's last run, and each published series saying
what setting it comes from.

The figures are the ones ``econarena-report`` draws (``plots.convergence_figure``,
``plots.first_run_figure``), from what ``compute`` measures on the fixture logs (two built-in
players in five cells, the default published series), and from a crowded cell made here (the most
players a plot draws, with long names). Their layout is read from matplotlib's renderer: the
window extent of every text drawn (titles, axis labels, tick labels, texts on the axes, the legend).
"""
from __future__ import annotations

import itertools
import math

import pytest
from matplotlib.text import Text
from report_logs import OLDLOGS

from econarena_evals.games import report_of
from econarena_evals.report.compute import DEFAULT_REFERENCES, PLOT_SERIES_MAX, cell_figures, rows_of
from econarena_evals.report.plots import DPI, convergence_figure, first_run_figure
from econarena_evals.report.selection import select

PAGE_WIDTH = 1440  # pixels: report.html shows a plot a row, up to this wide (static/report.css)


@pytest.fixture(autouse=True)
def _closed():
    """Every figure a test made is closed after it (pyplot keeps them otherwise)."""
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture(scope="module")
def figures():
    """What each cell's plots show, as ``compute`` measures it on the fixture logs."""
    chosen, _ = select([OLDLOGS])
    rows = [r for c in chosen for r in rows_of(c)]
    return cell_figures([c.log for c in chosen], rows, DEFAULT_REFERENCES)


def drawn(cell_figure):
    """Both plots of one cell, as ``build`` draws them: (name, figure, what report.json says of it)."""
    f = cell_figure
    conv, conv_said = convergence_figure(f.cell, f.game, f.series, f.line_refs, f.with_history, f.note)
    first, first_said = first_run_figure(f.cell, f.game, f.shares, f.human, f.run_refs, f.note)
    return [(f.convergence, conv, conv_said), (f.first_run, first, first_said)]


def boxes(fig):
    """(what, text, window extent) of every text the figure draws, tick labels only where a tick is drawn,
    and the legend's frame; and the axes' own extent."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    [ax] = fig.axes
    out = []
    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        for tick in axis.get_major_ticks():
            label = tick.label1
            if label.get_visible() and label.get_text() and min(lo, hi) - 1e-9 <= tick.get_loc() <= max(lo, hi) + 1e-9:
                out.append(("tick", label.get_text(), label.get_window_extent(renderer)))
    for what, text in (("title", ax.title), ("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)):
        if text.get_text():
            out.append((what, text.get_text(), text.get_window_extent(renderer)))
    out += [("text", t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_text()]
    for legend in fig.legends + ([ax.get_legend()] if ax.get_legend() else []):
        out.append(("legend", "", legend.get_window_extent(renderer)))
        out += [("legend entry", t.get_text(), t.get_window_extent(renderer)) for t in legend.get_texts()]
    # nothing drawn with text is left out of the boxes
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    counted = {id(t) for t in ax.texts} | {id(ax.title), id(ax.xaxis.label), id(ax.yaxis.label)}
    counted |= {id(t) for legend in fig.legends for t in legend.get_texts()}
    counted |= {id(t.label1) for axis in (ax.xaxis, ax.yaxis) for t in axis.get_major_ticks()}
    assert all(id(t) in counted or t.get_text() == "" for t in texts), [t.get_text() for t in texts if id(t) not in counted]
    return out, ax.get_window_extent(renderer)


def overlap(a, b) -> float:
    """The area two boxes share, in square pixels."""
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


def assert_readable(name, fig):
    found, axes = boxes(fig)
    width, height = fig.get_size_inches() * fig.dpi
    assert width == PAGE_WIDTH and fig.dpi == DPI, name
    for what, text, box in found:  # inside the figure, none cut at its edge
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width + 0.5 and box.y1 <= height + 0.5, (name, what, text, box)
        if what == "text":  # a text on the plot stays inside the axes
            assert axes.x0 <= box.x0 and box.x1 <= axes.x1 and axes.y0 <= box.y0 and box.y1 <= axes.y1, (name, text)
        if what == "legend":  # the legend hides no line: it is outside the axes
            assert overlap(box, axes) == 0, name
        if what in ("tick", "legend entry", "xlabel", "ylabel"):  # readable at the page's width: 10 pt or more
            assert box.height >= 10 / 72 * DPI, (name, what, text, box.height)
    # no two labels share a pixel; a legend's entries only with their own legend frame
    for (w1, t1, b1), (w2, t2, b2) in itertools.combinations(found, 2):
        if {w1, w2} == {"legend", "legend entry"}:
            continue
        assert overlap(b1, b2) == 0, (name, (w1, t1), (w2, t2))
    return found


def test_no_label_of_any_plot_overlaps_another_or_leaves_the_figure(figures):
    names = []
    for f in figures:
        for name, fig, said in drawn(f):
            found = assert_readable(name, fig)
            # every line the report names has its legend entry, and its entry says it whole
            entries = {text.replace("\n", " ") for what, text, _ in found if what == "legend entry"}
            assert said["lines"] and set(said["lines"]) <= entries, name
            names.append(name)
    assert len(names) == 10  # five cells, two plots each


def test_a_crowded_plot_keeps_its_labels_apart():
    """The most players a plot draws, each named with an endpoint and a long column, beside every
    published series and the human one: the legend grows, no label overlaps."""
    long = [f"econarena/chat:some-provider/model-{i:02d}-instruct-2026 @ 127.0.0.1:80{i:02d}, beauty_hist "
            "(max_tokens=128, temperature=0)" for i in range(PLOT_SERIES_MAX)]
    beauty = report_of("beauty")
    series = {p: [0.5 / (1 + i + k) for k in range(10)] for i, p in enumerate(long)}
    shares = {p: [((i + 1) * (k + 1)) % 97 / 97 for k in range(10)] for i, p in enumerate(long)}
    conv, said = convergence_figure("beauty_hist", beauty, series, beauty.references("convergence", DEFAULT_REFERENCES),
                                    True, f"{PLOT_SERIES_MAX} of 50 players, those with the highest EAS")
    assert len(said["lines"]) == PLOT_SERIES_MAX + 4 + 1
    assert_readable("crowded convergence", conv)
    first, _ = first_run_figure("beauty_hist", beauty, shares, [0.3, 0.5, 0.7],
                                beauty.references("first_run", DEFAULT_REFERENCES))
    assert_readable("crowded first run", first)
    auction = report_of("auction")
    marks = auction.references("first_run", DEFAULT_REFERENCES)
    assert len(marks) == 3 and all(m.kind == "vline" for m in marks)
    bids, _ = first_run_figure("auction_L", auction, {p: [0.8, 1.0, 1.3] for p in long}, [1.0, 1.1], marks)
    assert_readable("crowded auction first run", bids)


def test_the_x_axis_ends_at_the_last_run(figures):
    """Ten runs: the axis ends half a run past the tenth at most, its last tick the tenth; a partial
    log of seven runs ends at seven (the published series, twenty rounds long, are cut there)."""
    f = next(f for f in figures if f.cell == "beauty_hist")
    assert f.line_refs and max(len(ys) for ys in f.series.values()) == 10
    fig, said = convergence_figure(f.cell, f.game, f.series, f.line_refs, f.with_history)
    [ax] = fig.axes
    ticks = [t for t in ax.get_xticks() if said["x_range"][0] <= t <= said["x_range"][1]]
    assert 10 <= said["x_range"][1] < 10.5 and max(ticks) == 10
    seven = {p: ys[:7] for p, ys in f.series.items()}
    fig, said = convergence_figure(f.cell, f.game, seven, f.line_refs, f.with_history)
    assert 7 <= said["x_range"][1] < 7.5 and max(t for t in fig.axes[0].get_xticks() if t <= said["x_range"][1]) == 7


def test_each_published_series_says_its_players_and_range(figures):
    published = [label for f in figures for _, _, said in drawn(f) for label in said["lines"] if "GAMA-Bench" in label]
    assert len(published) >= 4 + 4 + 3  # beauty_hist's two plots, an auction's marks
    for label in published:
        assert "10 players" in label and ("[0, 100]" in label or "values 0-200" in label), label


def test_the_legend_follows_the_order_it_is_given():
    """Players in the report's order (``compute`` gives them so), not by name."""
    beauty = report_of("beauty")
    fig, said = convergence_figure("beauty_L", beauty, {"zeta": [0.1, 0.2], "alpha": [0.3, 0.1]})
    assert said["lines"][:2] == ["zeta", "alpha"]
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == ["zeta", "alpha"]
    assert math.isclose(said["x_range"][1], 2.4)
