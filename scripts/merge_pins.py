"""Write constraints.txt from the venvs the suite passed in, one venv per Python.

    python scripts/merge_pins.py 3.9=.venv-3.9 3.10=.venv-3.10 3.11=.venv 3.12=.venv-3.12 \
        3.13=.venv-3.13 > constraints.txt

Each venv's ``pip freeze`` gives that Python's pins. A package pinned to the same version on every
Python gets one plain line; otherwise each version gets a line with a ``python_version`` marker
for the Pythons it was frozen on, so one file keeps every supported Python's install reproducible.
The newest Python's range is left open at the top; scripts/setup.sh refuses Pythons outside the
supported range before pip sees this file.
"""
import re
import subprocess
import sys

HEADER = """\
# Versions the test suite passed with, per Python (pip install -c constraints.txt ...): a
# python_version marker is on each pin that differs between Pythons. Regenerate with
# scripts/merge_pins.py from one venv per Python after a green run; evals itself is installed
# with --no-deps (see README).
"""


def freeze(venv):
    out = subprocess.run(
        [f"{venv}/bin/python", "-m", "pip", "--disable-pip-version-check", "freeze"],
        check=True, capture_output=True, text=True,
    ).stdout
    pins = {}
    for line in out.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$", line.strip())
        if m and m.group(1).lower().replace("_", "-") != "econarena-evals":
            pins[m.group(1)] = m.group(2)
    return pins


def key(name):
    return name.lower().replace("_", "-").replace(".", "-")


def marker(lo, hi, pythons):
    """python_version marker for pythons[lo..hi] (indices, inclusive) of the sorted list."""
    parts = []
    if lo > 0:
        parts.append(f'python_version >= "{pythons[lo]}"')
    if hi < len(pythons) - 1:
        parts.append(f'python_version < "{pythons[hi + 1]}"')
    if lo == hi and 0 < lo < len(pythons) - 1:
        parts = [f'python_version == "{pythons[lo]}"']
    return " and ".join(parts)


def main(args):
    venvs = dict(a.split("=", 1) for a in args)
    pythons = sorted(venvs, key=lambda v: tuple(int(x) for x in v.split(".")))
    frozen = {py: freeze(venvs[py]) for py in pythons}
    names = {}
    for pins in frozen.values():
        for name in pins:
            names.setdefault(key(name), name)
    lines = [HEADER.rstrip("\n")]
    for k in sorted(names):
        versions = [next((v for n, v in frozen[py].items() if key(n) == k), None) for py in pythons]
        i = 0
        while i < len(pythons):
            j = i
            while j + 1 < len(pythons) and versions[j + 1] == versions[i]:
                j += 1
            if versions[i] is not None:
                m = marker(i, j, pythons)
                lines.append(f"{names[k]}=={versions[i]}" + (f"; {m}" if m else ""))
            i = j + 1
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
