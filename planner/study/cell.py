"""One study cell: load the model, set the budget, solve through the registry (which validates
the plan), and flatten the Result into a JSON record. Pure apart from an optional plan file."""
from __future__ import annotations

import logging
import platform
import time
import traceback
from functools import lru_cache
from typing import Any

# imported here, not in run_cell: forked workers then start with them loaded
from .. import validator  # noqa: F401  (registry.solve imports it lazily)
from ..analysis import baseline_cost, baseline_peak, min_feasible_budget
from ..errors import UserError
from ..models import load_model
from ..ratio_of import budget_of
from ..registry import get_method, get_prepare, methods, solve
from .spec import Cell

log = logging.getLogger(__name__)

RECORD_SCHEMA_VERSION = 1
_VERSIONED = ("coop-planner", "numpy", "scipy", "highspy", "ortools", "pulp", "torch")


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """Versions of the packages a result may depend on (metadata only, nothing imported)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "-"
    return out


# Graphs loaded by the parent before it forks workers (see ``warm``): children share them.
_GRAPHS: dict[str, Any] = {}


def warm(models: list[str], method_names: list[str]) -> None:
    """Load graphs, method modules and version metadata once in the parent, so that forked
    workers start with them instead of paying for them in every cell."""
    package_versions()
    for m in dict.fromkeys(method_names):
        get_method(m)
    for name in models:
        if name not in _GRAPHS:
            _GRAPHS[name] = _load(name)


_PREPARED: set[tuple[str, str]] = set()


def prepare(model: str, method: str) -> None:
    """Run ``method``'s per-graph preparation (``MethodInfo.prepare``) on ``model`` once in this
    process: the parent calls it just before forking the first such cell, so the cells of every
    budget inherit it. A failure is left to the cell, which meets it again and records it."""
    if (model, method) in _PREPARED:
        return
    _PREPARED.add((model, method))
    fn = get_prepare(method)
    if fn is None:
        return
    try:
        g = _GRAPHS.get(model) or _load(model)
        _GRAPHS.setdefault(model, g)
        log.info("preparing %s on %s (shared by its cells)", method, model)
        fn(g)
    except Exception as exc:  # noqa: BLE001 - the cell reports it in full
        log.info("preparing %s on %s failed (%s); its cells will say why", method, model, type(exc).__name__)


def _load(name: str):
    from ..graph import Graph
    from .spec import is_graph_file

    return Graph.load(name) if is_graph_file(name) else load_model(name)


def _scalars(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in (d or {}).items() if isinstance(v, (int, float, str, bool)) or v is None}


def run_cell(cell: Cell, keep_plan: bool = False) -> dict[str, Any]:
    """Solve one cell; never raises for a method failure (that becomes status ``error``).

    With ``keep_plan`` the validated plan rides along as ``record['_plan']`` (a dict) for the
    runner to store next to the record."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    rec: dict[str, Any] = {"kind": "study-cell", "schema_version": RECORD_SCHEMA_VERSION, "key": cell.key,
                           **cell.key, "versions": package_versions()}
    try:
        info = methods().get(cell.base_method)
        rec["method_kind"] = info.kind if info else "?"
        g = _GRAPHS.get(cell.model) or _load(cell.model)
        params = cell.params()
        peak = baseline_peak(g, params.alignment)
        budget = budget_of(g, cell.ratio, cell.ratio_of, params.alignment)
        mb = min_feasible_budget(g, params.alignment)
        rec.update(graph_hash=g.hash, n_ops=len(g.ops), n_tensors=len(g.tensors), baseline_peak_bytes=peak,
                   ratio_of=cell.ratio_of, budget_bytes=budget, min_budget_bytes=mb.bytes,
                   baseline_cost=baseline_cost(g))
        if budget < mb.bytes:
            # no plan of any method can exist: recorded as a proven infeasibility, not an error
            rec.update(status="infeasible", message=f"below the minimum feasible budget "
                       f"(ratio {mb.bytes / peak:.4f})", solve_seconds=0.0, backend="analysis")
        else:
            res = solve(g, budget, cell.base_method, params)
            v = res.validation or {}
            has = res.has_plan
            rec.update(
                status=res.status, objective=res.objective if has else None,
                lower_bound=res.lower_bound, gap=res.gap, solve_seconds=res.solve_seconds,
                backend=res.backend, message=res.message,
                overhead=v.get("overhead") if has else None, peak_bytes=v.get("peak_bytes") if has else None,
                peak_address=v.get("peak_address") if has else None,
                frag_eviction=v.get("frag_eviction") if has else None,
                frag_range=v.get("frag_range") if has else None,
                evictions=v.get("evictions") if has else None,
                recomputations=v.get("recomputations") if has else None,
                valid=bool(v.get("valid")) if res.plan is not None else None,
                stats=_scalars(res.stats))
            if keep_plan and has:
                rec["_plan"] = res.plan.to_dict()
    except UserError as exc:
        rec.update(status="error", message=str(exc))
    except Exception as exc:  # a crashing method is a result of the study, not the end of it
        log.exception("cell %s crashed", cell.key)
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        rec.update(status="error", message=f"crash: {last}")
    rec["wall_seconds"] = time.perf_counter() - t0
    # CPU seconds the cell's process got: under a wall-clock time limit, a cell sharing its core
    # reaches less, and this is how a reader sees it
    rec["cpu_seconds"] = time.process_time() - c0
    return rec
