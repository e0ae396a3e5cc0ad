"""A verifiers run of the verifiers front end (its ``traces.jsonl``), read as the rows of an evals log."""
from __future__ import annotations

# What the front end (``on_verifiers.plugin``) stores on each seat's trace, under ``trace.info``:
INFO_KEY = "econarena"
SPEC_KEY = "spec"
