"""Atomic JSON files with a schema version; plain and gzip-compressed."""
from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import UserError


def _file_mode(path: Path) -> int:
    """Mode a written file gets: the replaced file's own, else what ``open`` would give under
    the umask (mkstemp's temp files are 0600, which a rename would otherwise keep)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes to ``path`` through a temp file in the same folder and a rename,
    so an interrupted or failed write never leaves a partial file behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def dump_json(path: str | os.PathLike, obj: Any) -> None:
    """Save ``obj`` as JSON (gzip when the name ends in .gz), atomically."""
    text = json.dumps(obj, separators=(",", ":"), sort_keys=False).encode()
    if str(path).endswith(".gz"):
        text = gzip.compress(text, compresslevel=6, mtime=0)
    write_atomic(path, text)


def load_json(path: str | os.PathLike, what: str = "file") -> Any:
    """Read a JSON (or .json.gz) file; any I/O, gzip, decoding or parse problem becomes a
    one-line UserError (``planner.reading``)."""
    from .reading import read_json

    return read_json(path, what)


def check_schema(obj: Any, kind: str, version: int, path: str = "") -> None:
    """Reject a document of another kind or a newer schema with a clear message."""
    where = f" {path}" if path else ""
    if not isinstance(obj, dict):
        raise UserError(f"malformed {kind}{where}: expected a JSON object")
    if obj.get("kind") != kind:
        raise UserError(f"malformed {kind}{where}: 'kind' is {obj.get('kind')!r}, expected {kind!r}")
    v = obj.get("schema_version")
    if v != version:
        raise UserError(f"unsupported {kind} schema_version {v!r}{where} (this version reads {version})")
