"""A wrong eval or eval-set name under stock ``oaieval``/``oaievalset`` is one line with the closest
names and exit status 2, for any eval, not only ours; evals printed 48 KB and
exited 1 (``oaieval``), or ran nothing and exited 0 (``oaievalset``)."""
from __future__ import annotations

import subprocess

import pytest

from econarena_evals.integration import names

from conftest import REGISTRY, base_env, cli


def run(tool: str, target: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([cli(tool), "econarena/nash", target, "--registry_path", str(REGISTRY)], env=base_env(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("tool,target,line", [
    ("oaieval", "econarena.beauty_X",
     "oaieval: no eval 'econarena.beauty_X'; closest: econarena.beauty_L, econarena.beauty_M, econarena.beauty_H"),
    ("oaieval", "test-matc", "oaieval: no eval 'test-matc'; closest: test-match"),  # one of evals' own
    ("oaievalset", "econarena_X", "oaievalset: no eval set 'econarena_X'; closest: econarena, econarena-full, "
     "econarena-arena"),
    ("oaievalset", "zzzzqqqqxxxx", "oaievalset: no eval set 'zzzzqqqqxxxx'; none of the"),
])
@pytest.mark.e2e
def test_a_wrong_name_is_one_line_with_the_closest_names(tool, target, line, tmp_path):
    proc = run(tool, target, tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]  # exit_status.REFUSED
    said = [s for s in proc.stderr.splitlines() if not s.startswith("[")]  # evals' own timestamped lines aside
    assert len(said) == 1 and said[0].startswith(line), said
    assert len(proc.stdout.encode()) + len(proc.stderr.encode()) < 1024, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and not list(tmp_path.iterdir())  # nothing written


@pytest.mark.e2e
def test_a_right_name_is_evals_own_lookup(tmp_path):
    log = tmp_path / "log.jsonl"
    proc = subprocess.run([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                           "--record_path", str(log), "--max_samples", "1"], env=base_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert log.is_file() and '"final_report"' in log.read_text()


def test_in_process_a_missing_name_is_evals_none():
    """Outside the CLI (a notebook, a test) evals' own behaviour is kept: None, no exit."""
    import evals.registry

    registry = evals.registry.Registry()
    registry.add_registry_paths([REGISTRY])
    assert getattr(evals.registry.Registry, "_econarena_names", False)
    assert registry.get_eval("econarena.beauty_X") is None and registry.get_eval_set("econarena_X") is None
    assert registry.get_eval("econarena.beauty_L").key == "econarena.beauty_L.dev.v0"
    assert names.missing("eval", "econarena.beauty_X", ["econarena.beauty_L"]).endswith("closest: econarena.beauty_L")


@pytest.mark.parametrize("fns,line", [
    # a model's name alone, the likeliest mistake: the econarena/chat name that plays it, as a command
    ("gpt-4o", "econarena: no completion fn or solver 'gpt-4o' in the registry; to play the chat model gpt-4o, "
               "name it econarena/chat:gpt-4o: oaieval econarena/chat:gpt-4o econarena.beauty_L"),
    # in an arena, only the unknown name is replaced
    ("econarena/nash,llama3.1", "econarena: no completion fn or solver 'llama3.1' in the registry; to play the chat "
                                "model llama3.1, name it econarena/chat:llama3.1: oaieval "
                                "econarena/nash,econarena/chat:llama3.1 econarena.beauty_L"),
    # one of ours mistyped: the closest names, and no model hint
    ("econarena/nsh", "econarena: no completion fn or solver 'econarena/nsh' in the registry; closest: "
                      "econarena/nash, econarena/ch, econarena/shade"),
])
@pytest.mark.e2e
def test_an_unknown_completion_fn_is_one_line_with_what_was_meant(fns, line, tmp_path):
    """evals said only "Could not find CompletionFn/Solver in the registry with ID gpt-4o" (no key set,
    so no endpoint lists the name)."""
    proc = subprocess.run([cli("oaieval"), fns, "econarena.beauty_L", "--registry_path", str(REGISTRY)],
                          env=base_env(), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    said = [s for s in proc.stderr.splitlines() if not s.startswith("[")]
    assert said == [line], said
    assert "Traceback" not in proc.stderr and not list(tmp_path.iterdir())
