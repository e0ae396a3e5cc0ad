"""Everything that knows evals' internals beyond its public eval and completion-fn API.

The start-up hook (``econarena_evals_hook.py`` at the top of the repository, installed beside the
package by ``pip install .`` and ``pip install -e .`` alike) only finds the moment ``evals.registry``
is imported and hands over to ``startup``, which makes each change from a module of one job:
``registry`` (evals' registry paths), ``completion_fns`` (how ``econarena/...`` fns are made),
``client`` (the key-less import), ``log_file`` (one live run per log), ``http_logs`` (per-request
log lines). The run uses ``recorder`` (the one wrapper on evals' recorder), ``status`` (the exit
status of the ``oaieval`` process, and whether this process is the CLI), ``threads`` and
``progress_bar`` (evals' ``EVALS_THREADS`` and its tqdm bar, around one ``eval_all_samples``).
``doctor`` checks the wiring.

Rule: an evals upgrade touches this folder and nothing else. May import ``core`` and ``fns`` (to
decode completion args); the log, the run and the report build on it, never the reverse.
"""
