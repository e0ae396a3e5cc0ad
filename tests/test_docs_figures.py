"""The figures the docs show are the ones on record in bench/figures.json, written as bench/docs.py
writes them, and the test counts they give are pytest's own collection of tests/ (counted in this
process: no child process). Timings cannot be measured again here; what is checked is that the docs
show exactly the recorded figures and that each record names the command that measured it."""
from __future__ import annotations

import importlib.util
import re

import pytest

from conftest import ROOT


def _bench_docs():
    spec = importlib.util.spec_from_file_location("bench_docs", ROOT / "bench" / "docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOCS = _bench_docs()
FIGURES = DOCS.load()


@pytest.fixture(scope="module")
def counts():
    return DOCS.collected_counts()


def test_every_generated_block_reads_as_bench_docs_writes_it(counts):
    stale = DOCS.stale(FIGURES, counts)
    assert not stale, f"run `python bench/docs.py --write`: these pages differ from what it writes: {stale}"


def test_the_test_counts_in_the_readme_and_benchmarks_are_pytest_s(counts):
    assert 0 < counts["fast_tests"] < counts["tests"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bench = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    said = re.search(r"<!-- bench:suite -->The whole suite \((\d+) tests.*?the fast lane \((\d+) tests", readme)
    assert said and (int(said[1]), int(said[2])) == (counts["tests"], counts["fast_tests"])
    assert f"| the whole test suite ({counts['tests']} tests today) |" in bench
    assert f"| the fast lane ({counts['fast_tests']} tests today: no process, no server) |" in bench


def test_every_recorded_figure_names_its_command_and_when_it_was_measured():
    records = {**FIGURES["figures"], **FIGURES["tables"]}
    unnamed = [name for name, record in records.items()
               if not record.get("command", "").strip() or not record.get("measured", "").strip()]
    assert not unnamed, unnamed


def test_every_recorded_table_and_sentence_is_shown_once_and_every_block_has_a_record():
    shown = [name for names in DOCS.blocks().values() for name in names]
    expected = sorted([*FIGURES["tables"], *DOCS.TEXTS])
    assert sorted(shown) == expected  # none missing, none shown twice, no block without a record


def test_a_changed_figure_or_count_changes_the_docs(counts):
    """The check above could not pass with docs that ignore the record: a figure or a count that
    differs from what the docs show makes them stale."""
    changed = {**FIGURES, "figures": {**FIGURES["figures"],
                                      "main_job": {**FIGURES["figures"]["main_job"], "wall": "41 s"}}}
    assert "README.md" in DOCS.stale(changed, counts)
    assert "docs/benchmarks.md" in DOCS.stale(FIGURES, {**counts, "tests": counts["tests"] + 1})


def test_a_table_a_bench_script_records_is_what_the_docs_then_show(tmp_path, counts):
    """``record_table`` (``python bench/batch.py --record``) stores the figures with their command and
    date; the docs written from that record show them, and the other tables stay as they were."""
    path = tmp_path / "figures.json"
    path.write_bytes(DOCS.FIGURES.read_bytes())
    columns = FIGURES["tables"]["batch"]["columns"]
    rows = [["`beauty_L`", "1,000", "1", "0", "9", "6.5 s", "5.0 s", "4.4 s", "yes"],
            ["`beauty_hist`", "1,000", "10", "0", "90", "51.0 s", "50.0 s", "7.1 s", "yes"]]
    DOCS.record_table("batch", columns, rows, "python bench/batch.py --record", "2030-01-01, 2 cores, load 1.0", path)
    recorded = DOCS.load(path)
    assert recorded["tables"]["batch"]["command"] == "python bench/batch.py --record"
    assert {k: v for k, v in recorded["tables"].items() if k != "batch"} == {
        k: v for k, v in FIGURES["tables"].items() if k != "batch"}
    bench = DOCS.rewrite((ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8"), recorded, counts)
    batch = DOCS.rewrite((ROOT / "docs" / "batch.md").read_text(encoding="utf-8"), recorded, counts)
    assert "| `beauty_hist` | 1,000 | 10 | 0 | 90 | 51.0 s | 50.0 s | 7.1 s | yes |" in bench
    assert "`beauty_hist` 10 batches in 51.0 s (floor 50.0 s)" in batch


def test_the_readme_is_at_most_300_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300


def test_no_page_code_or_comment_names_an_issue_by_its_number():
    """A reader cannot look up this project's issue numbers: say what changed and why instead."""
    number = re.compile("[Ii]ssue" + r" ?#?[0-9]+")
    files = [ROOT / "README.md", *(p for folder in ("docs", "bench", "scripts", "econarena_evals", "tests")
                                   for p in (ROOT / folder).rglob("*")
                                   if p.suffix in (".md", ".py", ".sh", ".json", ".txt", ".toml", ".yaml"))]
    found = [f"{p.relative_to(ROOT)}:{n}" for p in files
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if number.search(line)]
    assert not found, found
