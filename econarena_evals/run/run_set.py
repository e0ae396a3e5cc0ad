"""``econarena-run FN SET --out DIR [oaieval args]``: an eval set for one completion fn, every log in
a folder of the user's choosing.

``oaievalset`` writes into evals' shared ``/tmp/evallogs``, where other users' and other days' logs
sit beside a run's own; this runs each eval of the set with the real ``oaieval`` and its own
``--record_path DIR/<fn>-<hash>/<eval>.jsonl``, so ``econarena-summary DIR`` and ``econarena-report
DIR`` read that run and nothing else. Every argument after the set's name goes to each ``oaieval``
unchanged (``--completion_args``, ``--extra_eval_params``, ``--max_samples``, ...); the set itself is
found in this package's registry or in a ``--registry_path`` among them, as ``oaievalset`` finds it.

Each condition has a folder of its own: the fn's name and a short hash of the whole condition (the
fn, its completion args, the eval params, the endpoint, ``--max_samples``, ``--seed`` and any other
argument; not the key, nor the args that change only how calls are made), with ``condition.json``
saying what it is. A run with other args into the same ``--out`` is another result beside it, never
"kept" in place of it.

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
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..core.closest import closest
from ..core.redact import redact_command, redact_mapping, redact_url
from ..fns.identity import NEUTRAL_ARGS
from ..integration import status as exit_status
from ..log.evallog import RUNNING, EvalLog, read_log, status_of
from ..log.jsonl import not_regular
from .config import POLICY_ARGS
from .evalset import known_sets, members, registry_roots
from .resume import RESUME_ENV
from .resume_command import HINT_ENV

# statuses after which the next eval would fare no better: refused args, a stop, a signal
STOPS_THE_SET = frozenset({exit_status.REFUSED, exit_status.STOPPED, exit_status.INTERRUPTED,
                           exit_status.TERMINATED, exit_status.HUNG_UP})


# The longest name of one file or folder most filesystems take (Linux's NAME_MAX), in bytes.
NAME_MAX = 255
DIGEST = 10  # hex digits of a name's hash where the name is shortened (``fitted``), as in a condition's folder


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST]


def fitted(name: str, longest_suffix: str = "") -> str:
    """``name`` as a file or folder name may hold it with ``longest_suffix`` after it: itself where that
    fits in ``NAME_MAX`` bytes, else its first bytes and a hash of the whole (the same name always gives
    the same shortening, and two long names that share their first bytes give two)."""
    if len((name + longest_suffix).encode("utf-8", "surrogatepass")) <= NAME_MAX:
        return name
    room = NAME_MAX - len(longest_suffix.encode("utf-8", "surrogatepass")) - DIGEST - 1
    readable = name.encode("utf-8", "surrogatepass")[:max(room, 0)].decode("utf-8", "ignore")
    return f"{readable}-{digest(name)}"


def logs_of(folder: Path, eval_name: str, most: int = 100) -> list[Path]:
    """Where an eval's logs go in its condition's folder: the first run's, then each resume's (an
    eval's name too long for a file's shortened, ``fitted``)."""
    stem = fitted(eval_name, f".resumed-{most - 1}.jsonl")
    return [folder / f"{stem}.jsonl", folder / f"{stem}.resumed.jsonl"] + [
        folder / f"{stem}.resumed-{n}.jsonl" for n in range(2, most)]


# oaieval's options that carry a value, as econarena-run reads them for the condition
VALUED = ("--completion_args", "--extra_eval_params", "--max_samples", "--seed")
CONDITION_FILE = "condition.json"
ENDPOINT_ENV = ("OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT")
# what may differ between two runs of one condition: who pays (a key) and how calls are made
NOT_CONDITION_ARGS = NEUTRAL_ARGS | {"api_key", "organization", "project"}


def _pairs(text: str) -> dict[str, str]:
    """'a=1,b=2' as oaieval splits it (a value without '=' kept whole, as oaieval would refuse it)."""
    return dict(kv.split("=", 1) if "=" in kv else (kv, "") for kv in text.split(",") if kv)


def _values(args: Sequence[str], flag: str) -> list[str]:
    """Every value given to ``flag`` in ``args`` (``flag VALUE`` or ``flag=VALUE``), in order."""
    return [a.split("=", 1)[1] if a != flag else args[i + 1] for i, a in enumerate(args)
            if a.startswith(flag + "=") or (a == flag and i + 1 < len(args))]


def condition(fn: str, passthrough: Sequence[str], env: Mapping[str, str]) -> dict[str, Any]:
    """The whole condition of a set's runs, as econarena-run is asked for it: the fn, its completion
    args and the eval params (but those that change only how calls are made, or who pays), the
    endpoint, the samples (--max_samples), the seed, and any other oaieval argument as given."""
    given: dict[str, list[str]] = {flag: [] for flag in VALUED}
    other: list[str] = []
    args = list(passthrough)
    while args:
        arg = args.pop(0)
        flag, eq, value = arg.partition("=")
        if flag in VALUED and eq:
            given[flag].append(value)
        elif arg in VALUED and args:
            given[arg].append(args.pop(0))
        else:
            other.append(arg)
    completion = {k: v for text in given["--completion_args"] for k, v in _pairs(text).items()
                  if k not in NOT_CONDITION_ARGS}
    params = {k: v for text in given["--extra_eval_params"] for k, v in _pairs(text).items() if k not in POLICY_ARGS}
    return {"fn": fn, "completion_args": dict(sorted(completion.items())),
            "extra_eval_params": dict(sorted(params.items())),
            "endpoint": {k: env[k] for k in ENDPOINT_ENV if env.get(k)},
            "max_samples": given["--max_samples"][-1] if given["--max_samples"] else None,
            "seed": given["--seed"][-1] if given["--seed"] else None, "other_args": other}


def condition_folder(out: Path, cond: Mapping[str, Any]) -> Path:
    """The folder of one condition under --out: a name a person can read (the fn) and a short hash
    of the whole condition, so that no two conditions share a folder (``org/model-a`` and
    ``org_model-a`` included)."""
    readable = re.sub(r"[^A-Za-z0-9._:,=+-]+", "_", str(cond["fn"]))[:80]
    return out / f"{readable}-{digest(json.dumps(cond, sort_keys=True))}"


def state_condition(folder: Path, cond: Mapping[str, Any]) -> None:
    """The small file in a condition's folder that says what ran there (secrets masked)."""
    shown = {**cond, "completion_args": redact_mapping(cond["completion_args"]),
             "endpoint": {k: redact_url(v) for k, v in cond["endpoint"].items()},
             "other_args": shlex.split(redact_command(shlex.join(cond["other_args"]))) if cond["other_args"] else []}
    text = json.dumps(shown, indent=2, sort_keys=True) + "\n"
    path = folder / CONDITION_FILE
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    tmp = folder / f".{CONDITION_FILE}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def earlier_layout(out: Path, fn: str) -> Optional[Path]:
    """A folder of logs as econarena-run laid them out before each condition had a folder of its
    own (``--out/<fn>/``, no condition file): its condition is not known, so it is not reused."""
    name = fn.replace("/", "_")
    if len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:  # no folder of that name was ever made
        return None
    folder = out / name
    try:
        if folder.is_dir() and not (folder / CONDITION_FILE).exists() and any(folder.glob("*.jsonl")):
            return folder
    except OSError:  # unreadable: not a layout to reuse
        return None
    return None


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
    parser.add_argument("eval_set", help="an EconArena eval set: econarena, econarena-arena, econarena-full, econarena-melee (a roster: P1,P2,... as the model)")
    parser.add_argument("--out", required=True, type=Path,
                        help="the run's folder: one log per eval under DIR/<fn>-<hash of the condition>/")
    for flag, metavar in (("--price-in", "PER_MILLION"), ("--price-out", "PER_MILLION"), ("--batch-discount", "SHARE")):
        parser.add_argument(flag, default=None, metavar=metavar,  # for the summary at the end, as it takes them
                            help=f"passed to the summary of the folder ({flag} of econarena-summary)")
    return parser.parse_known_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    opts, passthrough = parse(given)
    opts.argv, opts.argv0 = given, (sys.argv[0] if argv is None else PROGRAM)  # for the command said again
    if "--record_path" in passthrough or any(a.startswith("--record_path=") for a in passthrough):
        print("econarena-run: --record_path is chosen per eval under --out; leave it out", file=sys.stderr)
        return exit_status.REFUSED
    # the set is looked up where each oaieval looks: this package's registry, then each --registry_path
    roots = list(dict.fromkeys(p.resolve() for p in registry_roots() + [Path(v) for v in
                                                                      _values(passthrough, "--registry_path")]))
    try:
        evals = members(opts.eval_set, roots)
    except KeyError as exc:
        close = closest(opts.eval_set, known_sets(roots))
        print(f"econarena-run: {exc.args[0]}" + (f"; did you mean {', '.join(close)}?" if close else ""),
              file=sys.stderr)
        return exit_status.REFUSED
    oaieval = shutil.which("oaieval")
    if oaieval is None:
        print("econarena-run: oaieval is not on PATH (activate the venv evals is installed in)", file=sys.stderr)
        return exit_status.REFUSED
    cond = condition(opts.fn, passthrough, os.environ)
    folder = condition_folder(opts.out, cond)
    old = earlier_layout(opts.out, opts.fn)
    if old is not None and not folder.exists():
        print(f"econarena-run: {old} holds logs from before each condition had a folder of its own, so their "
              f"args are not known: move them into {folder} if they ran with exactly these args (they are then "
              "kept or resumed), or elsewhere, and run again", file=sys.stderr)
        return exit_status.REFUSED
    fresh, out_fresh = not folder.exists(), not opts.out.exists()
    folder.mkdir(parents=True, exist_ok=True)
    state_condition(folder, cond)
    print(f"econarena-run: logs of this condition go to {folder} ({CONDITION_FILE} there says what it is)",
          file=sys.stderr)
    try:
        return _run_set(opts, passthrough, evals, folder, oaieval)
    finally:
        if fresh and [p.name for p in folder.iterdir()] == [CONDITION_FILE]:  # nothing ran: nothing left
            (folder / CONDITION_FILE).unlink()
            folder.rmdir()
            if out_fresh and not any(opts.out.iterdir()):  # nor the --out folder this run made
                opts.out.rmdir()


