"""What durable sessions cost: writing each finished session's events to the log as it finishes.

    python bench/durability.py [--log LOG.jsonl] [--sessions 100] [--dir DIR]

Takes the events of a real log (by default it first makes one: econarena/chat on
econarena.beauty_hist.test against the local test server, 100 sessions, 61 events a session) and
records them again, session by session, into evals' own LocalRecorder, three ways:

- buffered: evals as shipped (writes every 100 events and 10 s, and at exit);
- durable: ``durable.durable()`` after each session (what the eval does: written to the OS);
- durable+fsync: the same plus ``os.fsync`` of the log (what a lost machine would need).

Prints the time per session of each (recording the events, serializing and writing them, the
final flush at exit included: buffered pays its writes there) and the durable ones' extra over
buffered, and the log's bytes per session. ``--dir`` puts the logs on another file system
(fsync's cost depends on it: tmpfs is free, a network disk is not).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("OPENAI_API_KEY", "sk-local")  # evals needs one at import

import evals.base  # noqa: E402
import evals.record  # noqa: E402

from econarena_evals.integration.recorder import durable  # noqa: E402


def make_log(path: Path, sessions: int) -> None:
    from openai_server import OpenAIServer
    from policies import scripted

    server = OpenAIServer(scripted).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local", EVALS_SHOW_EVAL_PROGRESS="",
               PYTHONPATH=str(ROOT))
    try:
        subprocess.run([str(Path(sys.executable).parent / "oaieval"), "econarena/chat:gpt-4",
                        "econarena.beauty_hist.test.v0", "--registry_path", str(ROOT / "registry"),
                        "--record_path", str(path), "--max_samples", str(sessions)],
                       env=env, check=True, capture_output=True)
    finally:
        server.stop()


def sessions_of(path: Path) -> list[tuple[str, list[tuple[str, dict]]]]:
    by_sample: dict[str, list[tuple[str, dict]]] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row.get("type") and row.get("sample_id"):
            by_sample.setdefault(row["sample_id"], []).append((row["type"], row["data"]))
    return list(by_sample.items())


def record_all(sessions, log: Path, mode: str) -> list[float]:
    spec = evals.base.RunSpec(completion_fns=["bench"], eval_name="econarena.beauty_hist.test.v0",
                              base_eval="econarena", split="beauty_hist", run_config={}, created_by="bench")
    recorder = evals.record.LocalRecorder(str(log), spec)
    times = []
    for sample_id, events in sessions:
        with recorder.as_default_recorder(sample_id):
            start = time.perf_counter()
            for type_, data in events:
                evals.record.record_event(type_, data)
            if mode != "buffered":
                durable(recorder)
            if mode == "durable+fsync":
                fd = os.open(log, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            times.append(time.perf_counter() - start)
    start = time.perf_counter()
    recorder.flush_events()  # buffered: everything is serialized and written here, at exit
    times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="a finished EconArena log to take events from")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the logs (default: a temp dir)")
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=opts.dir) as tmp:
        source = opts.log
        if source is None:
            source = Path(tmp) / "source.jsonl"
            make_log(source, opts.sessions)
        sessions = sessions_of(source)
        events = sum(len(e) for _, e in sessions)
        print(f"{len(sessions)} sessions, {events / len(sessions):.0f} events a session, from {source}")
        results: dict[str, list[float]] = {}
        for r in range(opts.repeat):
            for mode in ("buffered", "durable", "durable+fsync"):
                log = Path(tmp) / f"{mode}.{r}.jsonl"
                results.setdefault(mode, []).append(sum(record_all(sessions, log, mode)) / len(sessions))
        size = (Path(tmp) / "durable.0.jsonl").stat().st_size / len(sessions)
        base = statistics.median(results["buffered"])
        print(f"log: {size / 1024:.0f} KiB a session; file system of {tmp}")
        for mode, values in results.items():
            per = statistics.median(values)
            extra = "" if mode == "buffered" else f"   (+{(per - base) * 1e3:.2f} ms over buffered)"
            print(f"{mode:14s} {per * 1e3:7.2f} ms a session to record and write{extra}")


if __name__ == "__main__":
    main()
