"""The one check of an output path, made before a command does its work.

A solve of minutes must not end in ``IsADirectoryError`` with nothing printed, nor replace the
file it read. ``check_out_path`` rejects, with one line: a folder, a path under a file, a
folder that cannot be written (probed with a temp file, as root ignores permission bits), a
non-regular file, a path equal to one of the command's inputs, and a suffix the writer cannot
produce.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import UserError


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_out_path(path: str, inputs: Iterable[str | None] = (), suffixes: tuple[str, ...] = (),
                   option: str = "--out", example: str = "") -> Path:
    """``path`` as a Path when a file can be written there; UserError (exit 2) otherwise."""
    if not str(path).strip():
        raise UserError(f"{option} is empty; give a file path")
    p = Path(path)
    if p.is_dir():
        name = example or "out" + (suffixes[0] if suffixes else "")
        raise UserError(f"{option} {path} is a folder; give a file path (e.g. {p / name})")
    if p.exists() and not p.is_file():
        raise UserError(f"{option} {path} exists and is not a regular file")
    if suffixes and not any(p.name.endswith(s) and len(p.name) > len(s) for s in suffixes):
        raise UserError(f"{option} {path} must end in {' or '.join(suffixes)}")
    for src in inputs:
        if src and _same(p, Path(src)):
            raise UserError(f"{option} {path} is also an input of this command; write to another file")
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise UserError(f"{option} {path}: {anc} is not a folder")
    try:  # the writer makes a temp file in the same folder and renames it: probe exactly that
        fd, probe = tempfile.mkstemp(prefix=".coop-write-test.", dir=anc)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"{option} {path}: cannot write in {anc}: {exc.strerror or exc}") from None
    return p


def try_write(write, path: str) -> str | None:
    """Run ``write()``; None on success, else the one-line reason. A command calls it after
    the work and prints its result either way, so a late failure never hides the result."""
    try:
        write()
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    return None


def report_write_error(error: str | None) -> int | None:
    """Exit code 2 (with the reason on stderr) when the write failed, else None."""
    if error is None:
        return None
    import sys

    print(f"error: {error} (the result above was not saved)", file=sys.stderr)
    return 2
