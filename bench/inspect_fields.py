"""One-field changes of a real inspect log, each read by ``econarena-summary``: how many end it.

    python bench/inspect_fields.py [--out /tmp/dir]

Takes the real log of tests/fixtures/inspect, and for every field of its header and of one sample
(the store whole; the sample's events, output and scores three levels down) writes a copy with that
field set to each of 7, "x", null, [], {}, true, -1 and removed, and runs the summary's own entry
point on it in this process (``--workers 1``). Prints each change that raised and the count.
A user found 64 of 602 such changes raising; target 0.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from econarena_evals.log.inspect_log import _member  # noqa: E402
from econarena_evals.report import summary  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "inspect" / "beauty_L_level2_vs_nash.eval"
VALUES: list[Any] = [7, "x", None, [], {}, True, -1]
REMOVED = object()
SAMPLE = "samples/1_epoch_1.json"
BULK = ("messages", "attachments", "events_data", "input")  # the transcript: never read
SHALLOW = ("events", "output", "scores", "model_usage", "role_usage", "metadata", "error_retries")


def fields(x: Any, at: tuple = ()) -> Iterator[tuple]:
    """Paths of ``x``'s fields, four levels down, the first item of each list."""
    if len(at) > 4:
        return
    items = x.items() if isinstance(x, dict) else enumerate(x[:1]) if isinstance(x, list) else ()
    for key, value in items:
        yield at + (key,)
        yield from fields(value, at + (key,))


def changes(members: dict[str, Any]) -> Iterator[tuple[str, tuple, Any]]:
    for member in ("header.json", SAMPLE):
        for path in fields(members[member]):
            if member == SAMPLE and (path[0] in BULK or (path[0] in SHALLOW and len(path) > 3)):
                continue
            if member == "header.json" and len(path) > 3:
                continue
            for value in VALUES + [REMOVED]:
                yield member, path, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    opts = parser.parse_args()
    out = opts.out or Path(tempfile.mkdtemp(prefix="inspect_fields_"))
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(FIXTURE) as z:
        members = {i.filename: _member(z, i) for i in z.infolist()}
    raised = tried = 0
    for member, path, value in changes(members):
        changed = copy.deepcopy(members)
        node = changed[member]
        for key in path[:-1]:
            node = node[key]
        if value is REMOVED:
            if not isinstance(node, dict):
                continue
            del node[path[-1]]
        else:
            node[path[-1]] = value
        if member == "header.json":  # the journal's start holds the same header
            changed["_journal/start.json"] = changed["header.json"]
        with zipfile.ZipFile(out / "log.eval", "w", zipfile.ZIP_DEFLATED) as z:
            for name, content in changed.items():
                z.writestr(name, json.dumps(content))
        tried += 1
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                summary.main([str(out), "--workers", "1"])
        except Exception as exc:  # noqa: BLE001 - what is counted
            raised += 1
            print(f"{member} {list(path)} = {'removed' if value is REMOVED else json.dumps(value)}: "
                  f"{type(exc).__name__}: {str(exc)[:120]}")
    print(f"{raised} of {tried} one-field changes raised")
    return 1 if raised else 0


if __name__ == "__main__":
    sys.exit(main())
