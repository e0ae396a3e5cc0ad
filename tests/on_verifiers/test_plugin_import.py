"""Without the [verifiers] extra (the plugin's venv: verifiers' openai<3 cannot share it), the package
imports as before and names the extra when verifiers' loader asks for its environment."""
from __future__ import annotations

import importlib.util

import pytest

import econarena_evals


def test_the_environment_names_the_extra_it_needs():
    assert importlib.util.find_spec("verifiers") is None  # the plugin's venv, as scripts/setup.sh makes it
    assert econarena_evals.__all__ == ["EconArenaTaskset", "EconArenaEnv", "EconArenaHarness"]
    for name in econarena_evals.__all__:
        with pytest.raises(ImportError, match=r"pip install 'econarena-evals\[verifiers\]'"):
            getattr(econarena_evals, name)
    with pytest.raises(AttributeError):
        econarena_evals.no_such_thing  # noqa: B018
