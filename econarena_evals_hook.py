"""Make stock ``oaieval``/``oaievalset`` find the EconArena registry once the package is installed.

evals 3.0.1.post1 has no plugin discovery. Installing this package (``pip install .`` or
``pip install -e .``) puts ``econarena_evals_registry.pth`` in site-packages; its one line calls
``install()`` at interpreter start-up, which only puts a finder on ``sys.meta_path``: this module
imports nothing at start-up, because every Python start in the venv pays for it. When the
``evals.registry`` module *of the pip-installed evals distribution* is first imported, its loader
hands over to ``econarena_evals.integration.startup``, where everything the plugin changes in evals
is done (a module named ``evals.registry`` from anywhere else is left alone).

This is a top-level module, not part of ``econarena_evals``, so that start-up does not import (and
so pin) the installed package ahead of a source checkout on ``PYTHONPATH``. A failure here never
breaks start-up or the import of evals: it is kept in ``ERRORS`` (and the package's own in
``econarena_evals.integration.startup.ERRORS``), which ``python -m
econarena_evals.integration.doctor`` lists.
"""
import sys

TARGET = "evals.registry"
ERRORS = []  # (where, repr of the exception), for the doctor


def _note(where, exc):
    ERRORS.append((where, f"{type(exc).__name__}: {exc}"))


def _startup():
    """``econarena_evals.integration.startup``, or None (noted) if the package cannot be imported."""
    try:
        from econarena_evals.integration import startup

        return startup
    except Exception as exc:  # noqa: BLE001 - evals must import as without the plugin
        _note("importing econarena_evals.integration", exc)
        return None


def is_installed_evals(origin):
    """True if ``origin`` is the ``evals/registry.py`` of the pip-installed ``evals`` distribution."""
    from importlib import metadata
    from pathlib import Path

    try:
        dist = metadata.distribution("evals")
    except metadata.PackageNotFoundError:
        return False
    try:
        expected = Path(dist.locate_file("evals/registry.py")).resolve()
    except Exception:  # noqa: BLE001 - an odd distribution is simply not ours to patch
        return False
    return origin is not None and Path(origin).resolve() == expected


class _Loader:
    """Wraps evals.registry's own loader: every attribute passes through (``get_code`` for
    ``python -m evals.registry``, ``get_source`` for inspect), ``exec_module`` adds the patch."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        if name == "inner":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        startup = _startup()
        if startup is None:
            self.inner.exec_module(module)
        else:
            startup.load(self.inner.exec_module, module)


class _Finder:
    """A meta-path finder for ``evals.registry`` only; every other import costs one comparison."""

    def find_spec(self, fullname, path, target=None):
        if fullname != TARGET:
            return None
        try:
            from importlib.machinery import PathFinder

            spec = PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None and is_installed_evals(spec.origin):
                spec.loader = _Loader(spec.loader)
            return spec
        except Exception as exc:  # noqa: BLE001 - fall back to the normal import
            _note("finding evals.registry", exc)
            return None


def install():
    try:
        module = sys.modules.get(TARGET)
        if module is not None:
            startup = _startup() if is_installed_evals(getattr(module, "__file__", None)) else None
            if startup is not None:
                startup.patch(module)
        elif not any(isinstance(f, _Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
    except Exception as exc:  # noqa: BLE001 - see module docstring
        _note("install", exc)
