"""Telling the user how to resume a stopped run: the oaieval command line that does it.

``resume_command`` rewrites the run's own command line (``resume_from=`` added, a fresh
``--record_path``), ``hint`` is the message around it, and ``hint_at_exit`` prints it on stderr as
the process exits. What a resume then reuses is ``resume.resumption``'s.
"""
from __future__ import annotations

import atexit
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from ..core.redact import redact_command, redact_url
from ..fns.identity import CHAT_NAME, EVALS_OPENAI_CLASSES, is_builtin
from ..integration.recorder import log_path_of
from ..integration.status import under_cli
from ..log.inspect_log import FRONT_END, RETRYABLE
from ..log.verifiers_log import CONFIGS
from ..log.verifiers_log import FRONT_END as VERIFIERS
from .resume import RESUME_ENV, spec_of

RESUME_DIR_ENV = "ECONARENA_RESUME_DIR"  # where a printed resume command puts its new log (default: beside the old)


def _split_params(value: str) -> list[str]:
    return [kv for kv in value.split(",") if kv and not kv.startswith("resume_from=")]


def next_record_path(path: str) -> str:
    """A fresh log path next to ``path``: log.jsonl -> log.resumed.jsonl -> log.resumed2.jsonl ...;
    in ``$ECONARENA_RESUME_DIR`` instead when set (the old log's disk may be full)."""
    p = Path(path)
    elsewhere = os.environ.get(RESUME_DIR_ENV)
    if elsewhere:
        p = Path(elsewhere).expanduser().resolve() / p.name
    stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    base = stem.split(".resumed")[0]
    n = 1
    while True:
        candidate = p.with_name(f"{base}.resumed{'' if n == 1 else n}.jsonl")
        if not candidate.exists():
            return str(candidate)
        n += 1


def resume_command(command: str, log_path: str) -> str:
    """``command`` (an oaieval command line) turned into the one that resumes from ``log_path``.

    ``--extra_eval_params`` gets ``resume_from=`` (argparse keeps only the last copy of an option,
    so it is added to the existing one); a ``--record_path`` is moved to a fresh file next to the
    log, since reusing it would overwrite the very log being resumed before it is read.
    """
    log_path = str(Path(log_path).expanduser().resolve())
    args = shlex.split(command) if command else ["oaieval"]
    via_env = "," in log_path or "=" in log_path  # --extra_eval_params cannot carry these
    out: list[str] = []
    params: Optional[list[str]] = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if name in ("--extra_eval_params", "--record_path"):
            value = inline if eq else (args[i + 1] if i + 1 < len(args) else "")
            i += 1 if eq else 2
            if name == "--record_path":
                out += ["--record_path", next_record_path(log_path)]
            else:
                params = _split_params(value)
                out += ["--extra_eval_params", ""]  # filled in below, keeping its place
            continue
        out.append(arg)
        i += 1
    if not via_env:
        params = (params or []) + [f"resume_from={log_path}"]
    if params is not None:
        value = ",".join(params)
        if "--extra_eval_params" in out:
            at = out.index("--extra_eval_params")
            if value:
                out[at + 1] = value
            else:
                del out[at: at + 2]
        elif value:
            out += ["--extra_eval_params", value]
    line = shlex.join(out)
    return f"{RESUME_ENV}={shlex.quote(log_path)} {line}" if via_env else line


# The environment a resumed run needs to reach the same endpoint with the same code; never a key.
HINT_ENV = ("OPENAI_BASE_URL", "PYTHONPATH", "EVALS_THREADS", "ECONARENA_MAX_CONCURRENCY")


def resume_env(players: Sequence[Mapping[str, Any]]) -> Optional[dict[str, str]]:
    """The environment a resume of a log needs, as far as its players event tells (for a hint printed
    outside the run, by the summary): ``OPENAI_BASE_URL`` where an ``econarena/chat:`` or evals OpenAI
    player took its endpoint from it (its completion args name no api_base or base_url; masked as the log
    holds it), nothing for built-in players; None where that cannot be told (a log without the event, a
    registry's fn whose endpoint may be its own args), and the hint then says so in words."""
    env: dict[str, str] = {}
    for p in players:
        cls = p.get("class")
        if is_builtin(cls):
            continue
        told = p.get("completion_args") or {}
        env_endpoint = str(p.get("cli_name") or "").startswith(CHAT_NAME + ":") or cls in EVALS_OPENAI_CLASSES
        if p.get("source") == "command" or not env_endpoint:
            return None
        if p.get("base_url") and not ({"api_base", "base_url"} & set(told)):
            env.setdefault("OPENAI_BASE_URL", str(p["base_url"]))
    return env


