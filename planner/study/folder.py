"""A study folder's guards: checked before anything in it changes, and one claim per cell.

- ``check_folder``: the folder can be written (probed in its nearest existing ancestor, so a
  refused run creates nothing) and an existing ``study.json`` describes the same cells;
  another grid needs ``force`` (its finished cells stay on disk, the table follows the new
  spec). ``study.json`` is written only when absent or forced: the file a ``--spec`` run
  read is never rewritten.
- ``claim``/``release``: a cell is run by the process that created its lock file
  (``cells/NAME.lock``, O_EXCL). A lock whose process is gone (killed study) is stale and
  taken over; one held by a live process is left alone, so two runs in one folder never
  solve the same cell and a rerun completes each cell exactly once.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..errors import UserError
from .spec import Cell, StudySpec


def _probe(out: Path) -> None:
    anc = out
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise UserError(f"cannot write to study folder {out}: {anc} is not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".coop-write-test.", dir=anc)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"cannot write to study folder {out}: {exc.strerror or exc}") from None


def check_folder(spec: StudySpec, out: Path, force: bool = False) -> bool:
    """Raise UserError when the run must not touch ``out``; True when study.json is to be written."""
    _probe(out)
    existing = out / "study.json"
    if not existing.is_file():
        return True
    try:
        old = StudySpec.load(str(existing))
        same = {json.dumps(c.key, sort_keys=True) for c in old.cells()} == \
               {json.dumps(c.key, sort_keys=True) for c in spec.cells()}
        why = "another grid (models, ratios, methods or limits)"
    except UserError as exc:
        same, why = False, f"an unreadable study.json ({exc})"
    if same:
        return False
    if not force:
        raise UserError(f"study folder {out} holds {why}; use another --out, or --force to run this grid "
                        f"there (its study.json is replaced, finished cells are kept)")
    return True


def lock_path(out: Path, cell: Cell) -> Path:
    return out / "cells" / (cell.file_name[: -len(".json")] + ".lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (killed, not yet reaped) is gone for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def holder(out: Path, cell: Cell) -> dict | None:
    """The lock's content ({"pid", "worker"}) or None when unlocked or unreadable."""
    try:
        d = json.loads(lock_path(out, cell).read_text())
        return d if isinstance(d, dict) and isinstance(d.get("pid"), int) else None
    except (OSError, ValueError):
        return None


def claim(out: Path, cell: Cell, worker: int | None = None) -> bool:
    """Create the cell's lock for this process; False when a live process holds it."""
    p = lock_path(out, cell)
    for _ in range(2):
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            h = holder(out, cell)
            if h is not None and h["pid"] != os.getpid() and _alive(h["pid"]):
                return False
            p.unlink(missing_ok=True)  # stale: its study was killed
            continue
        with os.fdopen(fd, "w") as f:
            json.dump({"pid": os.getpid(), "worker": worker}, f)
        return True
    return False


def note_worker(out: Path, cell: Cell, worker: int) -> None:
    """Record the worker's pid in the lock (what a person or a test checks after a kill)."""
    from ..jsonio import write_atomic

    write_atomic(lock_path(out, cell), json.dumps({"pid": os.getpid(), "worker": worker}).encode())


def release(out: Path, cell: Cell) -> None:
    h = holder(out, cell)
    if h is None or h["pid"] == os.getpid():
        lock_path(out, cell).unlink(missing_ok=True)
