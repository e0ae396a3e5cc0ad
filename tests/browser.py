"""report.html opened in headless Chromium, for the tests that check what the page shows."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import zlib
from pathlib import Path
from urllib.parse import quote

import pytest


def chromium() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("headless Chromium is needed to test report.html: run `bash scripts/browser.sh` "
                    "(installs Debian's chromium) or set CHROMIUM=/path/to/chrome")
    return found


def browse(page: Path, fragment: str = "", *extra: str) -> str:
    """Open ``page`` (with ``#fragment``) in headless Chromium: the DOM after the page's script ran,
    the column it shows unpacked (the virtual time budget lets the page's promises settle first)."""
    url = page.resolve().as_uri() + ("#" + fragment if fragment else "")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--virtual-time-budget=20000", *(extra or ("--dump-dom",)), url],
            capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def page_data(page: Path) -> dict:
    """The page's embedded data, as its script reads it, with every column's block unpacked: ``logs``
    (each log's data, in the order of ``index``) and ``strings`` (each log's block's strings)."""
    text = page.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S).group(1)
    data = json.loads(block)
    blocks = [json.loads(zlib.decompress(base64.b64decode(b)).decode("utf-8")) for b in data["blocks"]]
    data["logs"] = [blocks[entry["block"]]["logs"][entry["at"]] for entry in data["index"]]
    data["strings"] = [blocks[entry["block"]]["strings"] for entry in data["index"]]
    return data


def fragment(**kw) -> str:
    return "&".join(f"{k}={quote(str(v), safe='')}" for k, v in kw.items())
