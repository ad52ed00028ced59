"""The one way loaders and importers read a file: every failure a one-line UserError.

Missing file, folder, permission, a truncated or corrupt gzip (``EOFError``, ``zlib.error``),
bytes that are not UTF-8, JSON nested past the parser's recursion limit: each becomes
``UserError("<what> <path>: <reason>")`` so the CLI exits 2 and never shows a traceback.
A file is gzip when its first two bytes say so, whatever its name.
"""
from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

from .errors import UserError

GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path: str | os.PathLike, what: str = "file") -> bytes:
    """The file's bytes, gunzipped when it is gzip."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{what} not found: {p}")
    if p.is_dir():
        raise UserError(f"{what} {p} is a folder, not a file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise UserError(f"{what} {p} is not a readable gzip file ({exc or type(exc).__name__})"
                            .splitlines()[0]) from None
    return raw


def decode(raw: bytes, p: str | os.PathLike, what: str = "file") -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(f"{what} {p}:{line}: not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start})") from None


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """The file as UTF-8 text (gunzipped first when it is gzip)."""
    return decode(read_bytes(path, what), path, what)


def parse_json(text: str | bytes, p: str | os.PathLike, what: str = "file") -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise UserError(f"malformed {what} {p}: JSON nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError of bytes
        raise UserError(f"malformed {what} {p}: {exc}".splitlines()[0]) from None


def read_json(path: str | os.PathLike, what: str = "file") -> Any:
    return parse_json(read_text(path, what), path, what)