def hint(spec: Mapping[str, Any], log_path: str, env: Optional[Mapping[str, str]] = None) -> str:
    """The two lines that tell how to resume the run ``spec`` describes from its log. ``env``: the
    run's environment, when known (the eval's own process), so the command carries its endpoint."""
    if spec.get("front_end") == FRONT_END:
        return inspect_hint(spec, log_path)
    if spec.get("front_end") == VERIFIERS:
        return verifiers_hint(log_path)
    # a log written before secrets were masked may hold a key in its command line: never repeat it
    raw = str((spec.get("run_config") or {}).get("command") or "")
    command = redact_command(raw)
    try:
        shlex.split(command)
    except ValueError:  # a hand-edited command line that cannot be split: told as if there were none
        command = ""
    if not command:  # not run by oaieval (a test, a script): no command line to repeat
        return (f"To resume it, run the same eval again with resume_from={Path(log_path).resolve()} "
                "(--extra_eval_params, or ECONARENA_RESUME) and another --record_path.")
    prefix = "".join(f"{k}={shlex.quote(redact_url(env[k]) if k == 'OPENAI_BASE_URL' else env[k])} "
                     for k in HINT_ENV if env and env.get(k))
    note = "" if env is not None else "\n  (with the environment the run had, e.g. its OPENAI_BASE_URL)"
    if "***" in prefix:
        note += "\n  (OPENAI_BASE_URL's user, password and query are masked as ***: set it as the run had it)"
    if "***" in command:
        note += "\n  (a secret in the command is masked as ***: pass it through the environment, e.g. OPENAI_API_KEY)"
    if _secret_in_base_url(raw):  # userinfo is dropped without a trace of it
        note += ("\n  (a user, password or query value in api_base is never repeated here: add it back if the "
                 "endpoint needs it)")
    return "To resume it (every answered seat call is kept; only what is missing is sent):\n  " \
           + prefix + resume_command(command, log_path) + note


def inspect_hint(spec: Mapping[str, Any], log_path: str) -> str:
    """How to go on with a stopped log of the inspect front end: inspect's own commands, since it takes
    no ``resume_from``. ``inspect eval-retry`` keeps the samples that finished and plays every other one
    from its start (their answered seat calls are sent, and paid, again); a log it does not retry (killed,
    or cut) is run again whole."""
    path = shlex.quote(str(Path(log_path).resolve()))
    if spec.get("inspect_status") in RETRYABLE:
        return ("To go on with it (inspect keeps the finished sessions; every unfinished one is played again "
                "from its first run, its answered seat calls sent and paid again):\n  inspect eval-retry " + path)
    command = redact_command(str((spec.get("run_config") or {}).get("command") or ""))
    return ("inspect eval-retry takes a log that ended with an error or was cancelled, not this one: run the task "
            "again (every session is played, and paid, again), with the options the run had, e.g.:\n  "
            + (command or "inspect eval econarena_evals/<cell> --model MODEL"))


def verifiers_hint(log_path: str) -> str:
    """How to go on with a partial run of the verifiers front end: vf-eval's own resume, which takes the
    run's saved config. It keeps the finished sessions' episodes and plays every other session again
    from its first run: verifiers writes an episode only once it ends, so the seat calls an unfinished
    session had answered are in no file, and are sent (and paid) again."""
    config = Path(log_path).resolve().parent / CONFIGS[0]
    return ("To go on with it (vf-eval keeps the finished sessions; every unfinished one is played again from "
            "its first run, its answered seat calls sent and paid again):\n  vf-eval @ "
            + shlex.quote(str(config)) + " --resume")


_BASE_URL_ARG = re.compile(r"(?:api_base|base_url)=([^,\s'\"]+)")


def _secret_in_base_url(command: str) -> bool:
    """Does an api_base or base_url of the command hold a user, a password or a query?"""
    for url in _BASE_URL_ARG.findall(command):
        netloc = url.split("://", 1)[-1].split("/", 1)[0]
        if "@" in netloc or "?" in url:
            return True
    return False


_hinted = False


def hint_at_exit(recorder: Any, why: str, kept: Optional[Callable[[], Mapping[str, int]]] = None,
                 after: str = "") -> None:
    """Print the resume command on stderr when the process exits (after any traceback): one line
    with the cause and what the log keeps. ``kept()`` gives ``finished`` sessions and, where known,
    answered seat ``calls``, asked at exit: calls answered while the process wound down count too.
    ``after`` is added below the command."""
    global _hinted
    path = log_path_of(recorder)
    if path is None or _hinted:
        return
    _hinted = True
    command = hint(spec_of(recorder.run_spec), path, env=os.environ) + after

    def message() -> str:
        if kept is None:
            what = "What was answered is kept"
        else:
            n = kept()
            what = f"{n['finished']} finished session(s)" + (
                f" and {n['calls']} answered seat call(s)" if "calls" in n else "") + " are kept"
        return f"econarena: {why} {what} in {path}.\n" + command

    if under_cli():
        atexit.register(lambda: _say(message()))  # after any traceback
    else:  # run in-process (a notebook, a test): said now, where the caller's stderr is
        _say(message())


def _say(message: str) -> None:
    # one write: a log line from a thread still winding down must not land inside the command
    sys.stderr.write("\n" + message + "\n")
    sys.stderr.flush()
