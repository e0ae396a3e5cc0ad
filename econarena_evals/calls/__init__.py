"""Seat calls to an endpoint: how each call is tried, paced, retried, bounded and stopped.

Rule: imports only ``core``; knows nothing of games, logs or evals. The completion fns (``fns``)
raise its errors and report what a server said; the run (``run``) drives it.
"""
