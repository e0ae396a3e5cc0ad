"""A leaderboard of many models: how long ``econarena-summary`` and ``econarena-report`` take on 750
logs, against the time it takes to read every line of them once, and how much memory.

    python bench/report_scale.py [--models 50] [--data /tmp/econarena-scale] [--write-docs]

1. Plays four built-in players (``nash``, ``random``, ``level1``, ``human``) in every cell of
   ``econarena-full`` (dev split, 20 sessions each) with the real ``oaieval``, once, into
   ``DATA/base``.
2. Copies them to ``--models`` models × 15 cells (``DATA/logs-N``): model i is player i mod 4's logs
   with the evaluated player renamed ``model-NN`` (in the run spec, the players event, the seats,
   the session events and the seat calls' tags; the opponents of an opponent cell keep their
   names) and a new run id, so that every model is a row of the same 15 columns.
3. In one run, one after the other: the one-pass floor (every line of every log read and decoded
   with ``json.loads``, in this process), ``econarena-summary``, ``econarena-summary
   --leaderboard`` and ``econarena-report``, each timed (wall and CPU) with its peak memory (max
   RSS, from ``os.wait4``: the tool alone), and the size of ``report.html`` and ``report.json``.
4. Opens ``report.html`` in headless Chromium from ``file://`` (``--dump-dom``) and counts the
   models whose names its leaderboard shows, and the time that takes.

``--write-docs`` writes the figures into docs/benchmarks.md, between its two
``report-scale`` markers. Targets: summary within 2 times and report within 3 times the floor, each
under 1 GiB; report.html at most 15 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("nash", "random", "level1", "human")
PLACEHOLDER, RUN_PLACEHOLDER = "@@MODEL@@", "@@RUNID@@"
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- report-scale: begin -->", "<!-- report-scale: end -->"


def tool_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(PYTHONPATH=str(ROOT), EVALS_SHOW_EVAL_PROGRESS="")
    return env


def make_base(base: Path) -> list[Path]:
    """The real logs: every built-in player of PLAYERS in every cell of econarena-full (made once)."""
    bindir = Path(sys.executable).parent
    env = tool_env()
    evals = subprocess.run([str(bindir / "python"), "-m", "econarena_evals.run.evalset", "econarena-full"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    base.mkdir(parents=True, exist_ok=True)
    out = []
    for player in PLAYERS:
        for name in evals:
            log = base / f"{player}_{name}.jsonl"
            if not log.exists():
                print(f"playing econarena/{player} {name}", file=sys.stderr)
                tmp = log.with_suffix(".part")
                subprocess.run([str(bindir / "oaieval"), f"econarena/{player}", name, "--record_path", str(tmp)],
                               env=env, check=True, capture_output=True)
                tmp.rename(log)
            out.append(log)
    return out


def template(log: Path) -> bytes:
    """The log with its evaluated player's name and its run id replaced by placeholders."""
    lines = []
    old: Optional[str] = None
    for raw in log.read_text(encoding="utf-8").splitlines():
        row = json.loads(raw)
        if "spec" in row:
            spec = row["spec"]
            old = spec["completion_fns"][0]
            spec["completion_fns"][0] = spec["run_config"]["completion_fns"][0] = PLACEHOLDER
            spec["run_config"]["command"] = spec["run_config"]["command"].replace(f" {old} ", f" {PLACEHOLDER} ", 1)
            spec["run_id"] = RUN_PLACEHOLDER
        else:
            if "run_id" in row:
                row["run_id"] = RUN_PLACEHOLDER
            data = row.get("data")
            kind = row.get("type")
            if kind == "econarena_players":
                for entry in data["players"]:
                    if not entry.get("opponent"):
                        entry["name"] = entry["cli_name"] = PLACEHOLDER
            elif kind == "econarena_run":
                for seat in data["seats"]:
                    if seat["player"] == old:
                        seat["player"] = PLACEHOLDER
            elif kind == "econarena_session" and data.get("player") == old:
                data["player"] = PLACEHOLDER
            elif kind == "sampling" and isinstance(data.get("econarena"), dict) and data["econarena"]["player"] == old:
                data["econarena"]["player"] = PLACEHOLDER
                if data.get("model") == old:
                    data["model"] = PLACEHOLDER
        lines.append(json.dumps(row))
    return ("\n".join(lines) + "\n").encode("utf-8")


