"""An inspect_ai log (``.eval``) read without inspect_ai installed: the fixture is a real log of
``inspect eval econarena_evals/beauty_L --model econarena/level2 --model-role
player2=econarena/nash --limit 4`` (tests/fixtures/inspect/README.md)."""
from pathlib import Path

from econarena_evals.log.evallog import read_log
from econarena_evals.log.format import metric_key
from econarena_evals.score.metrics import METRICS

ARENA = Path(__file__).resolve().parent.parent / "fixtures" / "inspect" / "beauty_L_level2_vs_nash.eval"


def test_an_inspect_arena_log_reads_with_every_player_s_means_and_nothing_forged():
    log = read_log(ARENA)
    assert log.forged == [] and log.problems == []
    assert log.players == ["econarena/level2 (inspect)", "econarena/nash"] and len(log.sessions) == 4
    # the final report the reader builds holds both players' means, each what the sessions score
    report = log.final_report
    for player in log.players:
        for metric in METRICS:
            values = [s[metric_key(metric, player, log.players)] for s in log.sessions]
            assert abs(report[metric_key(metric, player, log.players)] - sum(values) / len(values)) < 1e-9
    assert report["eas/econarena/nash"] == 0.85 and report["sessions"] == 4
