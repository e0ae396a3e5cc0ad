"""Where the completion fns' settings were before they were split (issue 27): ``completion_args``
(decoding what the command line gave) and ``identity`` (who played).

Kept only for the two importers that other branches are rewriting at this moment, the start-up hook
(``decode_args``) and ``report/build.py`` (``is_builtin``, ``show_value``): remove this module when
they import from the new homes.
"""
from __future__ import annotations

from .completion_args import decode_args
from .identity import is_builtin, show_value

__all__ = ["decode_args", "is_builtin", "show_value"]
