"""Studies: grids of (model x ratio x method) cells run in worker processes, resumable,
written cell by cell, then summarised as a table, a markdown summary and plots.

- ``spec``: the study description (``study.json``), ratio ranges, method variants.
- ``cell``: one cell -> one JSON record (pure: load model, budget, solve, validate).
- ``runner``: local worker processes or Ray tasks; each finished cell written atomically.
- ``table`` / ``summary`` / ``plots``: outputs built from the cell records.
- ``presets``: named studies (``coop-paper``: the Coop paper's comparisons).
"""
from .spec import Cell, Grid, StudySpec, parse_methods, parse_ratios  # noqa: F401
