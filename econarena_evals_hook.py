"""Make stock ``oaieval``/``oaievalset`` find the EconArena registry once the package is installed.

evals 3.0.1.post1 has no plugin discovery. ``pip install .`` puts ``econarena_evals_registry.pth``
in site-packages; its one line calls ``install()`` at interpreter start-up, which only puts a
finder on ``sys.meta_path`` (this module imports nothing at start-up: every Python start in the
venv pays for it). When the ``evals.registry`` module *of the pip-installed evals distribution*
is first imported, we

* append this package's registry to ``evals.registry.DEFAULT_PATHS``;
* drop repeats of this plugin's registry (the same directory twice, or our installed copy when the
  user also passes ``--registry_path`` to a checkout's ``registry/``), which evals would otherwise
  reject as ``duplicate entry``; every other root is left exactly as evals handles it;
* let a placeholder ``OPENAI_API_KEY`` stand in during that import only, because evals builds an
  OpenAI client at import time and the built-in players need no key; the client it built is then
  replaced by one made on first use from the environment as it is then, so no request ever
  carries the placeholder (without a key, evals' model-list lookup fails at once, sending nothing);
* look up ``econarena/...`` completion fns in the registry before asking the endpoint's model
  list, so the offline players never wait on a network;
* read ``econarena/chat:MODEL`` as ``econarena/chat`` with ``model=MODEL``, so each player of an
  arena can be a different chat model (``--completion_args`` would give them all the same one);
* refuse a ``--registry_path`` that is not a directory (evals skips it silently);
* hold a lock on the log (``--record_path``) for the life of the process, taken before evals'
  recorder truncates it, so that a second run on a log a live run is writing is refused (exit 2)
  instead of both writing one file (``hold_log``);
* decode completion args whose value is JSON (``response_format={"type":"json_object"}``, or
  ``@file.json``) into objects, note on each fn what the command line told it (for the eval's
  ``econarena_players`` event), and mask secrets in ``sys.argv`` (secret completion args, a URL's
  user, password and query values, every ``extra_headers`` value) before ``oaieval`` copies the
  command line into the log's run spec;
* drop httpx's per-request INFO lines (each prints the request's full URL, a gateway's user,
  password or query key included, and they bury the progress lines) unless ``oaieval --debug``,
  and mask the URLs in whatever httpx still logs.

A failure here never breaks start-up or the import of evals: it is logged at debug level and kept
in ``ERRORS``, which ``python -m econarena_evals.integration.doctor`` lists. This is a top-level module, not
part of ``econarena_evals``, so that start-up does not import (and so pin) the installed package
ahead of a source checkout on ``PYTHONPATH``.
"""
import os
import sys

TARGET = "evals.registry"
PLACEHOLDER_KEY = "econarena-placeholder-key-not-for-openai"
CHAT_NAME = "econarena/chat"
CHAT_PREFIX = CHAT_NAME + ":"  # econarena/chat:MODEL names the model in the completion fn itself
ERRORS = []  # (where, repr of the exception), for the doctor
STATE = {"patched": False, "registry": None, "exit_status": 0, "exit_handler": False}


def _note(where, exc):
    ERRORS.append((where, f"{type(exc).__name__}: {exc}"))
    try:
        import logging

        logging.getLogger("econarena_evals_hook").debug("econarena hook: %s failed", where, exc_info=exc)
    except Exception:  # noqa: BLE001 - reporting must not fail either
        pass


