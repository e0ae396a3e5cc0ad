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
3. In one run, ``--rounds`` times (3 by default), one after the other: the one-pass floor (every
   line of every log read and decoded with ``json.loads``, in a process of its own, as each tool
   runs), ``econarena-summary``, ``econarena-summary --leaderboard`` and ``econarena-report``, each
   timed (wall and CPU) with its peak memory (max RSS, from ``os.wait4``: the tool alone), and
   the size of ``report.html`` and ``report.json``. Each figure is the best of its rounds, and
   each ratio is a tool's best over the floor's best: load from other work only ever adds time,
   and a floor taken in a busy minute makes any ratio look good. Every measurement prints the
   machine's load (``os.getloadavg``, the one-minute average) beside it.
4. Opens ``report.html`` in headless Chromium from ``file://`` (``--dump-dom``) and counts the
   models whose names its leaderboard shows, and the time that takes.

``--profile`` adds a run of ``econarena-report`` as users run it, each stage's wall time printed
beside a floor measured right before, then one more run in this process's child under cProfile, with
one worker (every stage in one process), and prints the time of each stage: reading (and the
per-log work done where a log is read), the columns' figures (re-scoring, intervals, paired
comparisons), the plots, the session browser and report.html.

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


FLOOR = """
import json, sys
lines = size = 0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        for line in f:
            size += len(line)
            if line.strip():
                json.loads(line)
                lines += 1
print(lines, size)
"""


def floor(logs: list[Path]) -> dict[str, float]:
    """One pass: every line of every log read and decoded with json.loads, nothing kept; in a process
    of its own started as the tools' are, so that the floor pays an interpreter's start as they do."""
    args = [sys.executable, "-c", FLOOR, *map(str, logs)]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit("the one-pass floor failed")
    lines, size = map(int, out.split())
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "lines": lines, "bytes": size,
            "rss_mib": usage.ru_maxrss / 1024}


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
                               # the virtual time lets the page's script decompress its columns
                               # before the dump (without it, --dump-dom returns first: data-ready unset)
                               f"--user-data-dir={profile}", "--virtual-time-budget=60000", "--dump-dom",
                               page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - start
    dom = proc.stdout
    ranking = dom[dom.find('id="ranking"'):dom.find('id="leaderboard"')]
    shown = sum(1 for i in range(models) if f"<td data-v=\"model-{i + 1:02d}\">model-{i + 1:02d}</td>" in ranking)
    return {"wall": wall, "shown": shown, "ready": 'data-ready="1"' in dom}


TOOLS = ("econarena-summary", "econarena-summary --leaderboard", "econarena-report")


def load() -> float:
    return os.getloadavg()[0]


def measure(logs: list[Path], folder: str, out: Path, rounds: int) -> dict:
    """``rounds`` rounds of the floor and each tool, back to back; every run's figures and load kept."""
    bindir = Path(sys.executable).parent
    summary = str(bindir / "econarena-summary")
    args = {"econarena-summary": [summary, folder],
            "econarena-summary --leaderboard": [summary, "--leaderboard", folder],
            "econarena-report": [str(bindir / "econarena-report"), folder, "--out", str(out)]}
    runs: dict[str, list[dict]] = {name: [] for name in ("floor", *TOOLS)}
    for k in range(rounds):
        before = load()
        f = floor(logs)
        f["load"] = (before, load())
        runs["floor"].append(f)
        print(f"round {k + 1}: one-pass floor (json.loads of every line): {f['wall']:.1f} s wall, {f['cpu']:.1f} s "
              f"CPU, {f['lines']:,} lines; load {f['load'][0]:.1f}-{f['load'][1]:.1f}", flush=True)
        for name in TOOLS:
            before = load()
            t = run_tool(args[name])
            t["load"] = (before, load())
            runs[name].append(t)
            print(f"round {k + 1}: {name}: {t['wall']:.1f} s wall ({t['wall'] / f['wall']:.2f} x this round's floor), "
                  f"{t['cpu']:.1f} s CPU, {t['rss_mib']:.0f} MiB peak; {t['progress_lines']} progress lines; "
                  f"load {t['load'][0]:.1f}-{t['load'][1]:.1f}", flush=True)
    return runs


