"""Importers of foreign graph formats into the Graph model, by format name.

Each entry is "module:function" with signature ``(path: str) -> Graph``; modules import lazily.
"""
from __future__ import annotations

import importlib
from typing import Callable

from ..errors import UserError
from ..graph import Graph

FORMATS: dict[str, str] = {
    "dtr-trace": "planner.importers.dtr_trace:load_dtr_trace",
    "checkmate": "planner.importers.checkmate:load_checkmate",
    "moccasin": "planner.importers.moccasin:load_moccasin",
    "minimalloc": "planner.importers.minimalloc:load_minimalloc",
}


def importer(fmt: str) -> Callable[[str], Graph]:
    if fmt not in FORMATS:
        raise UserError(f"unknown import format {fmt!r}; known: {', '.join(FORMATS)}")
    mod, fn = FORMATS[fmt].split(":")
    try:
        return getattr(importlib.import_module(mod), fn)
    except ModuleNotFoundError as exc:
        if exc.name == mod:
            raise UserError(f"import format {fmt!r} is not implemented yet") from None
        raise
