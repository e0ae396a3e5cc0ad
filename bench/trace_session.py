"""Which package modules one session enters under ``oaieval``, and which calls go back up the layers.

    python bench/trace_session.py [--player econarena/nash] [--eval econarena.beauty_L] [--runs 1]

Runs ``oaieval`` in this process (the real CLI's ``main``) on one session, with a profile hook in
every thread while ``EconArena.eval_sample`` runs: from the session's first step to its scored runs
and its session event. It prints the package modules and functions entered, and every call from a
module of a lower layer into one of a higher layer (the layers of ``tests/test_layering.py``, bottom
up) as (caller -> callee) with how often. With ``--runs 1 --seats 2`` (the default) the session is
two seat calls, so the figure is that of one wave of seat calls, what every wave repeats.
Prints figures, asserts nothing: docs/architecture.md quotes them.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("core", "games", "score", "calls", "fns", "integration", "log", "run", "on_inspect", "report")
PACKAGE = "econarena_evals"


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) >= 2 and parts[1] in LAYERS else -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--player", default="econarena/nash")
    ap.add_argument("--eval", default="econarena.beauty_L")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--seats", type=int, default=2)
    args = ap.parse_args()

    from evals.cli import oaieval

    from econarena_evals.run.eval import EconArena

    entered: Counter = Counter()  # (module, function)
    upward: Counter = Counter()  # (caller module.function, callee module.function)
    active = threading.Event()

    def hook(frame, event, _arg):  # noqa: ANN001 - the profile hook's signature
        if event != "call" or not active.is_set():
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(PACKAGE + "."):
            return
        entered[(module, frame.f_code.co_name)] += 1
        caller = frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith(PACKAGE + "."):
            caller = caller.f_back  # through evals', openai's and the standard library's frames
        if caller is not None:
            by = caller.f_globals["__name__"]
            if layer(by) < layer(module):
                upward[(f"{by}.{caller.f_code.co_name}", f"{module}.{frame.f_code.co_name}")] += 1

    original = EconArena.eval_sample

    def traced(self, sample, rng):  # noqa: ANN001, ANN202
        if active.is_set():  # one session only: the others run untraced
            return original(self, sample, rng)
        active.set()
        try:
            return original(self, sample, rng)
        finally:
            active.clear()

    EconArena.eval_sample = traced
    sys.setprofile(hook)
    threading.setprofile(hook)
    os.environ.setdefault("EVALS_THREADS", "1")
    with tempfile.TemporaryDirectory() as tmp:
        sys.argv = ["oaieval", args.player, args.eval, "--max_samples", "1", "--record_path", f"{tmp}/log.jsonl",
                    "--extra_eval_params", f"runs={args.runs},seats={args.seats}"]
        try:
            oaieval.main()
        except SystemExit:
            pass
    sys.setprofile(None)
    threading.setprofile(None)

    modules = sorted({m for m, _ in entered})
    print(f"\none session of {args.eval} ({args.runs} run(s), {args.seats} seats) by {args.player} under oaieval:")
    print(f"  {len(modules)} package modules, {len(entered)} functions entered")
    for m in modules:
        print(f"    {m.split('.', 1)[1]}: {', '.join(sorted(f for mm, f in entered if mm == m))}")
    kinds = Counter((a.rsplit(".", 1)[0].split(".")[1], b.rsplit(".", 1)[0].split(".")[1]) for a, b in upward)
    print(f"  {len(upward)} call site(s) back up the layers, {len(kinds)} kind(s) (caller folder -> callee folder):")
    for (a, b), n in sorted(upward.items()):
        print(f"    {a.split('.', 1)[1]} -> {b.split('.', 1)[1]}  ({n}x)")


if __name__ == "__main__":
    main()