def best(runs: list[dict]) -> dict:
    """The fastest run of a list (wall time), with every run's wall and the loads they met."""
    top = min(runs, key=lambda r: r["wall"])
    loads = [x for r in runs for x in r["load"]]
    return {**top, "walls": [r["wall"] for r in runs], "rss_max": max(r["rss_mib"] for r in runs),
            "load_range": (min(loads), max(loads))}


PHASES = """
import sys, time
from econarena_evals.report import build, html
marks = []
def timed(owner, name, label):
    fn = getattr(owner, name)
    def run(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            marks.append((label, time.perf_counter() - start))
    setattr(owner, name, run)
timed(build, "select", "reading the logs, with the per-log work (in the workers)")
timed(build, "compute", "the columns' figures (in this process; the workers start the plots)")
timed(build, "render_markdown", "report.md")
timed(html, "write", "report.html")
start = time.perf_counter()
build.main(sys.argv[1:])
total = time.perf_counter() - start
marks.insert(2, ("the rest: start-up, waiting for the plots, report.json", total - sum(s for _, s in marks)))
for label, seconds in marks + [("everything", total)]:
    print(f"phase {seconds:.2f} {label}")
"""


def phases(folder: str, out: Path) -> list[tuple[str, float]]:
    """econarena-report as users run it (a worker per core), the wall time of each of its stages, in order."""
    proc = subprocess.run([sys.executable, "-c", PHASES, folder, "--out", str(out)], env=tool_env(), check=True,
                          capture_output=True, text=True)
    marks = [line.split(" ", 2)[1:] for line in proc.stdout.splitlines() if line.startswith("phase ")]
    return [(label, float(seconds)) for seconds, label in marks]


