"""How fast, and in how much memory, the report tools refuse files that are not evals logs.

    python bench/bad_files.py [--size-gb 1] [--dir /tmp]

Makes a garbage file (random bytes, so newlines now and then) and a sparse file (``truncate``: one
"line" of NULs with no newline) of ``--size-gb`` each, and for each runs the real
``econarena-summary`` and ``econarena-report`` on it, printing wall time, peak RSS (the child's
``ru_maxrss``), exit status and the machine's load (one-minute average) before and after. Target:
under 5 s and 200 MB each. Then a real log with one 64 MiB line in its middle: what a line past
``MAX_LINE_BYTES`` costs.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def measure(args: list[str]) -> tuple[float, float, int, str, str]:
    """Wall seconds, peak RSS in MB (that child's own, from wait4), exit status, last stderr line, and
    the load (one-minute average) before and after, as "before-after"."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    before = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().strip().splitlines()
    load = f"{before:.1f}-{os.getloadavg()[0]:.1f}"
    return wall, usage.ru_maxrss / 1024, proc.returncode, lines[-1] if lines else "", load


def garbage(path: Path, size: int) -> None:
    chunk = 2**24
    with open(path, "wb") as handle:
        for _ in range(size // chunk):
            handle.write(os.urandom(chunk))


def sparse(path: Path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    opts = parser.parse_args()
    size = int(opts.size_gb * 2**30)
    work = Path(tempfile.mkdtemp(dir=opts.dir, prefix="bad_files."))
    print(f"{'file':<28} {'tool':<18} {'wall s':>7} {'peak MB':>8} {'exit':>4} {'load':>9}  last stderr line")
    try:
        for name, make in (("sparse", sparse), ("garbage", garbage)):
            path = work / f"{name}.jsonl"
            make(path, size)
            for tool, extra in (("econarena-summary", []), ("econarena-report", ["--out", str(work / "out")])):
                wall, rss, status, last, load = measure([str(BIN / tool), str(path), *extra])
                print(f"{name} {opts.size_gb:g} GB{'':<16} {tool:<18} {wall:7.2f} {rss:8.0f} {status:>4} {load:>9}  "
                      f"{last[:90]}"[:210], flush=True)
            path.unlink()
        log = work / "small.jsonl"
        subprocess.run([str(BIN / "oaieval"), "econarena/random", "econarena.beauty_L", "--max_samples", "3",
                        "--record_path", str(log)], capture_output=True, check=True)
        lines = log.read_bytes().splitlines(keepends=True)
        long_line = work / "long_line.jsonl"
        with open(long_line, "wb") as handle:
            handle.write(lines[0] + b'{"x": "' + b"a" * 2**26 + b'"}\n' + b"".join(lines[1:]))
        wall, rss, status, last, load = measure([str(BIN / "econarena-summary"), str(long_line)])
        print(f"{'log + one 64 MiB line':<28} {'econarena-summary':<18} {wall:7.2f} {rss:8.0f} {status:>4} {load:>9}  "
              f"{last[:90]}")
    finally:
        for p in sorted(work.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        work.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
