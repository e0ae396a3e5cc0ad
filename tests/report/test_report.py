"""econarena-report on logs made by the real oaieval / oaievalset, checked against those logs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from econarena_evals.log.evallog import read_log

from conftest import ERRORED, REGISTRY, base_env, cli, dead_endpoint, run_cli

# matplotlib's default colour cycle, in order; the human reference line is black
CYCLE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
HUMAN = "#7f007f"  # the human reference line (econarena_evals.report.plots.HUMAN_COLOUR)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("logs")
    env = base_env()
    for player in ("econarena/random", "econarena/nash"):
        for cell in ("beauty_hist", "auction_L"):
            run_cli([cli("oaieval"), player, f"econarena.{cell}", "--registry_path", str(REGISTRY),
                     "--record_path", str(d / f"{player.split('/')[1]}_{cell}.jsonl"), "--max_samples", "6"], env)
    run_cli([cli("oaieval"), "econarena/level1,econarena/human", "econarena.beauty_hist", "--registry_path",
             str(REGISTRY), "--record_path", str(d / "arena.jsonl"), "--max_samples", "5"], env)
    # every session errors: evals' gpt-4 fn against a dead endpoint
    run_cli([cli("oaieval"), "gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(d / "errored.jsonl"), "--max_samples", "2"], dead_endpoint(env), returncode=ERRORED)
    # a run cut short: a log up to its third finished session, with no final report
    full = d / "level2_full.jsonl"
    run_cli([cli("oaieval"), "econarena/level2", "econarena.beauty_hist", "--registry_path", str(REGISTRY),
             "--record_path", str(full), "--max_samples", "6"], env)
    kept, sessions = [], 0
    for line in full.read_text().splitlines():
        if sessions == 3:
            break
        if "final_report" not in line:
            kept.append(line)
        sessions += '"type": "econarena_session"' in line
    full.unlink()
    (d / "sub").mkdir()
    (d / "sub" / "partial.jsonl").write_text("\n".join(kept) + "\n")
    (d / "other_eval.jsonl").write_text(json.dumps({"spec": {"eval_name": "match_test.dev.v0",
                                                             "completion_fns": ["x"]}}) + "\n")
    (d / "garbage.jsonl").write_text("not json at all\n{\n")
    return d


@pytest.fixture(scope="module")
def report(logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    proc = run_cli([cli("econarena-report"), str(logs), "--out", str(out)], base_env())
    return out, json.loads((out / "report.json").read_text()), proc.stderr


@pytest.mark.e2e
def test_every_file_is_accounted_for(logs, report):
    _, data, stderr = report
    status = {Path(n["file"]).name: (n["status"], n["why"]) for n in data["inputs"]}
    assert status["garbage.jsonl"][0] == "skipped" and "not JSON" in status["garbage.jsonl"][1]
    assert status["other_eval.jsonl"] == ("skipped", "not an EconArena eval (match_test.dev.v0)")
    assert status["partial.jsonl"][0] == "partial" and "no final report" in status["partial.jsonl"][1]
    assert status["errored.jsonl"][0] == "used" and "2 errored session(s)" in status["errored.jsonl"][1]
    for name in ("garbage.jsonl", "other_eval.jsonl", "partial.jsonl", "errored.jsonl"):
        assert name in stderr


@pytest.mark.e2e
def test_numbers_match_each_logs_final_report(logs, report):
    _, data, _ = report
    checked = 0
    for cond in data["conditions"]:
        log = read_log(Path(cond["log"]))
        if log.final_report is None:
            continue
        i = log.players.index(cond["key"])  # the label may add the endpoint
        for metric, figure in cond["metrics"].items():
            expected = log.final_report[metric if i == 0 else f"{metric}/{cond['key']}"]
            if expected is None:
                assert figure["mean"] is None
            else:
                assert figure["mean"] == pytest.approx(expected, abs=1e-9)
                lo, hi = figure["ci95"]
                assert lo - 1e-9 <= figure["mean"] <= hi + 1e-9
                checked += 1
        assert cond["errored_sessions"] == (log.final_report["errored_sessions"] if i == 0 else 0)
    assert checked == 5 * 6  # five finished conditions, six metrics: 4 self-play + the arena's evaluated player
    eas = {(c["player"], c["column"]): c["metrics"]["eas"]["mean"] for c in data["conditions"]}
    assert eas[("econarena/nash", "auction_L")] == 0.84
    overall = data["overall"]["econarena/nash"]
    assert overall["eas"] == pytest.approx(0.84) and overall["columns"] == 2


@pytest.mark.e2e
def test_markdown_has_the_leaderboard_component_tables_and_error_table(report):
    out, data, _ = report
    md = (out / "report.md").read_text()
    for heading in ["## Leaderboard: EconArena Score (EAS)", "## rationality", "## ne_proximity", "## win_rate",
                    "## rule_following", "## convergence", "## Rule breaks, errors and tokens", "## Inputs"]:
        assert heading in md
    assert "| econarena/nash | 0.840 [0.840, 0.840] | 0.840 [0.840, 0.840] |" in md.replace(" |  |", " |")
    assert "beauty_hist (vs econarena/human)" in md
    assert "| gpt-4 @ 127.0.0.1:9 | beauty_L | 0 | **2** |" in md
    assert md.index("**2 errored session(s)**") < md.index("## Leaderboard")  # said before anything else


def colour_pixels(png: Path, hex_colour: str) -> int:
    from matplotlib.image import imread

    img = imread(png)[:, :, :3]
    rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    close = (abs(img - rgb) < 0.02).all(axis=2)
    return int(close.sum())


@pytest.mark.parametrize("name,players,human,published", [
    # nash, random, level2 (partial), the arena's evaluated player (its opponents are no row); four
    # GAMA-Bench models by default
    ("convergence_beauty_hist.png", 4, True, 4),
    ("first_run_beauty_hist.png", 4, True, 4),
    ("convergence_auction_L.png", 2, False, 0),
    ("first_run_auction_L.png", 2, True, 3),  # gpt-4o has no published second-price figures
    # beauty_L shows no history: no learning curve of people or models who saw results (the only log errored)
    ("convergence_beauty_L.png", 0, False, 0),
])
@pytest.mark.e2e
def test_plots_are_real_images_with_one_line_per_player(report, name, players, human, published):
    out, data, _ = report
    png = out / name
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = data["plots"][name]["lines"]
    assert len(labels) == players + human + published
    assert sum("GAMA-Bench" in label for label in labels) == published
    # the picture itself: each player's colour is drawn, and no colour beyond them
    for colour in CYCLE[:players]:
        assert colour_pixels(png, colour) > 100, (name, colour)
    assert colour_pixels(png, CYCLE[players]) == 0
    assert (colour_pixels(png, HUMAN) > 100) == human


@pytest.mark.e2e
def test_first_run_axis_covers_every_bid(logs, report):
    """Random bids reach several times the value: the CDF's axis runs to the largest, not to a fixed 1.6."""
    _, data, _ = report
    log = read_log(logs / "random_auction_L.jsonl")
    shares = [s["action"] / r["values"][s["seat"] - 1] for r in log.runs if r["run"] == 0 for s in r["seats"]]
    assert max(shares) > 1.6
    assert data["plots"]["first_run_auction_L.png"]["x_range"][1] >= max(shares)
    assert data["plots"]["first_run_beauty_hist.png"]["x_range"][1] == pytest.approx(1.02, abs=0.01)


