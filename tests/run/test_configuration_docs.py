"""docs/configuration.md's table of eval args says what the code says: every arg, its default, its kind."""
from __future__ import annotations

import dataclasses
import re

from econarena_evals.run import config
from econarena_evals.run.eval import ECONARENA_ARGS

from conftest import ROOT

KINDS = {"cell": "cell", "sampling": "sampling", "policy": "call policy"}


def table() -> dict[str, tuple[str, str]]:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- eval-args-table -->"):].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| (.+?) \|", block, re.M)
    return {name: (default.strip(), kind.strip()) for name, default, kind in rows}


def test_every_eval_arg_is_in_the_table_once_and_nothing_else():
    assert set(table()) == set(ECONARENA_ARGS)


def test_defaults_and_kinds_in_the_table_are_the_code_s():
    rows = table()
    for group, cls in config.GROUPS.items():
        for f in dataclasses.fields(cls):
            default, kind = rows[f.name]
            expected = "(required)" if f.default is dataclasses.MISSING else f"`{f.default!r}`"
            assert (default, kind) == (expected, KINDS[group]), f.name
    assert rows["opponents"][1] == "seating" and rows["resume_from"][1] == "call policy"


def test_policy_args_never_make_a_condition():
    from econarena_evals.run.conditions import POLICY_ARGS

    assert POLICY_ARGS == config.names("policy") | {"resume_from"}
