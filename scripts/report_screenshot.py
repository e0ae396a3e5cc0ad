"""Remake the pictures of report.html in the docs: ``python scripts/report_screenshot.py [--keep DIR]``.

Plays a scripted model behind the tests' local OpenAI-compatible server (its replies break the rules
in several ways) in an arena with ``econarena/human`` and in self-play, plus two built-in players,
all through the real ``oaieval``; writes the report, and photographs report.html in headless
Chromium (``bash scripts/browser.sh`` installs it): the session browser with a rule break selected
(docs/report_html.png) and the top of the page (docs/report_html_leaderboard.png). Offline; about
a minute.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from econarena_evals.log.evallog import read_log  # noqa: E402

from openai_server import OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402

MODEL = "econarena/chat:my-local-model"
ARENA = f"beauty_hist (arena: {MODEL}, econarena/human)"


def shoot(page: Path, fragment: str, out: Path, size: str) -> None:
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("no Chromium: run `bash scripts/browser.sh`")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", "--hide-scrollbars", f"--window-size={size}",
                        "--virtual-time-budget=3000",
                        f"--screenshot={out}", page.resolve().as_uri() + "#" + fragment],
                       check=True, capture_output=True, timeout=120)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="make the logs and the report here (default: a temporary folder)")
    opts = parser.parse_args()
    work = opts.keep or Path(tempfile.mkdtemp(prefix="econarena-shot-"))
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(PYTHONPATH=str(ROOT), EVALS_SHOW_EVAL_PROGRESS="")
    server = OpenAIServer(scripted, models=("my-local-model",)).start()
    try:
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local-placeholder")
        runs = [(f"{MODEL},econarena/human", "beauty_hist", "arena"), (MODEL, "beauty_hist", "model"),
                ("econarena/human", "beauty_hist", "human"), ("econarena/level2", "beauty_hist", "level2"),
                (MODEL, "auction_L", "model_auction"), ("econarena/nash", "auction_L", "nash_auction")]
        for players, cell, name in runs:
            subprocess.run([str(bindir / "oaieval"), players, f"econarena.{cell}", "--record_path",
                            str(logs / f"{name}.jsonl"), "--max_samples", "4"], env=env, check=True,
                           capture_output=True)
    finally:
        server.stop()
    report = work / "report"
    subprocess.run([str(bindir / "econarena-report"), str(logs), "--out", str(report)], env=env, check=True,
                   capture_output=True)
    page = report / "report.html"
    # the model's first answer in prose (a rule break: no JSON object) in the arena
    breaks = [(r["session"], r["run"], s["seat"]) for r in read_log(logs / "arena.jsonl").runs for s in r["seats"]
              if s["player"] == MODEL and s["action"] is None]
    session, run, seat = min(breaks) if breaks else (0, 0, 1)
    fragment = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in
                        dict(view="sessions", col=ARENA, player=MODEL, session=session, run=run + 1, seat=seat).items())
    shoot(page, fragment, ROOT / "docs" / "report_html.png", "1400,1180")
    shoot(page, "", ROOT / "docs" / "report_html_leaderboard.png", "1400,900")
    print(f"report: {page}")


if __name__ == "__main__":
    main()
