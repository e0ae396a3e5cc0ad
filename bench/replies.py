"""What one huge or odd reply costs: log size and peak memory of the real ``oaieval``.

    python bench/replies.py [--mb 10] [--max-reply-mib 16] [--sessions 1,2] [--cases big,past,surrogate,gzip]
                            [--root DIR]

A local OpenAI-compatible server answers every seat call of ``beauty_L`` with a reply of ``--mb``
million characters (no answer in it: a rule break; sent with ``--completion_args max_reply_mib=N``
when ``--max-reply-mib`` is given, as the default limit of 4 MiB refuses it), then with the same
reply at the default limit (``past``: each try given up on at 4 MiB, every session errors, and the
figure is the memory and the failure the session names), then with a reply
holding a lone surrogate (``"\\ud800"``, valid JSON), then with a gzip body of about 1 MB that
inflates to 1 GB (given up on at the limit: every session errors, and the figure is the memory).
For each number of sessions it runs ``econarena/chat:gpt-4`` and prints
the exit status, the log's size, the peak RSS of ``oaieval``, the wall time, the finished sessions
and the filing problems (which must be none), and the first errored session's failure as its
event in the log names it. The log stores at most 65,536 characters of a reply (docs/contract.md §8).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[2:]).returncode; "
            "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
            "sys.exit(code)")
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from econarena_evals.log.evallog import read_log  # noqa: E402
from econarena_evals.log.filing import filing_problems  # noqa: E402

from openai_server import OpenAIServer, with_reply  # noqa: E402


def run(server: OpenAIServer, sessions: int, tmp: str, root: Path,
        extra: tuple[str, ...] = ()) -> tuple[int, float, float, float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local", EVALS_SHOW_EVAL_PROGRESS="",
               PYTHONPATH=str(root))
    log = Path(tmp) / f"log{sessions}.jsonl"
    rss = Path(tmp) / "rss"
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        # Through a small launcher that reports its child's peak RSS: a child forked straight from
        # this process would inherit, in ru_maxrss, what the server here held at the fork.
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, str(rss), str(Path(sys.executable).parent / "oaieval"),
                               "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(root / "registry"),
                               "--record_path", str(log), "--max_samples", str(sessions), *extra], env=env,
                              stdout=subprocess.DEVNULL, stderr=err)
        wall = time.perf_counter() - start
        err.seek(0)
        tail = err.read().decode(errors="replace").strip().splitlines()[-1:]
    rss_mb = int(rss.read_text()) / 1024
    size_mb = log.stat().st_size / 1e6 if log.exists() else 0.0
    filed, failed = "-", []
    if log.exists():
        try:
            parsed = read_log(log)
            finished = {s["session"] for s in parsed.sessions if not s.get("errored")}
            filed = f"{len(finished)} finished, {len(filing_problems(log))} filing problems"
            failed = [str(s.get("error")) for s in parsed.sessions if s.get("errored")]
            if failed:
                filed += f"; a session failed: {failed[0][:200]}"
        except Exception as exc:  # noqa: BLE001 - a broken log is a figure too
            filed = f"unreadable: {type(exc).__name__}"
    code = proc.returncode
    return code, size_mb, rss_mb, wall, filed + ("" if code == 0 or failed else f"; {tail}")


def gzip_bomb(inflated: int = 2**30) -> bytes:
    """A gzip body of about 1 MB that inflates to ``inflated`` bytes of zeros, made a MiB at a time."""
    packer, zeros = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS), bytes(2**20)
    return b"".join([packer.compress(zeros) for _ in range(inflated // 2**20)] + [packer.flush()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--sessions", default="1,2")
    parser.add_argument("--max-reply-mib", type=float, default=None,
                        help="econarena/chat's max_reply_mib for the big reply (the default 4 MiB refuses 10 MB)")
    parser.add_argument("--cases", default="big,past,surrogate,gzip",
                        help="which replies: big (at --max-reply-mib), past (the same at the default limit), "
                             "surrogate, gzip")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose code runs (another branch, to compare)")
    opts = parser.parse_args()
    big = "x" * int(opts.mb * 1e6)
    limit = ("--completion_args", f"max_reply_mib={opts.max_reply_mib:g}") if opts.max_reply_mib else ()
    bomb = gzip_bomb()
    cases = {"big": (f"{opts.mb:g} MB reply", lambda n, payload: (200, with_reply(payload, big), {}), limit),
             "past": (f"{opts.mb:g} MB, 4 MiB limit", lambda n, payload: (200, with_reply(payload, big), {}), ()),
             "surrogate": ("lone surrogate", lambda n, payload: (200, with_reply(payload, '{"choice": 1}\ud800'), {}),
                           ()),
             "gzip": (f"gzip {len(bomb) / 1e6:.1f} MB->1 GB",
                      lambda n, payload: (200, bomb, {"Content-Encoding": "gzip"}),
                      ("--extra_eval_params", "max_attempts=2"))}
    wanted = opts.cases.split(",")
    unknown = [c for c in wanted if c not in cases]
    if unknown:
        parser.error(f"--cases: no case {', '.join(unknown)} (cases: {', '.join(cases)})")
    print(f"{'reply':<20} {'sessions':>8} {'exit':>4} {'log MB':>8} {'peak RSS MB':>11} {'wall s':>7}  filing; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    for name, answer, extra in (cases[c] for c in wanted):
        server = OpenAIServer(lambda _: "", models=("gpt-4",), answer=answer).start()
        try:
            for sessions in (int(s) for s in opts.sessions.split(",")):
                with tempfile.TemporaryDirectory() as tmp:
                    code, size_mb, rss_mb, wall, filed = run(server, sessions, tmp, opts.root, extra)
                print(f"{name:<20} {sessions:>8} {code:>4} {size_mb:>8.1f} {rss_mb:>11.0f} {wall:>7.1f}  {filed}; "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
