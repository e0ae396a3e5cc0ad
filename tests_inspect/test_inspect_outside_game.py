"""A game from outside the package (``toy_game``: its module, its registry entry and its samples in a
folder of the test's own) played under the real ``inspect eval`` through the ``econarena_evals/cell``
task, with no edit anywhere in the package, and scored session by session as ``oaieval`` scores it."""
from __future__ import annotations

import sys

from conftest import inspect_eval, inspect_sessions, oaieval, oaieval_sessions
from front_ends import assert_same_figures
from toy_game import GAME, with_path, write_toy_game


def test_a_game_from_a_temporary_folder_plays_under_inspect_as_under_oaieval(tmp_path):
    code, registry = write_toy_game(tmp_path / "toy", python=sys.executable)
    env = {"PYTHONPATH": with_path(code, None)}
    for model in ("econarena/nash", "econarena/human"):
        log_dir = tmp_path / model / "inspect"
        done = inspect_eval(["cell"], model, log_dir, "-T", f"name={GAME}", "-T", f"registry={registry}", env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        figures = inspect_sessions(log_dir, GAME)
        assert len(figures) == 20
        if model == "econarena/nash":  # contributing nothing is the equilibrium: every part 1 but win_rate
            assert {round(f["eas"], 12) for f in figures.values()} == {0.84}
        evals_log = tmp_path / model / "evals.jsonl"
        oaieval(model, GAME, evals_log, env, "--registry_path", str(registry))
        assert_same_figures(oaieval_sessions(evals_log), figures, GAME)
