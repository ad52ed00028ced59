"""minimalloc's CSV format (``docs/alloc.md``): ``id,lower,upper,size[,alignment]``, one buffer a
line, half-open lifespans; a solution adds an ``offset`` column.

Columns are found by their header name (any order, surrounding spaces ignored); any problem
becomes a one-line ``UserError`` naming the file and line, so the CLI exits 2 without a
traceback. Writing goes through ``planner.jsonio.write_atomic`` (nothing half-written).
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from planner.errors import UserError

from .problem import Buffer

REQUIRED = ("id", "lower", "upper", "size")
OPTIONAL = ("alignment", "offset")


def parse_csv(text: str, source: str = "<csv>") -> tuple[list[Buffer], dict[str, int] | None]:
    """(buffers, offsets or None when the file has no offset column)."""
    rows = list(csv.reader(io.StringIO(text)))
    # Skip blank lines but keep their numbers for messages.
    numbered = [(i + 1, r) for i, r in enumerate(rows) if any(c.strip() for c in r)]
    if not numbered:
        raise UserError(f"{source}: empty file (expected a header {','.join(REQUIRED)})")
    hline, header = numbered[0]
    names = [h.strip().lower() for h in header]
    for col in names:
        if col not in REQUIRED + OPTIONAL:
            raise UserError(f"{source} line {hline}: unknown column {col!r} "
                            f"(expected {','.join(REQUIRED)}[,alignment][,offset])")
    if len(set(names)) != len(names):
        raise UserError(f"{source} line {hline}: a column appears twice in the header")
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise UserError(f"{source} line {hline}: header lacks column(s) {', '.join(missing)}")
    col = {c: names.index(c) for c in names}
    buffers: list[Buffer] = []
    offsets: dict[str, int] | None = {} if "offset" in col else None
    seen: dict[str, int] = {}
    for line, r in numbered[1:]:
        if len(r) != len(names):
            raise UserError(f"{source} line {line}: {len(r)} fields, the header has {len(names)}")
        bid = r[col["id"]].strip()
        if not bid:
            raise UserError(f"{source} line {line}: empty id")
        if bid in seen:
            raise UserError(f"{source} line {line}: id {bid!r} already used on line {seen[bid]}")
        seen[bid] = line
        lower = _int(r[col["lower"]], "lower", source, line)
        upper = _int(r[col["upper"]], "upper", source, line)
        size = _int(r[col["size"]], "size", source, line)
        align = _int(r[col["alignment"]], "alignment", source, line) if "alignment" in col else 1
        if upper <= lower:
            raise UserError(f"{source} line {line}: buffer {bid!r} has upper {upper} <= lower {lower} "
                            f"(lifespans are half-open [lower, upper))")
        if size < 0:
            raise UserError(f"{source} line {line}: buffer {bid!r} has negative size {size}")
        if align < 1:
            raise UserError(f"{source} line {line}: buffer {bid!r} has alignment {align} (must be >= 1)")
        buffers.append(Buffer(bid, lower, upper, size, align))
        if offsets is not None:
            offsets[bid] = _int(r[col["offset"]], "offset", source, line)
    return buffers, offsets


def _int(field: str, what: str, source: str, line: int) -> int:
    try:
        return int(field.strip())
    except ValueError:
        raise UserError(f"{source} line {line}: {what} {field.strip()!r} is not an integer") from None


def read_csv(path: str | os.PathLike) -> tuple[list[Buffer], dict[str, int] | None]:
    p = Path(path)
    if not p.is_file():
        raise UserError(f"CSV file not found: {p}")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {p}: {exc}".splitlines()[0]) from None
    return parse_csv(text, str(p))


def format_csv(buffers: list[Buffer], offsets: dict[str, int] | None = None) -> str:
    """The problem (and the solution, when ``offsets`` is given) as minimalloc CSV text.
    The alignment column is written only when some buffer needs it."""
    with_align = any(b.alignment != 1 for b in buffers)
    cols = list(REQUIRED) + (["alignment"] if with_align else []) + (["offset"] if offsets is not None else [])
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for b in buffers:
        row = [b.id, b.lower, b.upper, b.size] + ([b.alignment] if with_align else [])
        if offsets is not None:
            row.append(offsets[b.id])
        w.writerow(row)
    return out.getvalue()


def write_csv(path: str | os.PathLike, buffers: list[Buffer], offsets: dict[str, int] | None = None) -> None:
    from planner.jsonio import write_atomic
    write_atomic(path, format_csv(buffers, offsets).encode())
