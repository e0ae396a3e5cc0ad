"""A roster file a lab can version: the players of a melee, each model on its own endpoint.

evals names a completion fn by its entry in a registry (``completion_fns/*.yaml``), so a roster file is
turned into such entries: ``econarena-roster ROSTER.yaml --registry DIR`` writes
``DIR/completion_fns/roster.yaml``, one ``econarena/chat`` entry per model with its endpoint, its key's
environment variable and its args, and prints the ``oaieval`` roster and ``--registry_path`` that play it.
From there every guarantee of a melee run holds as for completion fns named on the command line
(each model its own lane, pace and breaker; resume; the log's names are the roster's). ``econarena-plan
ROSTER.yaml CELL`` prices each model at its own prices, and so does the run's own plan (each entry
carries its prices as econarena/chat's ``prices`` arg, which is never sent). ::

    players:
      - name: lab/gpt-4o                    # the player's name in the logs and the report
        model: gpt-4o                       # what its requests name
        base_url: https://api.openai.com/v1 # optional: else OPENAI_BASE_URL, else OpenAI's
        api_key_env: OPENAI_API_KEY         # the environment variable that holds its key, never the key
        args: {temperature: 0.7}            # optional completion args (docs/configuration.md)
        prices: {input: 2.5, output: 10}    # optional: per million prompt and completion tokens
      - builtin: econarena/nash             # a built-in player: no endpoint, no key, no cost

The file is read as hostile: bounded in size, parsed by ``yaml.safe_load`` (and ``yaml.compose`` for
line numbers), every field typed and bounded, a bad entry named with its line, in one line.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from .completion_args import prices_arg
from .identity import CHAT_CLASS
from .registry_files import builtin_players

MAX_ROSTER_BYTES = 1024 * 1024  # a roster of a thousand models with their args is well under
MAX_PLAYERS = 1000
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,99}$")  # no comma: oaieval's roster is comma-joined
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
MODEL_KEYS = {"name", "model", "base_url", "api_key_env", "args", "prices"}
# args the entry's own fields set, and the key itself, which a versioned file must never hold
RESERVED_ARGS = {"model", "api_base", "api_key", "api_key_env", "azure_endpoint", "registry", "prices"}
SECRET_WORDS = re.compile(r"(^|_)(key|secret|token|password)$", re.I)


class RosterError(ValueError):
    """A roster file that cannot be played: one line naming the file, the line and the entry."""


@dataclass
class Player:
    name: str  # the completion fn's name, as oaieval takes it
    line: int
    model: Optional[str] = None  # None: a built-in player
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    args: dict[str, Any] = field(default_factory=dict)
    prices: Optional[tuple[float, float]] = None  # (input, output) per million tokens


@dataclass
class Roster:
    path: Path
    players: list[Player]

    def fns(self) -> str:
        """The roster as ``oaieval`` takes it: P1,P2,..."""
        return ",".join(p.name for p in self.players)

    def registry_entries(self) -> dict[str, Any]:
        """Each model as an evals completion fn entry: ``econarena/chat`` with its own endpoint and args."""
        out: dict[str, Any] = {}
        for p in self.players:
            if p.model is None:
                continue
            args: dict[str, Any] = {"model": p.model, **p.args}
            if p.base_url is not None:
                args["api_base"] = p.base_url
            if p.api_key_env is not None:
                args["api_key_env"] = p.api_key_env
            if p.prices is not None:  # for the plan line's cost; econarena/chat sends it nowhere
                args["prices"] = {"input": p.prices[0], "output": p.prices[1]}
            out[p.name] = {"class": CHAT_CLASS, "args": args}
        return out


def _lines(text: str) -> list[int]:
    """The line (from 1) of each entry of ``players``, as the YAML composes it (no object is built)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "players" and isinstance(value, yaml.SequenceNode):
                return [item.start_mark.line + 1 for item in value.value]
    return []


