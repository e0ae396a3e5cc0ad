"""Model against model in one column: every fn played against the same opponents
shares one column, named by the opponents, with a paired comparison between them; Nash play is
called a ceiling only where no player can score above it. Logs made by the real oaieval."""
from __future__ import annotations

import json

import pytest

from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, base_env, cli, run_cli

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

VS_NASH = "beauty_L (vs econarena/nash)"
FNS = ("econarena/level1", "econarena/level2")
BEATEN = "auction_L_vs_rational"  # econarena/nash wins more than its share against truthful bidders


def oaieval(fns: str, eval_name: str, log, samples: int) -> None:
    run_cli([cli("oaieval"), fns, eval_name, "--registry_path", str(REGISTRY), "--record_path", str(log),
             "--max_samples", str(samples)], base_env())


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("columns")
    logs = d / "logs"
    logs.mkdir()
    for fn in FNS:
        oaieval(f"{fn},econarena/nash", "econarena.beauty_L", logs / f"{fn.split('/')[1]}.jsonl", 3)
    oaieval("econarena/nash", f"econarena.{BEATEN}", logs / "beaten.jsonl", 20)
    oaieval("econarena/random", "econarena.beauty_L", logs / "self_play.jsonl", 3)  # where Nash play is the ceiling
    summary = run_cli([cli("econarena-summary"), str(logs)], base_env()).stdout
    run_cli([cli("econarena-report"), str(logs), "--out", str(d / "report")], base_env())
    report = json.loads((d / "report" / "report.json").read_text())
    return logs, summary, report, (d / "report" / "report.md").read_text()


def test_two_fns_against_the_same_opponents_are_one_column(made):
    logs, summary, report, _ = made
    rows = [line.split() for line in summary.splitlines() if line.startswith(FNS)]
    assert sorted((r[0], " ".join(r[1:4])) for r in rows if "beauty_L" in r[1]) == [
        (fn, VS_NASH) for fn in FNS]
    conditions = {(c["player"], c["column"]): c for c in report["conditions"]}
    for fn in FNS:
        final = read_log(logs / f"{fn.split('/')[1]}.jsonl").final_report
        assert conditions[(fn, VS_NASH)]["metrics"]["eas"]["mean"] == pytest.approx(final["eas"], abs=1e-12)
    # the opponents are the column's yardstick, not rows of it
    assert ("econarena/nash", VS_NASH) not in conditions
    assert not any("arena:" in c["column"] for c in report["conditions"])


def test_the_two_fns_are_compared_session_by_session(made):
    logs, _, report, md = made
    pair = [c for c in report["comparisons"] if c["column"] == VS_NASH and c["metric"] == "eas"]
    assert len(pair) == 1 and {pair[0]["a"], pair[0]["b"]} == set(FNS) and pair[0]["sessions"] == 3
    per = {fn: {s["session"]: s["eas"] for s in read_log(logs / f"{fn.split('/')[1]}.jsonl").sessions} for fn in FNS}
    a, b = pair[0]["a"], pair[0]["b"]
    assert set(per[a]) == set(per[b])  # the same sessions: one seed, one samples file
    diff = sum(per[a][s] - per[b][s] for s in per[a]) / 3
    assert pair[0]["diff"] == pytest.approx(diff, abs=1e-9) and diff != 0
    assert f"**{VS_NASH}**" in md and f"{a} − {b}" in md


def test_nash_play_is_called_a_ceiling_only_where_nobody_can_beat_it(made):
    _, summary, report, md = made
    nash_eas = report["floors"][BEATEN]["eas"]["nash"]
    scored = next(c for c in report["conditions"] if c["column"] == BEATEN)["metrics"]["eas"]["mean"]
    assert scored > nash_eas  # the fn beat Nash play's figure here: it is no ceiling
    assert "eas" not in report["ceilings"][BEATEN] and "win_rate" not in report["ceilings"][BEATEN]
    assert "rule_following" in report["ceilings"][BEATEN]  # 1 is as high as any player gets
    eas_table = md.split("## Leaderboard")[1].split("\n\n")[1].splitlines()
    columns = [c.strip().replace("\\", "") for c in eas_table[0].strip("|").split("|")]
    at = columns.index(BEATEN)
    ceiling = next(r for r in eas_table if r.startswith("| *ceiling: Nash play*"))
    below = next(r for r in eas_table if r.startswith("| *Nash play at every seat"))
    assert ceiling.strip("|").split("|")[at].strip() == "-"
    assert below.strip("|").split("|")[at].strip() == f"{nash_eas:.3f}"
    self_play = columns.index("beauty_L")
    assert ceiling.strip("|").split("|")[self_play].strip() == f"{report['floors']['beauty_L']['eas']['nash']:.3f}"
    assert below.strip("|").split("|")[self_play].strip() == "-"
    assert set(report["ceilings"]["beauty_L"]) == {"eas", "rationality", "ne_proximity", "win_rate", "rule_following",
                                                   "convergence"}
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("mean ["))
    end = next(i for i in range(start, len(lines)) if lines[i].endswith("econarena-report)."))
    legend = " ".join(lines[start:end + 1])  # wrapped for a terminal
    # one ceiling, the self-play column's; the columns with opponents are named apart
    assert legend.count("ceiling: Nash play") == 1 and f"Nash play at every seat {nash_eas:.3f}" in legend