def make_copies(base_logs: list[Path], models: int, dest: Path) -> list[Path]:
    """``models`` models x the cells: model i is PLAYERS[i % 4] renamed, with a run id of its own per log."""
    if dest.exists() and len(list(dest.glob("*.jsonl"))) == models * len(base_logs) // len(PLAYERS):
        return sorted(dest.glob("*.jsonl"))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    by_player: dict[str, list[Path]] = {p: sorted(b for b in base_logs if b.name.startswith(p + "_"))
                                        for p in PLAYERS}
    out = []
    for p, logs in by_player.items():
        for log in logs:
            text = template(log)
            cell = log.name.split("_", 1)[1]
            for i in range(PLAYERS.index(p), models, len(PLAYERS)):
                name = f"model-{i + 1:02d}"
                run_id = f"{i + 1:02d}{zlib.crc32(cell.encode()):010d}SCALE"
                path = dest / f"{name}_{cell}"
                path.write_bytes(text.replace(PLACEHOLDER.encode(), name.encode())
                                 .replace(RUN_PLACEHOLDER.encode(), run_id.encode()))
                out.append(path)
    return sorted(out)


def floor(logs: list[Path]) -> dict[str, float]:
    """One pass: every line of every log read and decoded with json.loads, nothing kept."""
    start, cpu = time.perf_counter(), time.process_time()
    lines = size = 0
    for path in logs:
        with open(path, "rb") as f:
            for line in f:
                size += len(line)
                if line.strip():
                    json.loads(line)
                    lines += 1
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu, "lines": lines, "bytes": size}


