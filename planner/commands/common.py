"""Helpers shared by commands: output, JSON printing, progress on stderr."""
from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    """Exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, default=_default) + "\n")


def _default(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, (set, frozenset, tuple)):
        return list(x)
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def fmt_bytes(n: float | int | None) -> str:
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return str(n)


def add_graph_args(p: Any) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--model", help="zoo model (unet, bert-large, ...) or synthetic spec (chain:64, layered:500:7)")
    g.add_argument("--graph", help="graph JSON file instead of --model")
