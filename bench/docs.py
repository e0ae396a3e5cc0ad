"""Writes the measured figures and the test counts into the docs, so that no figure is typed twice.

    python bench/docs.py            # say which generated blocks differ from what would be written
    python bench/docs.py --write    # write them

The figures live in ``bench/figures.json``, each table or figure with the command that measured it
and when and where it was measured. A bench script that measures one stores it there
(``record_table``; ``python bench/batch.py --record`` does), or a person who measured by hand
edits the file; then ``--write`` puts it into the docs. The test counts are not stored: they are
pytest's own collection of ``tests/``, all of it and the fast lane (``-m "not e2e"``), counted in
this process.

A generated block in README.md or docs/*.md is the text between ``<!-- bench:NAME -->`` and
``<!-- /bench -->``. NAME is a table of ``figures.json`` (written as a Markdown table, the markers
on lines of their own, indented as the opening marker is) or one of the sentences in ``TEXTS``
(written inline). ``tests/test_docs_figures.py`` checks that every block reads as this script
would write it.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "bench" / "figures.json"
BLOCK = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->(?P<body>.*?)<!-- /bench -->", re.S)


def pages(root: Path = ROOT) -> List[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def load(path: Path = FIGURES) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def collected_counts(root: Path = ROOT) -> Dict[str, int]:
    """The tests pytest collects in ``root/tests``: ``tests``, all of them; ``fast_tests``, those
    without the e2e marker (what ``python -m pytest -m "not e2e"`` runs). Collected in this process."""
    import pytest

    if str(root) not in sys.path:  # the checkout's package, as `python -m pytest` from its root imports it
        sys.path.insert(0, str(root))

    class Count:
        items: list = []

        def pytest_collection_finish(self, session) -> None:
            Count.items = list(session.items)

    with contextlib.redirect_stdout(io.StringIO()) as out:
        status = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", str(root),
                              str(root / "tests")], plugins=[Count()])
    if status != 0 or not Count.items:
        raise RuntimeError(f"collecting {root / 'tests'} failed (pytest exit {status}):\n{out.getvalue()[-3000:]}")
    fast = [item for item in Count.items if item.get_closest_marker("e2e") is None]
    return {"tests": len(Count.items), "fast_tests": len(fast)}


# ---- the sentences: each fills a block from figures.json and the counts ----

def _held(figure: dict, today: int) -> str:
    """' when it held N' if the figure was measured on another count of tests than today's."""
    return "" if figure["tests"] == today else f" when it held {figure['tests']}"


def suite(f: dict, counts: Dict[str, int]) -> str:
    s, q = f["figures"]["suite"], f["figures"]["fast_lane"]
    return (f"The whole suite ({counts['tests']} tests, one of them a real model playing) took {s['time']} "
            f"{s['how']}{_held(s, counts['tests'])}; the fast lane ({counts['fast_tests']} tests) {q['time']}"
            f"{_held(q, counts['fast_tests'])}: `{s['command']}`, `{q['command']}` "
            f"([docs/benchmarks.md](docs/benchmarks.md#main-job-and-set-up)).")


def suite_build(f: dict, counts: Dict[str, int]) -> str:
    b = f["figures"]["suite_build"]
    return (f"The README's test command as a whole, on a fresh machine: first the real model's server is built "
            f"(llama.cpp from source, once, its own step with progress lines; cached in "
            f"`~/.cache/econarena-evals`): {b['build']} (`{b['build_command']}`); then the suite, "
            f"{b['without_build']}. With the server cached, only the suite.")


def _minutes(text: str) -> Tuple[int, int]:
    m = re.fullmatch(r"(\d+) min (\d+) s", text)
    assert m, f"not a time in minutes and seconds: {text!r}"
    return int(m.group(1)), int(m.group(2))


def main_job(f: dict, counts: Dict[str, int]) -> str:
    m, versions = f["figures"]["main_job"], f["tables"]["python-versions"]
    times = sorted(_minutes(row[2]) for row in versions["rows"])
    (lo_min, lo_s), (hi_min, hi_s) = times[0], times[-1]
    span = (f"{lo_min} min {lo_s}-{hi_s} s" if lo_min == hi_min else f"{lo_min} min {lo_s} s to {hi_min} min {hi_s} s")
    pythons = [row[0].split()[0] for row in versions["rows"]]
    return (f"{m['wall']} and {m['peak']} peak memory on 2 cores from a fresh clone, set-up included, measured "
            f"with `{m['command']}`; {span} on each of Python {', '.join(pythons[:-1])} and {pythons[-1]} "
            f"on a busier day, each from a fresh clone with `PYTHON=... VENV=.venv-3.X`: "
            f"[docs/benchmarks.md](docs/benchmarks.md#python-versions)")


def batch(f: dict, counts: Dict[str, int]) -> str:
    rows = {row[0].strip("`"): row for row in f["tables"]["batch"]["rows"]}
    one, hist = rows["beauty_L"], rows["beauty_hist"]
    plural = lambda n: "batch" if n == "1" else "batches"  # noqa: E731
    return (f"`beauty_L` made {one[2]} {plural(one[2])} in {one[5]} (floor {one[6]}), `beauty_hist` "
            f"{hist[2]} {plural(hist[2])} in {hist[5]} (floor {hist[6]}); {one[3]} synchronous requests, "
            f"{one[4]} and {hist[4]} requests to the batch API, and final reports byte-identical to the "
            f"synchronous runs'.")


