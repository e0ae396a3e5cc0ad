"""The log format is spelled in one module: ``log/format.py`` names every
EconArena event, the seat tag and the ``metric`` / ``metric/player`` key scheme, and every other
module of the package takes them from there."""
from __future__ import annotations

import ast

from econarena_evals.log import format as log_format
from econarena_evals.log.format import metric_key, split_metric_key
from econarena_evals.score.metrics import METRICS

from conftest import ROOT

PACKAGE = ROOT / "econarena_evals"
HOME = PACKAGE / "log" / "format.py"
# Being split by another branch right now, which switches them to log/format.py itself; the
# coordinator removes this exception at merge.

NAMES = set(log_format.EVENTS) | {log_format.PLAYERS_SAMPLE_ID, log_format.SEAT_TAG, log_format.EVAL_RECORDER}


def sources() -> list[tuple[str, ast.AST]]:
    return [(str(p.relative_to(ROOT)), ast.parse(p.read_text(encoding="utf-8")))
            for p in sorted(PACKAGE.rglob("*.py")) if p != HOME]


def spelled_names(tree: ast.AST) -> list[str]:
    """String literals that are a name of the log format (an f-string's text parts included)."""
    return [f"line {node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES]


def metric_key_fstrings(tree: ast.AST) -> list[str]:
    """f-strings that are a per-player metric key: ``f"{metric}/{player}"`` or ``f"eas/{player}"``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr):
            continue
        shape = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
        if shape == ["{}", "/", "{}"] or (len(shape) == 2 and shape[1] == "{}" and shape[0] in
                                           {f"{m}/" for m in METRICS}):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_but_the_format_spells_an_event_name_or_the_seat_tag():
    found = {path: hits for path, tree in sources() if (hits := spelled_names(tree))}
    assert found == {}


def test_no_module_but_the_format_builds_a_metric_key_of_its_own():
    found = {path: hits for path, tree in sources() if (hits := metric_key_fstrings(tree))}
    assert found == {}


def test_the_scan_finds_what_it_looks_for():
    # the two scans above would pass on a scanner that sees nothing: each must catch its pattern
    tree = ast.parse('k = f"{metric}/{player}"; e = f"eas/{p}"; t = data.get("econarena"); r = "econarena_run"')
    assert len(metric_key_fstrings(tree)) == 2
    assert len(spelled_names(tree)) == 2
    assert metric_key_fstrings(ast.parse('p = f"{root}/data/{name}"; s = f"{done}/{total} sessions"')) == []


def test_metric_keys_name_the_first_player_by_the_metric_alone_and_split_back():
    players = ["econarena/nash", "econarena/random"]
    assert metric_key("eas", "econarena/nash", players) == "eas"
    assert metric_key("eas", "econarena/random", players) == "eas/econarena/random"
    assert split_metric_key("eas") == ("eas", None)
    assert split_metric_key("eas/econarena/random") == ("eas", "econarena/random")
    fields = log_format.metric_fields({"econarena/nash": dict.fromkeys(METRICS, 0.5), "econarena/random": None},
                                      players)
    assert fields["eas"] == 0.5 and fields["convergence/econarena/random"] is None
    assert list(fields)[: len(METRICS)] == list(METRICS)  # the first player's keys come first, as the eval wrote them
    assert log_format.player_metrics(fields, players) == {"econarena/nash": dict.fromkeys(METRICS, 0.5)}