@pytest.mark.e2e
def test_published_lines_are_told_apart(report):
    """Four published models on one plot: each its own grey, dash and marker (README, Report)."""
    from econarena_evals.report.plots import REFERENCE_DASHES, REFERENCE_GREYS, REFERENCE_MARKERS

    styles = set(zip(REFERENCE_GREYS, REFERENCE_DASHES, REFERENCE_MARKERS))
    assert len(styles) == 4 and len(set(REFERENCE_DASHES)) == 4 and len(set(REFERENCE_MARKERS)) == 4


@pytest.mark.e2e
def test_report_of_nothing_usable_says_so(tmp_path):
    (tmp_path / "x.jsonl").write_text("nope\n")
    proc = run_cli_fail([cli("econarena-report"), str(tmp_path), "--out", str(tmp_path / "out")])
    assert proc.returncode == 1 and "x.jsonl" in proc.stderr


def run_cli_fail(args):
    return subprocess.run(args, env=base_env(), capture_output=True, text=True, timeout=120)


def test_readme_plot_is_current():
    """The README shows one rendered plot; it must exist in the repository."""
    readme = (REGISTRY.parent / "README.md").read_text()
    assert "docs/convergence_beauty_hist.png" in readme
    assert (REGISTRY.parent / "docs" / "convergence_beauty_hist.png").read_bytes()[:4] == b"\x89PNG"