class RunSetDone:
    """What this econarena-run did, apart from what the folder held before it: the closing table
    counts every log in ``--out`` (other conditions, earlier runs), this says the run's own share."""

    def __init__(self) -> None:
        self.played = self.kept = self.calls = self.reused = 0

    def ran(self, log_path: Path) -> None:
        """An oaieval of this run wrote ``log_path`` (or nothing, if it was refused)."""
        self.played += 1
        if not log_path.is_file():
            return
        log = read_log(log_path)
        self.calls += max(0, log.calls - log.kept_calls)
        self.reused += log.kept_calls

    def line(self, out: Path) -> str:
        reused = f"; {self.reused:,} more taken from the logs they resumed" if self.reused else ""
        kept = f", {self.kept} kept as finished before" if self.kept else ""
        return (f"this run: {self.played} eval(s) played ({self.calls:,} seat calls answered{reused}){kept}; "
                f"the table below counts every log in {out}, earlier runs' and other conditions' included")


# what a log's errored sessions say when the endpoint did not answer at all (the breaker's word, or the
# client's connection errors): the same command again fails the same way until the endpoint is fixed
_ENDPOINT_DOWN = re.compile(r"endpoint presumed down|APIConnectionError|APITimeoutError|ConnectError|"
                            r"Connection (?:error|refused)", re.I)


