"""econarena-run's arguments, read in-process before anything runs: where the eval set is looked up."""
from __future__ import annotations

from econarena_evals.run.run_set import main

from conftest import TEST_REGISTRY as FIXTURES  # holds the set econarena-two


def test_the_set_is_looked_up_in_each_registry_path_given_too(tmp_path, capsys):
    for given in (["--registry_path", str(FIXTURES)], [f"--registry_path={FIXTURES}"]):
        assert main(["econarena/nash", "econarena-tw", "--out", str(tmp_path), *given]) == 2
        err = capsys.readouterr().err
        assert err.startswith("econarena-run: no eval set 'econarena-tw' in ") and str(FIXTURES) in err
        assert err.rstrip().endswith("did you mean econarena-two, econarena, econarena-two-hist?"), err
    assert main(["econarena/nash", "econarena-tw", "--out", str(tmp_path)]) == 2
    assert "econarena-two" not in capsys.readouterr().err  # not a set of the packaged registry
    assert list(tmp_path.iterdir()) == []