def _player(item: Any, line: int, builtins: set[str]) -> Player:
    at = f"line {line}"
    if not isinstance(item, dict):
        raise RosterError(f"{at}: a player is a mapping (name, model, ... or builtin), got {type(item).__name__}")
    keys = {str(k) for k in item}
    if "builtin" in keys:
        name = item["builtin"]
        if keys != {"builtin"}:
            extra = ", ".join(sorted(keys - {"builtin"}))
            raise RosterError(f"{at}: a built-in player takes nothing but its name ({extra})")
        if not isinstance(name, str) or name not in builtins:
            raise RosterError(f"{at}: no built-in player {str(name)[:100]!r} (econarena/nash, econarena/random, ...)")
        return Player(name, line)
    unknown = keys - MODEL_KEYS
    if unknown:
        hint = " (never the key itself: api_key_env names the variable that holds it)" if unknown & {
            "api_key", "key"} else ""
        raise RosterError(f"{at}: unknown field(s) {', '.join(sorted(unknown))}{hint}; a model takes "
                          f"{', '.join(sorted(MODEL_KEYS))}")
    name, model = item.get("name"), item.get("model")
    if not isinstance(name, str) or not NAME.match(name):
        raise RosterError(f"{at}: name must be 1-100 letters, digits or ._/:@+- (no comma), got {str(name)[:100]!r}")
    at = f"line {line} ({name})"
    if name.startswith("econarena/"):
        raise RosterError(f"{at}: names under econarena/ are this package's; a built-in player is 'builtin: NAME'")
    if not isinstance(model, str) or not 0 < len(model) <= 200 or not model.isprintable():
        raise RosterError(f"{at}: model must be a name of 1-200 printable characters")
    base_url = item.get("base_url")
    if base_url is not None:
        if not isinstance(base_url, str) or len(base_url) > 2000 or not re.match(r"^https?://[^\s/@]+(/\S*)?$",
                                                                                   base_url):
            raise RosterError(f"{at}: base_url must be an http(s) URL without user or password")
        if "?" in base_url:
            raise RosterError(f"{at}: base_url must not hold a query (a key in a URL is a key in the file)")
    key_env = item.get("api_key_env")
    if key_env is not None and (not isinstance(key_env, str) or not ENV_NAME.match(key_env)):
        raise RosterError(f"{at}: api_key_env is the name of an environment variable (LAB_KEY), not a key")
    args = item.get("args") or {}
    if not isinstance(args, dict) or len(args) > 50:
        raise RosterError(f"{at}: args must be a mapping of at most 50 completion args")
    for k, v in args.items():
        if not isinstance(k, str) or not ENV_NAME.match(k) or k in RESERVED_ARGS or SECRET_WORDS.search(k):
            raise RosterError(f"{at}: arg {str(k)[:60]!r} is not allowed here (its own field, or a secret: "
                              "name the key's variable in api_key_env)")
        if not (v is None or isinstance(v, (str, bool, int, float))) or (isinstance(v, str) and len(v) > 10_000):
            raise RosterError(f"{at}: arg {k}: a number, true/false or a text (JSON as text) of at most 10,000 "
                              "characters")
    given = item.get("prices")
    priced: Optional[tuple[float, float]] = None
    if given is not None:
        if not isinstance(given, dict):  # a text would be read as JSON by the arg: here it is no mapping
            raise RosterError(f"{at}: prices are {{input: X, output: Y}} per million tokens")
        try:
            priced = prices_arg(given)
        except ValueError as exc:
            raise RosterError(f"{at}: {exc}") from None
    return Player(name, line, model, base_url, key_env, dict(args), priced)


def load(path: Path) -> Roster:
    """The roster in ``path``, checked; a bad file raises ``RosterError`` with one line."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_ROSTER_BYTES + 1)
    except OSError as exc:
        raise RosterError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_ROSTER_BYTES:
        raise RosterError(f"{path}: larger than {MAX_ROSTER_BYTES // 1024} KiB, no roster")
    try:
        text = raw.decode("utf-8")
        data = yaml.safe_load(text)
    except UnicodeDecodeError:
        raise RosterError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise RosterError(f"{path}: {where}not YAML ({getattr(exc, 'problem', None) or 'cannot be parsed'})") from None
    try:
        if not isinstance(data, dict) or set(map(str, data)) != {"players"}:
            raise RosterError("a roster is a mapping with one key, players: a list of players")
        items = data["players"]
        if not isinstance(items, list) or not 2 <= len(items) <= MAX_PLAYERS:
            raise RosterError(f"players must be a list of 2 to {MAX_PLAYERS} players")
        lines = _lines(text)
        lines = lines if len(lines) == len(items) else [0] * len(items)
        builtins = builtin_players()
        players = [_player(item, line, builtins) for item, line in zip(items, lines)]
        seen: dict[str, int] = {}
        for p in players:
            if p.name in seen:
                raise RosterError(f"line {p.line} ({p.name}): the name is also on line {seen[p.name]}")
            seen[p.name] = p.line
    except RosterError as exc:
        raise RosterError(f"{path}: {exc}") from None
    return Roster(path, players)


def write_registry(roster: Roster, registry: Path) -> Path:
    """``registry/completion_fns/roster.yaml``: the roster's models as evals completion fns."""
    folder = registry / "completion_fns"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "roster.yaml"
    header = f"# written by econarena-roster from {roster.path.name}: edit that file, not this one\n"
    out.write_text(header + yaml.safe_dump(roster.registry_entries(), sort_keys=False, allow_unicode=True),
                   encoding="utf-8")
    return out


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="econarena-roster",
        description="A roster file (YAML) as evals completion fns: writes DIR/completion_fns/roster.yaml and "
                    "prints the oaieval roster that plays it.")
    parser.add_argument("roster", type=Path, help="the roster file (players: ...)")
    parser.add_argument("--registry", type=Path, required=True,
                        help="the registry folder to write (give it to oaieval as --registry_path)")
    args = parser.parse_args(argv)
    try:
        roster = load(args.roster)
    except RosterError as exc:
        print(f"econarena-roster: {exc}", file=sys.stderr)
        return 2
    written = write_registry(roster, args.registry)
    models = sum(p.model is not None for p in roster.players)
    print(f"econarena-roster: {written}: {models} model(s), {len(roster.players) - models} built-in player(s)",
          file=sys.stderr)
    print(f"oaieval {roster.fns()} econarena.<cell>_melee --registry_path {args.registry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