def _program(argv0: str) -> str:
    """How the user typed this command: ``econarena-run`` where that is what runs here (on PATH), else the
    path it was started by (a venv's bin not on PATH); ``econarena-run`` for ``python -m``."""
    if argv0.endswith(".py") or os.path.basename(argv0) != PROGRAM:
        return PROGRAM
    found = shutil.which(PROGRAM)
    return PROGRAM if found and Path(found).resolve() == Path(argv0).resolve() else argv0


PROGRAM = "econarena-run"


def rerun_command(argv: Sequence[str], env: Mapping[str, str], argv0: str = PROGRAM) -> str:
    """The command that runs this set again as it ran, as it must be typed: the environment it needs to
    reach the same endpoint with the same code first (``VAR=value``, ``resume_command.HINT_ENV`` and the
    endpoint's variables, which the condition's folder depends on: never a key, and a URL's user, password
    and query masked), then econarena-run and its arguments, secrets
    masked (``redact_command``)."""
    prefix = [f"{k}={shlex.quote(str(redact_url(env[k])) if k in ENDPOINT_ENV else env[k])}"
              for k in dict.fromkeys(HINT_ENV + ENDPOINT_ENV) if env.get(k)]
    return " ".join(prefix + [redact_command(shlex.join([_program(argv0), *argv]))])


