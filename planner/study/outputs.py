"""Write a study's outputs from its cell records: table.csv, summary.md and the PNG plots."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..jsonio import write_atomic
from ..plotting.mpl import MissingMatplotlib
from . import summary, table
from .spec import StudySpec

log = logging.getLogger(__name__)


def write_outputs(spec: StudySpec, out: Path, records: list[dict[str, Any]],
                  runs: list[dict[str, Any]] | None = None, plots: bool = True) -> list[str]:
    """Returns notes for the user (e.g. plots skipped and why)."""
    from .plots import PLOTS
    from .presets import paper_section

    notes: list[str] = []
    write_atomic(out / "table.csv", table.to_csv(table.rows(records)).encode())
    drawn: list[str] = []
    if records and plots:
        for name, fn in PLOTS:
            try:
                if fn(spec, records, out / name) is not False:  # False: the plot does not apply here
                    drawn.append(name)
            except MissingMatplotlib as exc:
                notes.append(f"plots skipped: {exc}")
                break
            except Exception as exc:  # a plot must not cost the table and summary
                log.exception("plot %s failed", name)
                notes.append(f"plot {name} failed: {type(exc).__name__}: {exc}".splitlines()[0])
    extra = paper_section(spec, records) if (spec.preset or "").startswith("coop-paper") else None
    text = summary.render(spec, records, runs, drawn, extra)
    write_atomic(out / "summary.md", text.encode())
    return notes
