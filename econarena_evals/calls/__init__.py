"""Seat calls to an endpoint: how each call is tried, paced, retried, bounded and stopped.

Rule: imports only ``core``; knows nothing of games, logs or evals. The completion fns (``fns``)
raise its errors and report what a server said; the run (``run``) drives it.

Inside, from the bottom up: ``limits`` (what headers state) and ``errors`` (what a failed try
means), ``policy``, ``slots`` (the cap, its queue, the workers), ``state`` (``CallState``: the one
owner of a run's call state, made by the run and handed down; none is process-wide), ``seat_call``
(a call as a value), ``pace`` (pacing to the limits a server states) and ``concurrency`` (the calls
in flight it serves), ``lanes`` (one of each per endpoint, key and model), ``retry`` (the retry
loop), ``dispatch`` (``call_all``, and the players' breakers it fails waiting calls by).
"""
