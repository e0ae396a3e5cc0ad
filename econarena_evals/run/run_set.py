"""``econarena-run FN SET --out DIR [oaieval args]``: an eval set for one completion fn, every log in
a folder of the user's choosing.

``oaievalset`` writes into evals' shared ``/tmp/evallogs``, where other users' and other days' logs
sit beside a run's own; this runs each eval of the set with the real ``oaieval`` and its own
``--record_path DIR/<fn>/<eval>.jsonl``, so ``econarena-summary DIR`` and ``econarena-report DIR``
read that run and nothing else. Every argument after the set's name goes to each ``oaieval``
unchanged (``--completion_args``, ``--extra_eval_params``, ``--max_samples``, ...).

A log that is already there is kept, never written over (a paid run's answers are in it): running
the same command again runs only what is missing. A run that stops early (a quota, Ctrl-C, a
signal) or is refused stops the set; a cell whose sessions errored does not. The exit status is
``oaieval``'s (docs/reliability.md): that of the run that stopped the set, else 3 if any session
errored, else 1 if an ``oaieval`` failed otherwise, else 0.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..core.closest import closest
from . import exit_status
from .evalset import known_sets, members

# statuses after which the next eval would fare no better: refused args, a stop, a signal
STOPS_THE_SET = frozenset({exit_status.REFUSED, exit_status.STOPPED, exit_status.INTERRUPTED,
                           exit_status.TERMINATED, exit_status.HUNG_UP})


def log_path(out: Path, fn: str, eval_name: str) -> Path:
    return out / fn.replace("/", "_") / f"{eval_name}.jsonl"


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="econarena-run", description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog="Any other argument goes to each oaieval unchanged, e.g. --max_samples 5.")
    parser.add_argument("fn", help="the completion fn, as oaieval takes it (gpt-4, econarena/chat:gpt-4o, A,B ...)")
    parser.add_argument("eval_set", help="an EconArena eval set: econarena, econarena-arena, econarena-full")
    parser.add_argument("--out", required=True, type=Path, help="the run's folder: one log per eval under DIR/<fn>/")
    return parser.parse_known_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    opts, passthrough = parse(sys.argv[1:] if argv is None else argv)
    if "--record_path" in passthrough or any(a.startswith("--record_path=") for a in passthrough):
        print("econarena-run: --record_path is chosen per eval under --out; leave it out", file=sys.stderr)
        return exit_status.REFUSED
    try:
        evals = members(opts.eval_set)
    except KeyError as exc:
        close = closest(opts.eval_set, known_sets())
        print(f"econarena-run: {exc.args[0]}" + (f"; did you mean {', '.join(close)}?" if close else ""),
              file=sys.stderr)
        return exit_status.REFUSED
    oaieval = shutil.which("oaieval")
    if oaieval is None:
        print("econarena-run: oaieval is not on PATH (activate the venv evals is installed in)", file=sys.stderr)
        return exit_status.REFUSED
    worst = 0
    for i, eval_name in enumerate(evals, 1):
        log = log_path(opts.out, opts.fn, eval_name)
        if log.exists():
            print(f"econarena-run: [{i}/{len(evals)}] {eval_name}: kept {log} (delete it to run that eval again)",
                  file=sys.stderr)
            continue
        log.parent.mkdir(parents=True, exist_ok=True)
        print(f"econarena-run: [{i}/{len(evals)}] oaieval {opts.fn} {eval_name} --record_path {log}", file=sys.stderr)
        status = subprocess.run([oaieval, opts.fn, eval_name, "--record_path", str(log), *passthrough]).returncode
        if status in STOPS_THE_SET:
            print(f"econarena-run: oaieval exited {status}: the set stops here; the command again goes on "
                  f"from {eval_name} (a stopped log prints its own resume command)", file=sys.stderr)
            return status
        if status == exit_status.ERRORED:
            worst = exit_status.ERRORED
        elif status != 0 and worst == 0:
            worst = 1
    print(file=sys.stderr)
    # the table of just this folder's logs (a separate process: the report is a layer above the run)
    subprocess.run([sys.executable, "-m", "econarena_evals.report.summary", str(opts.out)])
    return worst


if __name__ == "__main__":
    sys.exit(main())
