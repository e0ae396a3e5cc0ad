"""Everything that knows evals' internals beyond its public eval and completion-fn API.

``doctor`` checks that the plugin is wired in. The start-up hook (``econarena_evals_hook.py`` at the
top of the repository, installed beside the package) patches evals' registry paths and exit status.

Rule: an evals upgrade touches this folder and nothing else.
"""
