"""report.md shows every string it read from a log as text. A log edited by hand carries markup in
every field the report shows (players, fn, class, model, endpoint, completion args, eval and cell,
the error, the file's name); report.md is rendered as CommonMark (markdown-it-py, raw HTML on,
tables on) in headless Chromium, next to the same report from a benign log of the same shape: no
script runs and the page has exactly the elements the benign one has."""
from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser import browse
from markdown_it import MarkdownIt

from conftest import REGISTRY, base_env, cli, run_cli

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

SCRIPT = "<script>document.title='pwned'</script>"
IMG = "<img src=x onerror=\"document.title='pwned-img'\">"
LINK = "[x](javascript:document.title='pwned-link')"
PIPES = "| a | b |"
PAYLOAD = f"{SCRIPT}{IMG}{LINK}{PIPES}**b**`c`"
# the cell is the eval name's second part: no "." in it. Nothing calls alert(): a dialog would
# block headless Chromium instead of failing the test.
CELL_PAYLOAD = "<script>window['document']['title']='pwned-cell'</script><img src=x onerror=x=1>[x](javascript:x=1)|*e*"
FIELDS = ("chat", "nash", "model", "endpoint", "class", "arg_name", "arg_value", "error")


def hostile() -> dict[str, str]:
    return {**{f: f"{f}{PAYLOAD}" for f in FIELDS}, "cell": CELL_PAYLOAD,
            "file": "<img src=x onerror=\"document.title='pwned-file'\">[x](javascript:x=1)|"}


def benign() -> dict[str, str]:
    return {**{f: f"{f}-plain" for f in FIELDS}, "cell": "plaincell", "file": "plain-file"}


@pytest.fixture(scope="module")
def real_log(tmp_path_factory, server) -> tuple[Path, str]:
    """An arena of a chat model behind the local server and a built-in player, two sessions."""
    d = tmp_path_factory.mktemp("md_real")
    env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-local"}
    run_cli([cli("oaieval"), "econarena/chat:my-local-model,econarena/nash", "econarena.beauty_L",
             "--registry_path", str(REGISTRY), "--record_path", str(d / "real.jsonl"), "--max_samples", "2",
             "--completion_args", "max_tokens=512"], env)
    return d / "real.jsonl", server.base_url.split("://", 1)[1].rsplit("/v1", 1)[0]


def edited(real: Path, host: str, s: dict[str, str], out: Path) -> Path:
    """The real log with ``s``'s strings in every field report.md shows; a session errored; no final
    report (so the partial-log line shows too)."""
    renames = (("econarena/chat:my-local-model", s["chat"]), ("econarena/nash", s["nash"]),
               ("my-local-model", s["model"]), (host, s["endpoint"]), ("beauty_L", s["cell"]))

    def swap(x):
        if isinstance(x, str):
            for old, new in renames:
                x = x.replace(old, new)
            return x
        if isinstance(x, dict):
            return {swap(k): swap(v) for k, v in x.items()}
        if isinstance(x, list):
            return [swap(v) for v in x]
        return x

    lines, errored = [], False
    for line in real.read_text().splitlines():
        row = json.loads(line)
        if "final_report" in row:
            continue
        row = swap(row)
        if row.get("type") == "econarena_players":
            for entry in row["data"]["players"]:
                entry["class"] = s["class"] if entry["opponent"] is False and entry["model"] else entry["class"]
                for key in ("completion_args", "condition_args"):
                    entry[key][s["arg_name"]] = s["arg_value"]
        elif row.get("type") == "econarena_session" and not errored:
            errored = True
            row["data"].update(errored=True, error=s["error"])
        lines.append(json.dumps(row))
    assert errored
    out.mkdir(parents=True)
    path = out / f"{s['file']}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


class Elements(HTMLParser):
    """Every element of a page, and every attribute that could run or load something."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter = Counter()
        self.risky: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:") or tag == "script":
                self.risky.append((tag, name, value or ""))


def rendered(real_log, tmp_path, strings: dict[str, str], name: str) -> tuple[str, Elements, str]:
    real, host = real_log
    logs = edited(real, host, strings, tmp_path / name / "logs")
    out = tmp_path / name / "report"
    run_cli([cli("econarena-report"), str(logs.parent), "--out", str(out)], base_env())
    text = (out / "report.md").read_text(encoding="utf-8")
    body = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(text)
    page = out / "report_md.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>report.md</title></head>"
                    f"<body>{body}</body></html>", encoding="utf-8")
    dom = browse(page)
    elements = Elements()
    elements.feed(dom)
    return text, elements, dom


def test_report_md_from_a_hostile_log_renders_as_text_and_adds_no_element(real_log, tmp_path):
    text, bad, dom = rendered(real_log, tmp_path, hostile(), "hostile")
    plain_text, plain, plain_dom = rendered(real_log, tmp_path, benign(), "benign")
    assert re.search(r"<title>report\.md</title>", dom) and "pwned" not in dom.split("</title>")[0]
    assert bad.risky == [] and plain.risky == []
    # every field reached report.md: the hostile strings are in it, as text
    for field in FIELDS[:-1]:  # a session's error is in report.html only: report.md counts errored sessions
        assert field + "&lt;script&gt;document.title='pwned'" in text, field
    assert "errored session" in text and "Stopped or partial logs" in text
    assert bad.tags == plain.tags, (bad.tags - plain.tags, plain.tags - bad.tags)
    assert bad.tags["table"] >= 5 and bad.tags["img"] == plain.tags["img"] == 2  # the plots only
    # what was markup shows as its characters
    assert "chat&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;img src=x onerror=" in dom
    assert "[x](javascript:document.title='pwned-link')| a | b |**b**`c`" in dom.replace("&amp;", "&")