def profile(folder: str, out: Path) -> list[tuple[str, float]]:
    """econarena-report in one process (``--workers 1``) under cProfile: the cumulative time of each stage."""
    stats_file = out.parent / f"{out.name}.prof"
    code = ("import cProfile, sys; from econarena_evals.report.build import main; "
            f"cProfile.run('main(sys.argv[1:])', {str(stats_file)!r})")
    subprocess.run([sys.executable, "-c", code, folder, "--out", str(out), "--workers", "1"], env=tool_env(),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import pstats

    stats = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    by_name: dict[str, float] = {}
    for (path, _, func), (_, _, _, cumulative, _) in stats.items():
        key = f"{Path(path).parent.name}/{Path(path).name}:{func}"
        by_name[key] = max(by_name.get(key, 0.0), cumulative)
    stages = (("everything", "report/build.py:main"),
              ("reading the logs, with the per-log work done where each is read", "report/selection.py:select"),
              ("  decoding the lines, checking and re-scoring the events", "log/evallog.py:read_log"),
              ("  the depth fits", "report/analysis.py:diagnostics"),
              ("  the session browser's part of each log", "report/html.py:log_piece"),
              ("the columns' figures (intervals, floors, paired comparisons)", "report/compute.py:compute"),
              ("  the paired comparisons (bootstrap)", "report/analysis.py:comparisons"),
              ("the convergence plots", "report/plots.py:draw_convergence"),
              ("the first-run plots", "report/plots.py:draw_first_run"),
              ("report.md", "report/markdown.py:render"),
              ("report.html", "report/html.py:write"))
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:40]
    print("  the 40 functions of most cumulative time:\n" + "\n".join(f"    {v:7.1f} s  {k}" for k, v in top))
    return [(label, by_name[key]) for label, key in stages if key in by_name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--data", type=Path, default=Path("/tmp/econarena-scale"))
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the floor and every tool (the best is kept)")
    parser.add_argument("--profile", action="store_true", help="then profile econarena-report's stages in one process")
    parser.add_argument("--write-docs", action="store_true", help="write the figures into docs/benchmarks.md")
    opts = parser.parse_args()
    base = make_base(opts.data / "base")
    logs = make_copies(base, opts.models, opts.data / f"logs-{opts.models}")
    out = opts.data / f"report-{opts.models}"
    shutil.rmtree(out, ignore_errors=True)
    print(f"{len(logs)} logs ({opts.models} models x {len(base) // len(PLAYERS)} cells), "
          f"{sum(p.stat().st_size for p in logs) / 1e9:.2f} GB; {os.cpu_count()} cores, load {load():.1f}; "
          f"{opts.rounds} rounds, the best of each kept", flush=True)
    runs = measure(logs, str(opts.data / f"logs-{opts.models}"), out, opts.rounds)
    figures = {name: best(r) for name, r in runs.items()}
    one = figures["floor"]["wall"]
    rounds = ", ".join(f"{w:.1f}" for w in figures["floor"]["walls"])
    print(f"best of {opts.rounds}: the floor {one:.1f} s (rounds: {rounds} s)")
    for name in TOOLS:
        f = figures[name]
        print(f"best of {opts.rounds}: {name} {f['wall']:.1f} s = {f['wall'] / one:.2f} x the floor "
              f"(rounds: {', '.join(f'{w:.1f}' for w in f['walls'])} s), {f['rss_max']:.0f} MiB at most; "
              f"load {f['load_range'][0]:.1f}-{f['load_range'][1]:.1f}", flush=True)
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
    if opts.profile:
        floor_now = floor(logs)["wall"]
        figures["phases"] = phases(str(opts.data / f"logs-{opts.models}"), opts.data / f"phases-{opts.models}")
        figures["phases_floor"] = floor_now
        print(f"econarena-report's stages, wall (the floor, right before: {floor_now:.1f} s):")
        for label, seconds in figures["phases"]:
            print(f"  {label}: {seconds:.1f} s = {seconds / floor_now:.2f} x that floor")
        print("profiling econarena-report in one process (--workers 1, cProfile) ...", flush=True)
        figures["profile"] = profile(str(opts.data / f"logs-{opts.models}"), opts.data / f"profile-{opts.models}")
        for label, seconds in figures["profile"]:
            print(f"  {label}: {seconds:.1f} s")
    if opts.write_docs:
        write_docs(opts, len(logs), figures)


def write_docs(opts: argparse.Namespace, n_logs: int, f: dict) -> None:
    one = f["floor"]["wall"]
    walls = lambda t: ", ".join(f"{w:.1f}" for w in t["walls"])  # noqa: E731
    rows = [f"| one pass: `json.loads` of every line | {one:.1f} s ({walls(f['floor'])}) | 1 | - | "
            f"{f['floor']['load_range'][0]:.1f}-{f['floor']['load_range'][1]:.1f} |"]
    for name in TOOLS:
        t = f[name]
        rows.append(f"| `{name}` | {t['wall']:.1f} s ({walls(t)}); {t['cpu']:.1f} s CPU | {t['wall'] / one:.2f} | "
                    f"{t['rss_max']:.0f} MiB | {t['load_range'][0]:.1f}-{t['load_range'][1]:.1f} |")
    s = f["sizes"]
    chromium = f.get("chromium") or {}
    # a stage within the one above it is a nested item, as the label's indent says
    profile = [f"{'  ' if label.startswith(' ') else ''}- {label.strip()}: {seconds:.1f} s"
               for label, seconds in f.get("profile", [])]
    text = "\n".join([
        BEGIN,
        f"`nice -n -10 python bench/report_scale.py --models {opts.models} --rounds {opts.rounds}"
        f"{' --profile' if profile else ''} --write-docs` on {os.cpu_count()} cores ({platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}): {n_logs} logs, {f['floor']['bytes'] / 1e9:.2f} GB, "
        f"{f['floor']['lines']:,} lines; each figure the best of {opts.rounds} rounds (every round in brackets), "
        "the load the one-minute average before and after each run:", "",
        "| | wall, best (rounds) | × the floor | peak memory | load |", "|---|---|---|---|---|", *rows, "",
        f"`report.html` {s['html_mb']:.1f} MB, `report.json` {s['json_mb']:.1f} MB ({s['comparisons']:,} comparison "
        f"rows), {s['ranked']} models ranked"
        + (f"; headless Chromium from `file://`: {chromium['shown']} of {opts.models} models named in the ranking, "
           f"DOM dumped in {chromium['wall']:.1f} s" if chromium else "") + ".",
        *(["", f"`econarena-report` as users run it (a worker per core), the wall time of each stage, "
           f"against a floor of "
           f"{f['phases_floor']:.1f} s measured right before:", "",
           *[f"- {label}: {seconds:.1f} s ({seconds / f['phases_floor']:.2f}x)" for label, seconds in f["phases"]]]
          if f.get("phases") else []),
        *(["", "`econarena-report` in one process (`--workers 1`) under cProfile, cumulative time by stage (the "
           "nested stages are part of the one above; cProfile slows Python code about twice):", "", *profile]
          if profile else []),
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