def registry_root():
    """The registry of the ``econarena_evals`` that Python would import: its installed copy
    (``econarena_evals/registry``) or, for a source checkout, the ``registry/`` beside it."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("econarena_evals")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    package = Path(spec.origin).resolve().parent
    for candidate in (package / "registry", package.parent / "registry"):
        if is_econarena_registry(candidate):
            return candidate
    return None


def is_econarena_registry(path):
    from pathlib import Path

    return (Path(path) / "evals" / "econarena.yaml").is_file()


def dedupe_roots(paths, ours):
    """Registry roots with this plugin's registry at most once; other roots untouched.

    Our installed copy gives way to an EconArena registry given explicitly (a checkout's
    ``registry/``); a root that is ours or an EconArena registry appears once. Any other repeated
    root stays repeated, so evals' own ``duplicate entry`` check still sees it.
    """
    from pathlib import Path

    ours_resolved = Path(ours).resolve() if ours is not None else None
    resolved = [(p, Path(p).resolve()) for p in paths]
    plugin = [r == ours_resolved or is_econarena_registry(r) for _, r in resolved]
    explicit = any(is_plugin and r != ours_resolved for (_, r), is_plugin in zip(resolved, plugin))
    out, seen = [], set()
    for (original, real), is_plugin in zip(resolved, plugin):
        if is_plugin:
            if real in seen or (explicit and real == ours_resolved):
                continue
            seen.add(real)
        out.append(original)
    return out


class LazyClient:
    """Stands in for the OpenAI client evals builds at import: the real one is made on first use,
    from the environment as it is then (never from the import-time placeholder key)."""

    def __init__(self, factory):
        self._factory = factory
        self._client = None

    def __getattr__(self, name):
        if self._client is None:
            api_key = os.environ.get("OPENAI_API_KEY")
            if api_key == PLACEHOLDER_KEY:
                api_key = None
            self._client = self._factory(api_key=api_key)  # raises OpenAIError without a key
        return getattr(self._client, name)


def _exit_with_status():
    """The last exit handler of an ``oaieval`` process: apply the status the eval asked for
    (``econarena_evals.run.exit_status``). Registered before evals' recorder registers its flush, so
    it runs after it: the log is complete when the process ends."""
    code = STATE.get("exit_status") or 0
    if code:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream must not keep the status from applying
                pass
        os._exit(code)


def _register_exit_handler():
    # Only in oaieval itself: any other process (pytest running the eval in-process, a notebook)
    # keeps its own exit status.
    if STATE["exit_handler"] or os.path.basename(sys.argv[0] if sys.argv else "") not in ("oaieval", "oaieval.py"):
        return
    import atexit

    atexit.register(_exit_with_status)
    STATE["exit_handler"] = True


class _HttpLogFilter:
    """On httpx's and httpcore's loggers: their per-request lines (``HTTP Request: POST <URL>``, at
    INFO once per request because oaieval puts the root logger at INFO) are dropped unless
    ``oaieval --debug`` put the root logger at DEBUG; any line let through has its URLs masked
    (user, password, query values). Warnings and errors always pass, masked."""

    def filter(self, record):
        import logging

        if record.levelno < logging.WARNING and logging.getLogger().getEffectiveLevel() > logging.DEBUG:
            return False
        try:
            from econarena_evals.core.redact import redact_text

            record.msg = redact_text(record.getMessage())
            record.args = None
        except Exception as exc:  # noqa: BLE001 - a line that cannot be masked is not shown
            _note("masking an httpx log line", exc)
            return False
        return True


# httpx's request lines, and httpcore's (DEBUG) trace lines on the loggers of its modules; openai's
# newer releases use the renamed httpx2 / httpcore2. A filter on a logger sees only that logger's own
# records, so each one is named.
HTTP_LOGGERS = tuple(f"{lib}{v}{part}" for v in ("", "2") for lib, parts in (
    ("httpx", ("",)), ("httpcore", (".connection", ".http11", ".http2", ".proxy", ".socks"))) for part in parts)


class _FlushLogFilter:
    """On evals' recorder: its ``Logged N rows of events to <log>`` line, at INFO once per flush, is
    dropped unless ``oaieval --debug``. The eval writes each answered seat call to disk at once (so
    a kill loses only what is in flight), which made that one line per seat call."""

    def filter(self, record):
        import logging

        return not (record.levelno < logging.WARNING and str(record.msg).startswith("Logged ")
                    and logging.getLogger().getEffectiveLevel() > logging.DEBUG)


def _quiet_http_logs():
    import logging

    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _HttpLogFilter) for f in logger.filters):
            logger.addFilter(_HttpLogFilter())
    recorder = logging.getLogger("evals.record")
    if not any(isinstance(f, _FlushLogFilter) for f in recorder.filters):
        recorder.addFilter(_FlushLogFilter())


HELD_LOGS = {}  # real path of a log -> the descriptor whose lock this process holds on it


class LogInUse(ValueError):
    """The log is being written by another live run."""


def hold_log(path):
    """Take the log's lock (``flock`` on the file itself) for this process's life, or refuse the run
    if another live process holds it. The kernel drops the lock when its holder dies, however it
    dies, so a killed run never blocks the next one. Anything that is not a local file the lock can
    be taken on (a blob URL, a missing directory that cannot be made) is left to evals as before."""
    import fcntl

    path = os.fspath(path)
    if "://" in path:
        return
    real = os.path.realpath(path)
    held = HELD_LOGS.get(real)
    if held is not None:
        try:
            if os.fstat(held).st_ino == os.stat(real).st_ino:
                return  # this process's own earlier run on the path (a notebook, a test)
        except OSError:
            pass
    try:
        os.makedirs(os.path.dirname(real) or ".", exist_ok=True)
        fd = os.open(real, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        from econarena_evals.run.exit_status import refuse

        refuse(LogInUse(f"--record_path {path} is being written by another run that is still going: "
                        "wait for it to end, or give this run another --record_path"))
        return
    except OSError:  # a file system without locks: run as evals always did
        os.close(fd)
        return
    HELD_LOGS[real] = fd


def _lock_record_path():
    """Wrap evals' LocalRecorder.__init__ (which opens the log with "wb", truncating it) so that
    ``hold_log`` runs before the file is touched."""
    import evals.record

    cls = evals.record.LocalRecorder
    if getattr(cls, "_econarena_locked", False):
        return
    init = cls.__init__

    def __init__(self, log_path, *args, **kwargs):
        if log_path is not None:
            hold_log(log_path)
        try:
            init(self, log_path, *args, **kwargs)
        except OSError as exc:  # the log cannot even be created (a full disk): one line, as mid-run
            _log_unwritable(log_path, exc)
            raise

    cls.__init__ = __init__
    cls._econarena_locked = True


def _log_unwritable(path, exc):
    """Under ``oaieval``: the line a log that cannot be written gets mid-run (``disk.describe``), and
    exit status 4, instead of evals' traceback; elsewhere the caller raises the OSError."""
    if os.path.basename(sys.argv[0] if sys.argv else "") not in ("oaieval", "oaieval.py"):
        return
    try:
        from econarena_evals.run.disk import describe

        said = describe(os.fspath(path), exc)
    except Exception as error:  # noqa: BLE001 - the OS error alone says enough
        _note("describing an unwritable log", error)
        said = f"{path}: {exc}"
    sys.stderr.write(f"econarena: stopped: the log cannot be written: {said}\n")
    sys.stderr.flush()
    raise SystemExit(4) from None  # econarena_evals.run.exit_status.STOPPED; no call was made