def suite_row(f: dict, counts: Dict[str, int]) -> List[str]:
    s = f["figures"]["suite"]
    return [f"the whole test suite ({counts['tests']} tests today)",
            f"{s['time']} {s['how']} when it held {s['tests']}; earlier {s['earlier']}",
            f"`{s['command']}` {s['options']}"]


def fast_lane_row(f: dict, counts: Dict[str, int]) -> List[str]:
    q = f["figures"]["fast_lane"]
    return [f"the fast lane ({counts['fast_tests']} tests today: no process, no server)",
            f"{q['time']} when it held {q['tests']}; earlier {q['earlier']}", f"`{q['command']}`"]


def main_job_row(f: dict, counts: Dict[str, int]) -> List[str]:
    m = f["figures"]["main_job"]
    return ["`scripts/main.sh` on a fresh clone, set-up included", f"{m['wall']} wall, {m['peak']} peak memory "
            f"({m['measured']})", f"`{m['command']}`"]


TEXTS: Dict[str, Callable[[dict, Dict[str, int]], str]] = {
    "suite": suite, "suite-build": suite_build, "main-job-time": main_job, "batch-sentence": batch}
# a table row written as "@name" is one of these, so that a figure a sentence also cites is kept once
ROWS: Dict[str, Callable[[dict, Dict[str, int]], List[str]]] = {
    "@suite": suite_row, "@fast_lane": fast_lane_row, "@main_job": main_job_row}


def table(f: dict, name: str, counts: Dict[str, int]) -> List[str]:
    t = f["tables"][name]
    rows = [ROWS[row[0]](f, counts) if len(row) == 1 and row[0] in ROWS else row for row in t["rows"]]
    width = len(t["columns"])
    bad = [row for row in rows if len(row) != width]
    assert not bad, f"{name}: rows without {width} cells: {bad}"
    line = lambda cells: "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"  # noqa: E731
    return [line(t["columns"]), "|" + "---|" * width, *(line(row) for row in rows)]


def render(f: dict, name: str, counts: Dict[str, int], indent: str) -> str:
    """What goes between the markers of block ``name``; ``indent`` is the opening marker's."""
    assert not (name in f["tables"] and name in TEXTS), f"{name} is both a table and a sentence"
    if name in f["tables"]:
        return "\n" + "".join(f"{indent}{line}\n" for line in table(f, name, counts)) + indent
    if name in TEXTS:
        return TEXTS[name](f, counts)
    raise KeyError(f"no table or sentence called {name!r} (bench/figures.json, bench/docs.py TEXTS)")


def rewrite(text: str, f: dict, counts: Dict[str, int]) -> str:
    def fill(m: "re.Match[str]") -> str:
        line_start = text.rfind("\n", 0, m.start()) + 1
        indent = re.match(r"[ \t]*", text[line_start:m.start()]).group(0)
        return f"<!-- bench:{m['name']} -->{render(f, m['name'], counts, indent)}<!-- /bench -->"
    return BLOCK.sub(fill, text)


def blocks(root: Path = ROOT) -> Dict[str, List[str]]:
    """Every page's generated blocks by name."""
    return {str(p.relative_to(root)): [m["name"] for m in BLOCK.finditer(p.read_text(encoding="utf-8"))]
            for p in pages(root)}


def stale(f: dict, counts: Dict[str, int], root: Path = ROOT) -> List[str]:
    """Pages whose generated blocks differ from what ``--write`` would write."""
    return [str(p.relative_to(root)) for p in pages(root)
            if rewrite(p.read_text(encoding="utf-8"), f, counts) != p.read_text(encoding="utf-8")]


def record_table(name: str, columns: List[str], rows: List[List[str]], command: str, measured: str,
                 path: Path = FIGURES) -> None:
    """Store a table a bench script measured (its cells as the docs show them), with its command
    and when and where it was measured; ``python bench/docs.py --write`` then puts it in the docs."""
    f = load(path)
    f["tables"][name] = {**f["tables"].get(name, {}), "command": command, "measured": measured,
                         "columns": columns, "rows": rows}
    dump(f, path)


def dump(f: dict, path: Path = FIGURES) -> None:
    """Write ``f`` as JSON with each table row on a line of its own."""
    rows = {}
    for name, t in f["tables"].items():
        for k, row in enumerate(t["rows"]):
            rows[f"@row {name} {k}"] = json.dumps(row, ensure_ascii=False)
        t = f["tables"][name] = {**t, "rows": [f"@row {name} {k}" for k in range(len(t["rows"]))]}
    text = json.dumps(f, indent=1, ensure_ascii=False)
    for token, row in rows.items():
        text = text.replace(json.dumps(token), row)
    path.write_text(text + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the generated blocks into the docs")
    opts = parser.parse_args()
    f, counts = load(), collected_counts()
    print(f"pytest collects {counts['tests']} tests, {counts['fast_tests']} of them in the fast lane")
    changed = stale(f, counts)
    if opts.write:
        for name in changed:
            page = ROOT / name
            page.write_text(rewrite(page.read_text(encoding="utf-8"), f, counts), encoding="utf-8")
        print("wrote " + (", ".join(changed) if changed else "nothing: every block was current"))
        return 0
    print("stale: " + ", ".join(changed) if changed else "every generated block is current")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
