"""The study description: which cells to run and with which limits, saved as ``study.json``.

A study is one or more grids (models x ratios x methods); the cells are their union. A method
entry may carry ablation flags after slashes, parsed onto ``SolveParams``:
``coop/no-sliding-window`` (a bool field off), ``dtr-ideal/union-find`` (a bool field on),
``coop/alloc-policy=best-fit`` (any other field). The time limit, seed and thread count are
study-wide so that every cell of a study is comparable.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from ..fields import FieldError, bool_field, check_keys, dict_field, float_field, get, int_field, list_field, str_field
from ..jsonio import check_schema, dump_json, load_json
from ..params import SolveParams
from ..ratio_of import RATIO_OF

STUDY_SCHEMA_VERSION = 1
# SolveParams fields a method variant may not set: they are study-wide.
_STUDY_WIDE = {"time_limit", "threads", "seed", "verbose"}
_PARAM_FIELDS = {f.name: f for f in dataclasses.fields(SolveParams)}
SPEC_KEYS = ("kind", "schema_version", "name", "grids", "time_limit", "seed", "threads", "wall_limit",
             "save_plans", "preset", "extra", "ratio_of")
GRID_KEYS = ("models", "ratios", "methods")


def parse_ratios(text: str) -> tuple[float, ...]:
    """``0.3:0.9:0.1`` (inclusive range), ``0.3,0.5`` (list) or ``0.5``; each in (0, 1]."""
    text = str(text).strip()
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            lo, hi, step = (float(p) for p in parts)
            if not (step > 0 and hi >= lo) or any(math.isnan(x) for x in (lo, hi, step)):
                raise ValueError
            n = int(math.floor((hi - lo) / step + 1e-9)) + 1
            if n > 1000:
                raise ValueError
            vals = [round(lo + i * step, 6) for i in range(n)]
        else:
            vals = [round(float(p), 6) for p in text.split(",") if p.strip() != ""] if text else []
            if not vals or len(vals) != len(text.split(",")):
                raise ValueError
    except ValueError:
        raise UserError(f"malformed ratios {text!r}: use LO:HI:STEP (e.g. 0.3:0.9:0.1) or a comma list "
                        f"(e.g. 0.3,0.5)") from None
    for r in vals:
        if not 0.0 < r <= 1.0:
            raise UserError(f"ratio {r:g} in {text!r} is outside (0, 1]")
    return tuple(dict.fromkeys(vals))  # keep order, drop repeats


def _split_list(text: str | list | tuple, what: str) -> tuple[str, ...]:
    items = list(text) if isinstance(text, (list, tuple)) else str(text).split(",")
    items = [str(s).strip() for s in items]
    if not items or any(not s for s in items):
        raise UserError(f"malformed {what} list {text!r}: give comma-separated names")
    return tuple(dict.fromkeys(items))


def variant_overrides(method: str) -> tuple[str, dict[str, Any]]:
    """``coop/no-partition`` -> ("coop", {"partition": False}); UserError on an unknown flag."""
    base, *flags = method.split("/")
    over: dict[str, Any] = {}
    for flag in flags:
        if "=" in flag:
            key, val = flag.split("=", 1)
        elif flag.startswith("no-"):
            key, val = flag[3:], False
        else:
            key, val = flag, True
        key = key.replace("-", "_")
        f = _PARAM_FIELDS.get(key)
        if f is None or key in _STUDY_WIDE or not flag:
            raise UserError(f"unknown method flag {flag!r} in {method!r}; flags are SolveParams fields: "
                            f"{', '.join(sorted(k.replace('_', '-') for k in _PARAM_FIELDS if k not in _STUDY_WIDE))}")
        default = f.default
        try:
            if isinstance(default, bool):
                if isinstance(val, str):
                    if val.lower() not in ("true", "false", "1", "0"):
                        raise ValueError
                    val = val.lower() in ("true", "1")
            elif isinstance(default, int):
                val = int(val)
            elif isinstance(default, float):
                val = float(val)
            elif isinstance(val, bool):
                raise ValueError  # `--flag` without a value on a non-bool field
        except ValueError:
            raise UserError(f"bad value for {key} in method {method!r}") from None
        over[key] = val
    return base, over


def parse_methods(text: str | list | tuple) -> tuple[str, ...]:
    """Comma list of method entries; each base name must be registered."""
    from ..registry import methods

    items = _split_list(text, "method")
    known = methods()
    for m in items:
        base, _ = variant_overrides(m)
        if base not in known:
            raise UserError(f"unknown method {base!r}; known methods: {', '.join(sorted(known))}")
    return items


def is_graph_file(name: str) -> bool:
    """A model entry may be a graph file (imported or captured elsewhere) instead of a name."""
    from pathlib import Path

    return name.endswith((".json", ".json.gz")) and Path(name).is_file()


def check_models(names: tuple[str, ...]) -> None:
    """Fail early (one line) on a model name that cannot be loaded, without loading big graphs."""
    from ..models import load_model, profile_path
    from ..synthetic import is_synthetic, synthetic

    for n in names:
        if is_graph_file(n):
            continue
        if n.endswith((".json", ".json.gz")):
            raise UserError(f"graph file not found: {n} (in the study's models)")
        if is_synthetic(n):
            synthetic(n)  # raises UserError on a malformed spec
        elif profile_path(n) is None:
            load_model(n)  # raises the registry's one-line UserError


@dataclass(frozen=True)
class Grid:
    models: tuple[str, ...]    # model names (zoo profiles or synthetic specs)
    ratios: tuple[float, ...]  # memory ratios (budget / baseline peak)
    methods: tuple[str, ...]   # method entries, possibly with ablation flags

    def to_dict(self) -> dict[str, Any]:
        return {"models": list(self.models), "ratios": list(self.ratios), "methods": list(self.methods)}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Grid:
        """Typed: FieldError naming the field (the spec's loader adds the file and grid)."""
        if not isinstance(d, dict):
            raise FieldError(f"must be an object with {', '.join(GRID_KEYS)}")
        check_keys(d, GRID_KEYS, "")
        models = [str_field(m, f"models[{k}]") for k, m in enumerate(list_field(get(d, "models"), "models"))]
        ratios = [float_field(r, f"ratios[{k}]") for k, r in enumerate(list_field(get(d, "ratios"), "ratios"))]
        methods = [str_field(m, f"methods[{k}]") for k, m in enumerate(list_field(get(d, "methods"), "methods"))]
        if not ratios:
            raise FieldError("ratios is empty")
        return Grid(_split_list(models, "model"), tuple(ratios), _split_list(methods, "method"))


@dataclass(frozen=True)
class Cell:
    model: str
    ratio: float
    method: str                # method entry (base name plus flags)
    time_limit: float          # seconds given to the method
    seed: int = 0
    threads: int = 1
    ratio_of: str = "peak"     # what the ratio is a fraction of (planner.ratio_of)

    @property
    def base_method(self) -> str:
        return variant_overrides(self.method)[0]

    def params(self) -> SolveParams:
        _, over = variant_overrides(self.method)
        return SolveParams(time_limit=self.time_limit, threads=self.threads, seed=self.seed, **over)

    @property
    def key(self) -> dict[str, Any]:
        key = {"model": self.model, "ratio": self.ratio, "method": self.method,
               "time_limit": self.time_limit, "seed": self.seed, "threads": self.threads}
        if self.ratio_of != "peak":  # absent for the default: earlier studies keep their cell names
            key["ratio_of"] = self.ratio_of
        return key

    @property
    def file_name(self) -> str:
        """Stable, filesystem-safe name; the hash keeps distinct keys apart after sanitising."""
        h = hashlib.sha1(json.dumps(self.key, sort_keys=True).encode()).hexdigest()[:8]
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{self.model}__{self.ratio:g}__{self.method}")
        return f"{safe}__{h}.json"


@dataclass(frozen=True)
class StudySpec:
    name: str                          # label in summaries
    grids: tuple[Grid, ...]            # the cells are the union of these grids
    time_limit: float = 60.0           # seconds per cell for solvers (heuristics ignore it)
    seed: int = 0
    threads: int = 1                   # solver threads per cell (jobs x threads <= cores)
    wall_limit: float | None = None    # hard wall seconds per cell (kill + timeout); None: 2 x time_limit + 120
    save_plans: bool = False           # also keep each cell's plan (plans/NAME.plan.json.gz)
    preset: str | None = None          # preset name when made from one (adds its paper comparison)
    schema_version: int = STUDY_SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)  # free-form notes (command line, comments)
    ratio_of: str = "peak"             # every ratio is a fraction of this (planner.ratio_of)

    def cells(self) -> list[Cell]:
        seen: dict[tuple, Cell] = {}
        for g in self.grids:
            for m in g.models:
                for r in g.ratios:
                    for meth in g.methods:
                        c = Cell(m, r, meth, self.time_limit, self.seed, self.threads, self.ratio_of)
                        seen.setdefault((m, r, meth), c)
        return list(seen.values())

    def models(self) -> list[str]:
        return list(dict.fromkeys(m for g in self.grids for m in g.models))

    def methods(self) -> list[str]:
        return list(dict.fromkeys(m for g in self.grids for m in g.methods))

    def cell_wall_limit(self) -> float:
        return self.wall_limit if self.wall_limit is not None else 2.0 * self.time_limit + 120.0

    def check(self) -> None:
        """Names exist and values make sense; one-line UserError otherwise."""
        if not self.grids:
            raise UserError("a study needs at least one grid (models, ratios, methods)")
        if not 0 < self.time_limit < math.inf:
            raise UserError(f"time limit must be a positive number of seconds, got {self.time_limit}")
        if self.wall_limit is not None and not 0 < self.wall_limit < math.inf:
            raise UserError(f"wall limit must be a positive number of seconds, got {self.wall_limit}")
        if self.threads < 1:
            raise UserError(f"threads must be >= 1, got {self.threads}")
        if self.ratio_of not in RATIO_OF:
            raise UserError(f"ratio_of must be one of {', '.join(RATIO_OF)}, got {self.ratio_of!r}")
        for g in self.grids:
            check_models(g.models)
            parse_methods(g.methods)
            for r in g.ratios:
                if not 0.0 < r <= 1.0:
                    raise UserError(f"ratio {r:g} is outside (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "study", "schema_version": self.schema_version, "name": self.name,
                "grids": [g.to_dict() for g in self.grids], "time_limit": self.time_limit,
                "seed": self.seed, "threads": self.threads, "wall_limit": self.wall_limit,
                "save_plans": self.save_plans, "preset": self.preset, "extra": self.extra,
                "ratio_of": self.ratio_of}

    def save(self, path: str) -> None:
        dump_json(path, self.to_dict())

    @staticmethod
    def from_dict(d: dict[str, Any], source: str = "") -> StudySpec:
        """Typed load; an unknown key is an error naming it (a typo must not run with a default)."""
        check_schema(d, "study", STUDY_SCHEMA_VERSION, source)
        where = f"malformed study {source}".rstrip()
        try:
            check_keys(d, SPEC_KEYS, "")
            grids = []
            for k, gd in enumerate(list_field(get(d, "grids"), "grids")):
                try:
                    grids.append(Grid.from_dict(gd))
                except FieldError as exc:
                    raise FieldError(f"grid {k}: {exc}") from None
            wall = d.get("wall_limit")
            return StudySpec(
                name=str_field(d.get("name", "study"), "name"), grids=tuple(grids),
                time_limit=float_field(d.get("time_limit", 60.0), "time_limit"),
                seed=int_field(d.get("seed", 0), "seed", 0, 2**32 - 1),
                threads=int_field(d.get("threads", 1), "threads", 1),
                wall_limit=None if wall is None else float_field(wall, "wall_limit"),
                save_plans=bool_field(d.get("save_plans", False), "save_plans"),
                preset=None if d.get("preset") is None else str_field(d["preset"], "preset"),
                extra=dict_field(d.get("extra"), "extra"),
                ratio_of=str_field(d.get("ratio_of", "peak"), "ratio_of"))
        except FieldError as exc:
            raise UserError(f"{where}: {exc}") from None

    @staticmethod
    def load(path: str) -> StudySpec:
        return StudySpec.from_dict(load_json(path, "study file"), str(path))
