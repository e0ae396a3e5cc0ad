"""What inspect_ai's entry point (``econarena_evals = econarena_evals.on_inspect.entry``) loads:
the ``econarena`` model provider, one task per cell, and ``cell``: any registry's cell by name."""
from __future__ import annotations

from .models import EconArenaModels
from .tasks import TASKS, any_cell

__all__ = ["EconArenaModels", "TASKS", "any_cell"]
