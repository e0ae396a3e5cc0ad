from pathlib import Path

from econarena_evals.usage import flatten_usage
from econarena_evals_hook import dedupe_roots, registry_root
from conftest import REGISTRY


def test_nested_usage_is_flattened_and_nulls_count_zero():
    from openai.types import CompletionUsage

    usage = CompletionUsage.model_validate({
        "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
        "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": None},
    })
    flat = flatten_usage(usage)
    assert flat["completion_tokens_details_reasoning_tokens"] == 3
    assert flat["completion_tokens_details_audio_tokens"] == 0
    assert flat["prompt_tokens"] == 10 and flat["prompt_tokens_details"] == 0
    assert all(isinstance(v, int) for v in flat.values())


def test_registry_root_is_found():
    root = registry_root()
    assert root is not None and (root / "evals" / "econarena.yaml").is_file()


def test_dedupe_keeps_first_and_lets_an_explicit_checkout_win(tmp_path):
    installed = tmp_path / "site" / "registry"
    (installed / "evals").mkdir(parents=True)
    (installed / "evals" / "econarena.yaml").write_text("{}")
    builtin = tmp_path / "evals_builtin"
    builtin.mkdir()
    paths = [builtin, Path.home() / ".evals", installed, REGISTRY, REGISTRY]
    assert dedupe_roots(paths, installed) == [builtin, Path.home() / ".evals", REGISTRY]
    assert dedupe_roots([builtin, installed, installed], installed) == [builtin, installed]
