from pathlib import Path

from econarena_evals.fns.usage import flatten_usage
from econarena_evals.integration.registry import dedupe_roots, registry_root

from conftest import REGISTRY


def test_nested_usage_is_flattened_and_absent_fields_leave_no_key():
    from openai.types import CompletionUsage

    usage = CompletionUsage.model_validate({
        "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
        "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": None},
    })
    flat = flatten_usage(usage)
    assert flat["completion_tokens_details_reasoning_tokens"] == 3
    assert "completion_tokens_details_audio_tokens" not in flat
    assert flat["prompt_tokens"] == 10 and not any(k.startswith("prompt_tokens_details") for k in flat)
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


def test_dedupe_leaves_unrelated_repeated_roots_to_evals(tmp_path):
    installed = tmp_path / "site" / "registry"
    (installed / "evals").mkdir(parents=True)
    (installed / "evals" / "econarena.yaml").write_text("{}")
    other = tmp_path / "mine"
    other.mkdir()
    # evals' own 'duplicate entry' check must still see a repeated root that is not ours
    assert dedupe_roots([other, other, installed], installed) == [other, other, installed]


def test_a_failing_patch_is_recorded_not_raised():
    import types

    import econarena_evals_hook as hook
    from econarena_evals.integration import startup

    class Inner:
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            module.DEFAULT_PATHS = []  # no Registry class: patch() fails

        def get_source(self, name):
            return "source"

    before = len(startup.ERRORS)
    loader = hook._Loader(Inner())
    loader.exec_module(types.ModuleType("evals.registry"))
    assert len(startup.ERRORS) > before and "adding the registry" in [where for where, _ in startup.ERRORS[before:]]
    assert loader.get_source("evals.registry") == "source"  # every loader attribute passes through


def test_registry_files_parsed_by_libyaml_are_what_evals_reads_and_a_bad_one_fails_as_in_evals(tmp_path):
    """The start-up path parses registry files with libyaml (0.1 s instead of 0.65 s a start): every
    file of evals' registry and of ours gives the same entries as evals' own loader, and a file
    neither can read raises evals' own error, message and all."""
    import evals.registry
    import pytest
    import yaml

    from econarena_evals.integration.registry import _libyaml_load_file

    own = evals.registry.Registry._load_file
    own = getattr(own, "__wrapped__", own)  # the hook has patched it in this process, where libyaml is there
    ours = _libyaml_load_file(own)
    files = sorted(Path(evals.registry.__file__).parent.joinpath("registry").rglob("*.yaml"))
    files += sorted(REGISTRY.rglob("*.yaml"))
    assert len(files) > 400
    for path in files:
        assert list(ours(None, path)) == list(own(None, path)), path
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\nb: 3\n")
    with pytest.raises(yaml.YAMLError) as theirs:
        list(own(None, bad))
    with pytest.raises(yaml.YAMLError) as mine:
        list(ours(None, bad))
    assert str(mine.value) == str(theirs.value)
