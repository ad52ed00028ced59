"""Typed reading of JSON fields, and the stated limits on sizes: what every loader (graph, plan,
study spec, importers) checks before it builds anything.

JSON is loose where Python's conversions are looser still: ``int(100.7)`` truncates,
``int(True)`` is 1 and ``bool("false")`` is True. These readers accept exactly the JSON type
the format has and raise ``FieldError`` naming the field otherwise; each loader adds its file
and record to the message.

Sizes (bytes, offsets, budgets, capacities, sums of sizes) are at most ``MAX_BYTES`` = 2^53:
every such number and every sum of them is then exact in a float64 and far from int64
overflow, where numpy and numba keep them. That is 8 PiB, beyond any device.
"""
from __future__ import annotations

import math
from typing import Any

MAX_BYTES = 2**53


class FieldError(ValueError):
    """A field of the wrong type or out of range; the message names the field."""


def _got(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def int_field(v: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise FieldError(f"{name} must be an integer, got {_got(v)}")
    if lo is not None and v < lo:
        raise FieldError(f"{name} must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise FieldError(f"{name} must be <= {hi}, got {v}")
    return v


def opt_int_field(v: Any, name: str, lo: int | None = None) -> int | None:
    return None if v is None else int_field(v, name, lo)


def bytes_field(v: Any, name: str) -> int:
    """A size or offset in bytes: an integer in [0, MAX_BYTES]."""
    return int_field(v, name, 0, MAX_BYTES)


def float_field(v: Any, name: str, lo: float | None = None) -> float:
    """A finite number (JSON int or float; not a bool, not Infinity or NaN)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FieldError(f"{name} must be a number, got {_got(v)}")
    try:
        f = float(v)
    except OverflowError:
        raise FieldError(f"{name} is too large: {_got(v)}") from None
    if not math.isfinite(f):
        raise FieldError(f"{name} must be finite, got {_got(v)}")
    if lo is not None and f < lo:
        raise FieldError(f"{name} must be >= {lo:g}, got {f:g}")
    return f


def bool_field(v: Any, name: str) -> bool:
    if not isinstance(v, bool):
        raise FieldError(f"{name} must be true or false, got {_got(v)}")
    return v


def str_field(v: Any, name: str) -> str:
    if not isinstance(v, str):
        raise FieldError(f"{name} must be a string, got {_got(v)}")
    return v


def list_field(v: Any, name: str, length: int | None = None) -> list:
    if not isinstance(v, list):
        raise FieldError(f"{name} must be a list, got {_got(v)}")
    if length is not None and len(v) != length:
        raise FieldError(f"{name} must have {length} entries, has {len(v)}")
    return v


def dict_field(v: Any, name: str) -> dict:
    """A JSON object; null reads as an empty one."""
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise FieldError(f"{name} must be an object, got {_got(v)}")
    return dict(v)


def get(d: dict, key: str, where: str = "") -> Any:
    """``d[key]`` or a FieldError naming the missing field."""
    if key not in d:
        raise FieldError(f"{where}missing field {key!r}")
    return d[key]


def check_keys(d: dict, allowed: tuple[str, ...], where: str) -> None:
    """Unknown keys are an error (a typo must not silently fall back to a default)."""
    extra = [k for k in d if k not in allowed]
    if extra:
        raise FieldError(f"{where}unknown field {extra[0]!r}; allowed: {', '.join(allowed)}")