def patch(module):
    _register_exit_handler()
    try:
        _quiet_http_logs()
    except Exception as exc:  # noqa: BLE001 - see module docstring
        _note("quieting httpx's request lines", exc)
    try:
        _lock_record_path()
    except Exception as exc:  # noqa: BLE001 - see module docstring
        _note("locking the record path", exc)
    ours = registry_root()
    STATE["registry"] = ours
    if ours is not None and ours not in module.DEFAULT_PATHS:
        module.DEFAULT_PATHS.append(ours)
    if hasattr(module, "client") and hasattr(module, "OpenAI") and not isinstance(module.client, LazyClient):
        module.client = LazyClient(module.OpenAI)
    registry_cls = module.Registry
    if getattr(registry_cls, "_econarena_patched", False):
        STATE["patched"] = True
        return
    load = registry_cls._load_registry
    make = registry_cls.make_completion_fn

    def _load_registry(self, registry_paths, resource_type):
        return load(self, dedupe_roots(registry_paths, ours), resource_type)

    def make_completion_fn(self, name, **kwargs):
        try:
            given, fn = _make(self, name, kwargs)
        except ValueError as exc:  # a bad completion arg: one line under oaieval, before any call
            _refuse(ValueError(f"completion fn {name}: {exc}"))
            raise
        except TypeError as exc:  # an arg the fn does not take (evals' gpt-4 and temperature=...)
            if "unexpected keyword argument" not in str(exc):
                raise
            _refuse(ValueError(f"completion fn {name} does not take that completion arg ({exc}); evals' own "
                               "fns take request options as extra_options=@file.json"))
            raise
        try:  # what the command line told this fn, for the eval's econarena_players event
            fn.econarena_completion_args = given
        except Exception:  # noqa: BLE001 - a fn that takes no attributes is described without them
            pass
        return fn

    def _make(self, name, kwargs):
        given = _completion_args(kwargs)
        kwargs = dict(given)
        if name.startswith(CHAT_PREFIX) and CHAT_NAME in self._completion_fns:
            kwargs = {**kwargs, "model": name[len(CHAT_PREFIX):]}
            name = CHAT_NAME
        if name.startswith("econarena/") and name in self._completion_fns:
            spec = self.get_completion_fn(name)
            args = {**(spec.args or {}), **kwargs, "registry": self}
            return given, module.make_object(spec.cls)(**args)
        return given, make(self, name, **kwargs)

    registry_cls._load_registry = _load_registry
    registry_cls.make_completion_fn = make_completion_fn
    _refuse_missing_registry_paths(registry_cls)
    registry_cls._econarena_patched = True
    STATE["patched"] = True