@pytest.mark.e2e
def test_floors_match_a_hand_computation(logs, report):
    """Second-price auction: breaking the rules pays A - fee against A (or A + v1 - v2 for the top
    value); Nash play is the ceiling; in self-play a rule break is never a win."""
    _, data, _ = report
    floors = data["floors"]["auction_L"]
    log = read_log(logs / "nash_auction_L.jsonl")
    ratios = []
    for r in log.runs:
        values = sorted(r["values"], reverse=True)
        top = r["values"].index(values[0])
        for i in range(len(r["values"])):
            ne = 100 + values[0] - values[1] if i == top else 100
            ratios.append(min(1.0, 90 / ne))
    assert floors["rationality"]["rule_break"] == pytest.approx(sum(ratios) / len(ratios), abs=1e-9)
    for m in ("ne_proximity", "win_rate", "rule_following", "convergence"):
        assert floors[m]["rule_break"] == 0
    assert floors["eas"]["nash"] == pytest.approx(0.84)
    assert 0 < floors["ne_proximity"]["random"] < 1 and floors["rule_following"]["random"] == 1
    beauty = data["floors"]["beauty_hist"]
    assert beauty["eas"]["rule_break"] == 0 and beauty["eas"]["nash"] == pytest.approx(0.84)
    md = (report[0] / "report.md").read_text()
    assert "*zero point: every answer a rule break (no credit up to here)*" in md and "*ceiling: Nash play*" in md


@pytest.mark.e2e
def test_comparisons_pair_players_of_a_column_by_session(logs, report):
    from econarena_evals.score.paired import paired_comparison

    out, data, _ = report
    comp = next(c for c in data["comparisons"] if c["column"] == "auction_L" and c["metric"] == "eas")
    assert {comp["a"], comp["b"]} == {"econarena/nash", "econarena/random"}
    per = {}
    for name in ("nash", "random"):
        log = read_log(logs / f"{name}_auction_L.jsonl")
        per[f"econarena/{name}"] = {s["session"]: s["eas"] for s in log.sessions}
    common = sorted(set(per[comp["a"]]) & set(per[comp["b"]]))
    direct = paired_comparison([per[comp["a"]][k] for k in common], [per[comp["b"]][k] for k in common],
                               resamples=2000, seed=1995)
    for k in ("diff", "ci_low", "ci_high", "p_value"):
        assert comp[k] == pytest.approx(direct[k], abs=1e-9), k
    assert comp["sessions"] == 6
    assert "## Paired comparisons" in (out / "report.md").read_text()
    proc = run_cli([cli("econarena-report"), str(logs), "--out", str(out / "again"), "--compare",
                    "econarena/random", "econarena/nash"], base_env())
    assert "econarena/random − econarena/nash = -" in proc.stdout and "auction_L  eas" in proc.stdout


@pytest.mark.e2e
def test_depth_and_bid_diagnostics(report):
    _, data, _ = report
    depth = data["depth"]["econarena/level2"]["beauty_hist"]
    assert depth["choices"] == 15 and depth["ci_low"] <= depth["tau"] <= depth["ci_high"]
    bids = data["diagnostics"]["bids"]["econarena/nash"]["auction_L"]
    assert bids["truthful"] == 1 and bids["overbid"] == 0 and bids["mean_bid_over_value"] == pytest.approx(1)


@pytest.mark.e2e
def test_references_can_be_hidden_and_unknown_ones_are_refused(logs, tmp_path):
    run_cli([cli("econarena-report"), str(logs), "--out", str(tmp_path / "none"), "--references", "none"],
            base_env())
    data = json.loads((tmp_path / "none" / "report.json").read_text())
    assert not any("GAMA" in label for p in data["plots"].values() for label in p["lines"])
    proc = run_cli_fail([cli("econarena-report"), str(logs), "--out", str(tmp_path / "x"), "--references",
                         "gpt-99"])
    assert proc.returncode == 2 and "unknown model(s) gpt-99" in proc.stderr


@pytest.mark.e2e
def test_the_report_tools_import_nothing_from_evals():
    """Reading logs needs neither evals nor a key: checked in a fresh interpreter without a key."""
    code = ("import sys, econarena_evals.report.build, econarena_evals.report.html, econarena_evals.log.transcripts, "
            "econarena_evals.report.summary; "
            "print(sorted(m for m in sys.modules if m == 'evals' or m.startswith(('evals.', 'openai'))))")
    proc = subprocess.run([sys.executable, "-c", code], env=base_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr
