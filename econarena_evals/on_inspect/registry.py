"""What inspect_ai's entry point (``econarena_evals = econarena_evals.on_inspect.registry``) loads:
the ``econarena`` model provider and one task per cell."""
from __future__ import annotations

from .models import EconArenaModels
from .tasks import TASKS

__all__ = ["EconArenaModels", "TASKS"]