CLI_NAMES = ("oaieval", "oaieval.py", "oaievalset", "oaievalset.py")


def _refuse_missing_registry_paths(registry_cls):
    """A ``--registry_path`` that is not a directory is refused: evals skips it without a word, so a
    typo ran the packaged evals (or none of the user's fns) and exited 0. Under ``oaieval`` and
    ``oaievalset``: one line, exit status 2, before any call; in-process, a ValueError."""
    add = registry_cls.add_registry_paths

    def add_registry_paths(self, paths):
        for path in paths:
            if not os.path.isdir(path):
                why = "no such directory" if not os.path.exists(path) else "not a directory"
                message = f"--registry_path {path}: {why}"
                if os.path.basename(sys.argv[0] if sys.argv else "") not in CLI_NAMES:
                    raise ValueError(message)
                sys.stderr.write(f"econarena: {message}\n")
                sys.stderr.flush()
                raise SystemExit(2)  # econarena_evals.run.exit_status.REFUSED
        return add(self, paths)

    registry_cls.add_registry_paths = add_registry_paths


def _refuse(exc):
    """``exit_status.refuse`` (one line and exit 2 under ``oaieval``); returns when not under it."""
    try:
        from econarena_evals.run import exit_status
    except Exception as error:  # noqa: BLE001 - an unimportable package: the caller raises as evals would
        _note("refusing a completion fn", error)
        return
    if exit_status.under_oaieval():
        exit_status.refuse(exc)


def _completion_args(kwargs):
    """Completion args as they reach a completion fn: JSON objects and arrays (inline, or
    ``@file.json``) decoded; and any secret among them masked in ``sys.argv`` at once, because
    ``oaieval`` writes ``sys.argv`` into the log's run spec right after making the completion fns."""
    try:  # also without completion args: a secret may sit in a URL or another arg
        redact_argv(sys.argv)
    except Exception as exc:  # noqa: BLE001
        _note("masking secrets in sys.argv", exc)
    if not kwargs:
        return {}
    try:
        from econarena_evals.fns import fnsettings
    except Exception as exc:  # noqa: BLE001 - an unimportable package: pass the args on unchanged
        _note("decoding completion args", exc)
        return dict(kwargs)
    return fnsettings.decode_args(kwargs)  # a bad @file.json is the user's error: let it show


def redact_argv(argv):
    """Mask, in place, the value of every secret-looking name in ``--completion_args`` and
    ``--extra_eval_params`` (``api_key=sk-...`` becomes ``api_key=***``), any secret-looking
    word, a URL's user, password and query values, and every ``extra_headers`` value (``redact``).
    The arguments were parsed already; only what is written down afterwards changes."""
    from econarena_evals.core.redact import redact_text

    for i, word in enumerate(argv):
        masked = redact_text(word)
        if masked != word:
            argv[i] = masked


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
        placeholder = "OPENAI_API_KEY" not in os.environ
        if placeholder:
            os.environ["OPENAI_API_KEY"] = PLACEHOLDER_KEY
        try:
            self.inner.exec_module(module)
        finally:
            if placeholder and os.environ.get("OPENAI_API_KEY") == PLACEHOLDER_KEY:
                del os.environ["OPENAI_API_KEY"]
        try:
            patch(module)
        except Exception as exc:  # noqa: BLE001 - see module docstring
            _note("patching evals.registry", exc)


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
            if is_installed_evals(getattr(module, "__file__", None)):
                patch(module)
        elif not any(isinstance(f, _Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
    except Exception as exc:  # noqa: BLE001 - see module docstring
        _note("install", exc)