def endpoint_down(logs: Sequence[Path], every: bool = False) -> bool:
    """Did the endpoint not answer at all: some errored session of these logs (``every``: every
    session of them) says so?"""
    said = []
    for path in logs:
        try:
            log = read_log(path)
        except (OSError, ValueError):
            continue
        said += [bool(s.get("errored") and _ENDPOINT_DOWN.search(str(s.get("error") or ""))) for s in log.sessions]
    return bool(said) and (all(said) if every else any(said))


def rerun_line(argv: Sequence[str], env: Mapping[str, str], logs: Sequence[Path], argv0: str = PROGRAM,
               not_played: int = 0) -> str:
    """The one line that closes a run whose evals errored or stopped: what to fix first, and the same
    command again, which keeps what finished and resumes every eval that did not (``not_played``: the
    evals of the set it did not start, a dead endpoint having stopped it)."""
    down = endpoint_down(logs)
    command = rerun_command(argv, env, argv0)
    first = ("the endpoint is not answering: fix it first (is the server up? is OPENAI_BASE_URL / api_base "
             "right?), then" if down else "see why above and fix it first, then")
    masked = (" (OPENAI_BASE_URL's user, password and query are masked as ***: set them as the run had them)"
              if "***" in command.split(PROGRAM, 1)[0] else "")  # the prefix's: a URL's secrets
    stopped = (f" (the set stopped there: the {not_played} eval(s) after it would have failed the same way)"
               if not_played else "")
    return (f"econarena-run: {len(logs)} eval(s) errored or stopped{stopped}; {first} run the same command again, "
            f"which keeps every finished session and answered call and plays every eval not finished: "
            f"{command}{masked}")


def _run_set(opts: argparse.Namespace, passthrough: list[str], evals: list[str], folder: Path, oaieval: str) -> int:
    worst, not_played = 0, 0
    done = RunSetDone()
    unfinished: list[Path] = []  # the logs of the evals that errored or failed: the same command resumes them
    for i, eval_name in enumerate(evals, 1):
        logs = logs_of(folder, eval_name)
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
            done.kept += 1
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
        print(f"{say} oaieval {opts.fn} {eval_name} --record_path {target}", file=sys.stderr)
        status = run_child([oaieval, opts.fn, eval_name, "--record_path", str(target), *passthrough], env)
        done.ran(Path(target))
        again = rerun_command(opts.argv, os.environ, opts.argv0)
        if status < 0:  # killed by a signal it could not catch (kill -9, out of memory): a stop too
            print(f"econarena-run: oaieval was killed by signal {-status}: the set stops here; the same command "
                  f"again goes on from {eval_name}, resuming what was answered: {again}", file=sys.stderr)
            return 128 - status  # as a shell reports it (137 for kill -9)
        if status == exit_status.REFUSED:  # a typo in the command: the same command would be refused again
            print(f"econarena-run: oaieval refused {eval_name} (exit 2, the lines above say why): the set stops "
                  "here and nothing of it was played; correct the command, then run it", file=sys.stderr)
            return status
        if status in STOPS_THE_SET:
            print(f"econarena-run: oaieval exited {status}: the set stops here; the same command again goes on "
                  f"from {eval_name}, resuming what was answered: {again}", file=sys.stderr)
            return status
        if status == exit_status.ERRORED:
            worst = exit_status.ERRORED
        elif status != 0 and worst == 0:
            worst = 1
        if status != 0:
            unfinished.append(Path(target))
        if status == exit_status.ERRORED and endpoint_down([Path(target)], every=True):
            not_played = len(evals) - i  # each would wait out the same dead endpoint: stop, say it once
            break
    print(file=sys.stderr)
    print(f"econarena-run: {done.line(opts.out)}", file=sys.stderr)
    # the table of just this folder's logs (a separate process: the report is a layer above the run)
    prices = [x for flag, v in (("--price-in", opts.price_in), ("--price-out", opts.price_out),
                                ("--batch-discount", opts.batch_discount)) if v is not None for x in (flag, v)]
    # each log's own resume hint is its oaieval's, said above: the summary closes with one line instead
    subprocess.run([sys.executable, "-m", "econarena_evals.report.summary", str(opts.out), *prices,
                    *(["--no-resume-hints"] if unfinished else [])])
    if unfinished:
        sys.stdout.flush()
        print(rerun_line(opts.argv, os.environ, unfinished, opts.argv0, not_played), file=sys.stderr)
    return worst


if __name__ == "__main__":
    sys.exit(main())
