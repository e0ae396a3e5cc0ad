"""``econarena-run FN SET --out DIR [oaieval args]``: an eval set for one completion fn, every log in
a folder of the user's choosing.

``oaievalset`` writes into evals' shared ``/tmp/evallogs``, where other users' and other days' logs
sit beside a run's own; this runs each eval of the set with the real ``oaieval`` and its own
``--record_path DIR/<fn>/<eval>.jsonl``, so ``econarena-summary DIR`` and ``econarena-report DIR``
read that run and nothing else. Every argument after the set's name goes to each ``oaieval``
unchanged (``--completion_args``, ``--extra_eval_params``, ``--max_samples``, ...).

A finished log is kept, and no log that holds an answered call is written over: running the same
command again skips what finished, resumes what stopped, errored or was cut short (into
``<eval>.resumed.jsonl``, paying for no answered call twice) and runs what is missing. A run that
stops early (a quota, Ctrl-C, a signal, ``kill -9`` of its ``oaieval``) or is refused stops the set;
a cell whose sessions errored does not. The exit status is ``oaieval``'s (docs/reliability.md):
that of the run that stopped the set (128 + the signal for one killed), else 3 if any session
errored, else 1 if an ``oaieval`` failed otherwise, else 0. A log a live run still writes is left
to it (exit 2). A log that holds a batch sent (batch mode) counts as paid for: it is resumed, so
the batch is waited for, not sent again.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..core.closest import closest
from ..log.evallog import RUNNING, EvalLog, read_log, status_of
from ..log.jsonl import not_regular
from . import exit_status
from .evalset import known_sets, members
from .resume import RESUME_ENV

# statuses after which the next eval would fare no better: refused args, a stop, a signal
STOPS_THE_SET = frozenset({exit_status.REFUSED, exit_status.STOPPED, exit_status.INTERRUPTED,
                           exit_status.TERMINATED, exit_status.HUNG_UP})


def logs_of(out: Path, fn: str, eval_name: str, most: int = 100) -> list[Path]:
    """Where an eval's logs go in the run folder: the first run's, then each resume's."""
    folder = out / fn.replace("/", "_")
    return [folder / f"{eval_name}.jsonl", folder / f"{eval_name}.resumed.jsonl"] + [
        folder / f"{eval_name}.resumed-{n}.jsonl" for n in range(2, most)]


def _not_a_file(path: Path) -> Optional[str]:
    """What ``path`` is when it is no regular file (a FIFO, a socket, a device), looked at without opening it."""
    try:
        return not_regular(os.stat(path).st_mode)
    except OSError:
        return "a dangling link"


def paid_for(log: EvalLog) -> bool:
    """Does the log hold anything an endpoint answered or will (a seat call, a finished session, a
    batch sent: its calls are paid for even before it ends, and a resume waits for it)?"""
    return log.calls > 0 or bool(log.batches) or any(not s.get("errored") for s in log.sessions)


def run_child(args: list[str], env: dict[str, str]) -> int:
    """``oaieval`` in a session of its own, so that it hears each of Ctrl-C, SIGTERM and SIGHUP once,
    from here, and ends as it does on its own (the answered calls kept, the stop recorded); this
    process waits for it instead of leaving it running or killing it mid-write."""
    child = subprocess.Popen(args, env=env, start_new_session=True)
    forwarded = (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())
    before = {sig: signal.signal(sig, lambda sig, _frame: child.send_signal(sig)) for sig in forwarded}
    try:
        return child.wait()
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="econarena-run", description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog="Any other argument goes to each oaieval unchanged, e.g. --max_samples 5.")
    parser.add_argument("fn", help="the completion fn, as oaieval takes it (gpt-4, econarena/chat:gpt-4o, A,B ...)")
    parser.add_argument("eval_set", help="an EconArena eval set: econarena, econarena-arena, econarena-full")
    parser.add_argument("--out", required=True, type=Path, help="the run's folder: one log per eval under DIR/<fn>/")
    for flag, metavar in (("--price-in", "PER_MILLION"), ("--price-out", "PER_MILLION"), ("--batch-discount", "SHARE")):
        parser.add_argument(flag, default=None, metavar=metavar,  # for the summary at the end, as it takes them
                            help=f"passed to the summary of the folder ({flag} of econarena-summary)")
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
        logs = logs_of(opts.out, opts.fn, eval_name)
        say = f"econarena-run: [{i}/{len(evals)}] {eval_name}:"
        present = [p for p in logs if os.path.lexists(p)]
        odd = {p: what for p in present if (what := _not_a_file(p))}
        for p, what in odd.items():  # a FIFO would block a read or a write for ever
            print(f"{say} {p} is {what}, not a log: skipped unread, and no log is written there", file=sys.stderr)
        latest = next((p for p in reversed(present) if p not in odd), None)
        free = next(p for p in logs if not os.path.lexists(p))
        state = read_log(latest) if latest is not None else None
        if state is not None and status_of(state) == "finished":
            print(f"{say} kept {latest} (finished; delete it to run that eval again)", file=sys.stderr)
            continue
        if state is not None and status_of(state) == RUNNING:  # a second run would pay for its calls again
            print(f"{say} {latest} is being written by a run that is still going: wait for it to end, "
                  "then run this command again", file=sys.stderr)
            return exit_status.REFUSED
        env = dict(os.environ)
        if state is None or not paid_for(state):
            target = latest or free  # nothing answered in it: nothing to lose by writing it again
        else:  # answered calls in it: resume, so none is paid twice (docs/reliability.md, "Resuming")
            target = free
            env[RESUME_ENV] = str(latest)
            print(f"{say} {latest} is {status_of(state)}: resuming from it", file=sys.stderr)
        target.parent.mkdir(parents=True, exist_ok=True)
        print(f"{say} oaieval {opts.fn} {eval_name} --record_path {target}", file=sys.stderr)
        status = run_child([oaieval, opts.fn, eval_name, "--record_path", str(target), *passthrough], env)
        if status < 0:  # killed by a signal it could not catch (kill -9, out of memory): a stop too
            print(f"econarena-run: oaieval was killed by signal {-status}: the set stops here; the same command "
                  f"again goes on from {eval_name}, resuming what was answered", file=sys.stderr)
            return 128 - status  # as a shell reports it (137 for kill -9)
        if status in STOPS_THE_SET:
            print(f"econarena-run: oaieval exited {status}: the set stops here; the same command again goes on "
                  f"from {eval_name}, resuming what was answered", file=sys.stderr)
            return status
        if status == exit_status.ERRORED:
            worst = exit_status.ERRORED
        elif status != 0 and worst == 0:
            worst = 1
    print(file=sys.stderr)
    # the table of just this folder's logs (a separate process: the report is a layer above the run)
    prices = [x for flag, v in (("--price-in", opts.price_in), ("--price-out", opts.price_out),
                                ("--batch-discount", opts.batch_discount)) if v is not None for x in (flag, v)]
    subprocess.run([sys.executable, "-m", "econarena_evals.report.summary", str(opts.out), *prices])
    return worst


if __name__ == "__main__":
    sys.exit(main())