def run_tool(args: list[str]) -> dict[str, float]:
    """One tool in a process of its own: wall and CPU time, peak memory (max RSS) of that process alone."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, env=tool_env(), stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err.seek(0)
        said = err.read().decode("utf-8", "replace")
    if status != 0:
        sys.exit(f"{' '.join(args)} failed: {said[-2000:]}")
    progress = [line for line in said.splitlines() if ": reading" in line or ": drawing" in line or ": fitting" in line]
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "progress_lines": len(progress)}


def chromium_check(page: Path, models: int) -> dict[str, float]:
    """report.html from file:// in headless Chromium: the time to a DOM dump, and how many of the models'
    names its ranking (the first table of the page) shows."""
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        return {}
    with tempfile.TemporaryDirectory() as profile:
        start = time.perf_counter()
        proc = subprocess.run([found, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - start
    dom = proc.stdout
    ranking = dom[dom.find('id="ranking"'):dom.find('id="leaderboard"')]
    shown = sum(1 for i in range(models) if f"<td data-v=\"model-{i + 1:02d}\">model-{i + 1:02d}</td>" in ranking)
    return {"wall": wall, "shown": shown, "ready": 'data-ready="1"' in dom}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--data", type=Path, default=Path("/tmp/econarena-scale"))
    parser.add_argument("--write-docs", action="store_true", help="write the figures into docs/benchmarks.md")
    opts = parser.parse_args()
    base = make_base(opts.data / "base")
    logs = make_copies(base, opts.models, opts.data / f"logs-{opts.models}")
    bindir = Path(sys.executable).parent
    out = opts.data / f"report-{opts.models}"
    shutil.rmtree(out, ignore_errors=True)
    print(f"{len(logs)} logs ({opts.models} models x {len(base) // len(PLAYERS)} cells), "
          f"{sum(p.stat().st_size for p in logs) / 1e9:.2f} GB; {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    one_pass = floor(logs)
    print(f"one-pass floor (json.loads of every line): {one_pass['wall']:.1f} s wall, {one_pass['cpu']:.1f} s CPU, "
          f"{one_pass['lines']:,} lines", flush=True)
    figures = {"floor": one_pass}
    folder = str(opts.data / f"logs-{opts.models}")
    summary = str(bindir / "econarena-summary")
    for name, args in (("econarena-summary", [summary, folder]),
                       ("econarena-summary --leaderboard", [summary, "--leaderboard", folder]),
                       ("econarena-report", [str(bindir / "econarena-report"), folder, "--out", str(out)])):
        f = figures[name] = run_tool(args)
        print(f"{name}: {f['wall']:.1f} s wall ({f['wall'] / one_pass['wall']:.2f} x the floor), {f['cpu']:.1f} s CPU, "
              f"{f['rss_mib']:.0f} MiB peak; {f['progress_lines']} progress lines", flush=True)
    page, data = out / "report.html", out / "report.json"
    report = json.loads(data.read_text())
    figures["sizes"] = {"html_mb": page.stat().st_size / 1e6, "json_mb": data.stat().st_size / 1e6,
                        "comparisons": len(report["comparisons"]),
                        "ranked": len(report["leaderboard"]["rows"])}
    print(f"report.html: {figures['sizes']['html_mb']:.1f} MB; report.json: {figures['sizes']['json_mb']:.1f} MB, "
          f"{figures['sizes']['comparisons']:,} comparison rows; leaderboard: {figures['sizes']['ranked']} models")
    seen = figures["chromium"] = chromium_check(page, opts.models)
    if seen:
        print(f"Chromium (file://, --dump-dom): {seen['wall']:.1f} s, {seen['shown']} of {opts.models} models named "
              f"in the ranking, script done: {seen['ready']}")
    else:
        print("Chromium: not found (bash scripts/browser.sh installs it)")
    if opts.write_docs:
        write_docs(opts, len(logs), figures)


def write_docs(opts: argparse.Namespace, n_logs: int, f: dict) -> None:
    one = f["floor"]["wall"]
    rows = [f"| one pass: `json.loads` of every line | {one:.1f} s | 1 | - |"]
    for name in ("econarena-summary", "econarena-summary --leaderboard", "econarena-report"):
        t = f[name]
        rows.append(f"| `{name}` | {t['wall']:.1f} s ({t['cpu']:.1f} s CPU) | {t['wall'] / one:.2f} | "
                    f"{t['rss_mib']:.0f} MiB |")
    s = f["sizes"]
    chromium = f.get("chromium") or {}
    text = "\n".join([
        BEGIN,
        f"`python bench/report_scale.py --models {opts.models} --write-docs` on {os.cpu_count()} cores "
        f"({platform.python_version()}, load {os.getloadavg()[0]:.1f} at the end): {n_logs} logs, "
        f"{f['floor']['bytes'] / 1e9:.2f} GB, {f['floor']['lines']:,} lines, one run:", "",
        "| | wall | × the floor | peak memory |", "|---|---|---|---|", *rows, "",
        f"`report.html` {s['html_mb']:.1f} MB, `report.json` {s['json_mb']:.1f} MB ({s['comparisons']:,} comparison "
        f"rows), {s['ranked']} models ranked"
        + (f"; headless Chromium from `file://`: {chromium['shown']} of {opts.models} models named in the ranking, "
           f"DOM dumped in {chromium['wall']:.1f} s" if chromium else "") + ".",
        END])
    docs = DOCS.read_text(encoding="utf-8")
    if BEGIN in docs and END in docs:
        docs = docs[:docs.index(BEGIN)] + text + docs[docs.index(END) + len(END):]
    else:
        docs = docs.rstrip("\n") + "\n\n" + text + "\n"
    DOCS.write_text(docs, encoding="utf-8")
    print(f"wrote the figures into {DOCS}")


if __name__ == "__main__":
    main()
