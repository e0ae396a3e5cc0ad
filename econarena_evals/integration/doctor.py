"""``python -m econarena_evals.integration.doctor``: is the plugin wired into evals, and with what?

Prints the evals version, whether the start-up hook is installed and patched evals' registry,
which EconArena registry evals will read, whether an API key and a base URL are set, and any
error the hook met (it never lets one break start-up, so this is where they show). Exit status 0
when ``oaieval`` will find the EconArena evals, 1 otherwise.
"""
from __future__ import annotations

import os
import site
import sys
from importlib import metadata
from pathlib import Path

from . import startup


def _pth_files() -> list[Path]:
    dirs = list(site.getsitepackages()) + [site.getusersitepackages()]
    paths = [Path(d) / "econarena_evals_registry.pth" for d in dirs]
    return [p for p in paths if p.is_file()]


def report() -> tuple[list[str], bool]:
    lines = [f"python: {sys.executable}"]
    try:
        lines.append(f"evals: {metadata.version('evals')} ({metadata.distribution('evals').locate_file('evals')})")
    except metadata.PackageNotFoundError:
        return lines + ["evals: NOT INSTALLED (pip install --no-deps evals==3.0.1.post1; see README)"], False
    try:
        lines.append(f"econarena-evals: {metadata.version('econarena-evals')}")
    except metadata.PackageNotFoundError:
        lines.append("econarena-evals: not installed as a distribution (running from a checkout)")
    pth = _pth_files()
    lines.append(f"start-up hook: {pth[0] if pth else 'not installed (pip install . or -e . puts it there)'}")
    key = os.environ.get("OPENAI_API_KEY")
    lines.append(f"OPENAI_API_KEY: {'set' if key else 'not set (fine for the built-in econarena/ players)'}")
    lines.append(f"OPENAI_BASE_URL: {os.environ.get('OPENAI_BASE_URL') or 'not set (api.openai.com)'}")

    import evals.registry  # the hook, if installed, runs here

    hook = sys.modules.get("econarena_evals_hook")
    patched = bool(getattr(evals.registry.Registry, "_econarena_patched", False))
    lines.append(f"evals.registry patched by the hook: {'yes' if patched else 'no'}")
    roots = [Path(p) for p in evals.registry.DEFAULT_PATHS]
    ours = [p for p in roots if (p / "evals" / "econarena.yaml").is_file()]
    lines.append(f"EconArena registry on evals' default paths: {ours[0] if ours else 'none'}")
    errors = (list(getattr(hook, "ERRORS", [])) if hook is not None else []) + list(startup.ERRORS)
    lines.append("hook errors: " + ("none" if not errors else ""))
    lines += [f"  {where}: {what}" for where, what in errors]
    ok = bool(ours) and not errors
    if not ours:
        lines.append("oaieval will not find econarena.* evals without --registry_path <checkout>/registry")
    return lines, ok


def main() -> int:
    # `python -m` puts the current folder first on sys.path, so from a checkout this process would
    # see the checkout's package, while `oaieval` (a console script) sees the installed one. Ask in
    # a child that starts as a console script does (-P: no current folder on sys.path).
    if sys.version_info >= (3, 11) and not os.environ.get("_ECONARENA_DOCTOR_CHILD"):
        import subprocess

        env = {**os.environ, "_ECONARENA_DOCTOR_CHILD": "1"}
        return subprocess.run([sys.executable, "-P", "-m", "econarena_evals.integration.doctor"], env=env).returncode
    lines, ok = report()
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
