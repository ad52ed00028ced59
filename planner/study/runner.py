"""Run a study's cells in parallel workers, each finished cell written atomically as it lands.

Resumable by construction: a cell whose record file exists (with the same key) is skipped, and
records are only ever written whole (``dump_json`` renames a temp file), so interrupting a
study loses at most the cells that were running. Two backends:

- ``local`` (default): one forked process per cell, at most ``jobs`` at a time. A cell that
  outlives its hard wall limit is killed and recorded as ``timeout``; a worker that dies
  (out of memory, segfault in a solver) is recorded as ``error``; the study goes on.
- ``ray``: the same cells as Ray tasks on an existing cluster (``address``) or a local one;
  the planner package must be importable on the workers. Ray is imported only here.

The library reports progress through a callback and ``logging``; drawing a progress bar is
the CLI's business.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..jsonio import dump_json, load_json
from .cell import run_cell
from .folder import _alive, check_folder, claim, holder, note_worker, release
from .spec import Cell, StudySpec

log = logging.getLogger(__name__)

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class Progress:
    total: int            # cells in the study
    done: int             # cells with a record (skipped + finished in this run)
    skipped: int          # cells already on disk when the run started
    running: int          # cells in flight now
    elapsed: float        # seconds since this run started
    eta: float | None     # seconds left, from this run's throughput (None before the first cell)


ProgressFn = Callable[[Progress, dict[str, Any] | None], None]


@dataclass
class StudyRun:
    out_dir: Path
    records: list[dict[str, Any]]          # one per cell of the spec, in spec order
    ran: int                               # cells computed in this run
    skipped: int                           # cells found on disk
    wall_seconds: float                    # this run's wall time
    notes: list[str] = field(default_factory=list)  # e.g. plots skipped and why


def cell_path(out_dir: Path, cell: Cell) -> Path:
    return out_dir / "cells" / cell.file_name


def plan_path(out_dir: Path, cell: Cell) -> Path:
    return out_dir / "plans" / (cell.file_name[: -len(".json")] + ".plan.json.gz")


def log_file(out_dir: Path, cell: Cell) -> Path:
    return out_dir / "logs" / (cell.file_name[: -len(".json")] + ".log")


def load_record(out_dir: Path, cell: Cell) -> dict[str, Any] | None:
    """The cell's record if it is on disk and belongs to this exact cell."""
    p = cell_path(out_dir, cell)
    if not p.is_file():
        return None
    try:
        rec = load_json(p, "cell record")
    except UserError as exc:  # cannot be partial (atomic writes), but may be hand-edited
        log.warning("ignoring unreadable cell record: %s", exc)
        return None
    return rec if isinstance(rec, dict) and rec.get("key") == cell.key else None


def _sweep_temp(out: Path) -> None:
    """Remove temp files of writes a killed worker never finished (never a finished record)."""
    for sub in ("cells", "plans"):
        for t in (out / sub).glob(".*.tmp") if (out / sub).is_dir() else ():
            t.unlink(missing_ok=True)


def run_study(spec: StudySpec, out_dir: str | os.PathLike, jobs: int = 1, backend: str = "local",
              address: str | None = None, progress: ProgressFn | None = None, retry_errors: bool = False,
              outputs: bool = True, plots: bool = True, force: bool = False) -> StudyRun:
    """Run every cell of ``spec`` not yet in ``out_dir``, then write table, summary and plots.

    Everything that can be refused is checked before the folder changes: the spec, the
    backend, every graph, the folder (``folder.check_folder``; another grid needs ``force``)."""
    if backend not in BACKENDS:
        raise UserError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    if jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {jobs}")
    spec.check()
    if backend == "ray":
        _require_ray()
    hashes = _graph_hashes(spec.models())  # a bad graph file fails here, naming the file
    out = Path(out_dir)
    write_spec = check_folder(spec, out, force)
    try:
        (out / "cells").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write to study folder {out}: {exc.strerror or exc}") from None
    if write_spec:
        spec.save(str(out / "study.json"))
    _sweep_temp(out)
    cells = spec.cells()
    todo: list[Cell] = []
    stale = 0
    busy = []
    for c in cells:
        rec = load_record(out, c)
        old = rec is not None and rec.get("graph_hash") not in (None, hashes.get(c.model))
        stale += old
        if rec is None or old or (retry_errors and rec.get("status") == "error"):
            h = holder(out, c)
            if h is not None and h["pid"] != os.getpid() and _alive(h["pid"]):
                busy.append(f"{c.model} {c.ratio:g} {c.method} (process {h['pid']})")
                continue
            todo.append(c)
    if stale:
        log.warning("%d finished cells were made for another version of their graph; running them again", stale)
    skipped = len(cells) - len(todo) - len(busy)
    log.info("study %s: %d cells, %d on disk, %d to run", spec.name, len(cells), skipped, len(todo))
    t0 = time.perf_counter()
    state = {"finished": 0}

    def report(running: int, rec: dict[str, Any] | None) -> None:
        if rec is not None:
            state["finished"] += 1
        el = time.perf_counter() - t0
        left = len(todo) - state["finished"]
        eta = el / state["finished"] * left if state["finished"] else None
        if progress:
            progress(Progress(len(cells), skipped + state["finished"], skipped, running, el, eta), rec)

    report(0, None)
    if todo:
        if backend == "local":
            _run_local(spec, out, todo, jobs, report)
        else:
            _run_ray(spec, out, todo, jobs, address, report)
    wall = time.perf_counter() - t0
    records = [load_record(out, c) for c in cells]
    run = StudyRun(out, [r for r in records if r is not None], len(todo), skipped, wall)
    if busy:
        run.notes.append(f"{len(busy)} cell(s) left to the run that holds them: {'; '.join(busy[:3])}")
    _append_run(out, {"finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "wall_seconds": wall,
                      "ran": len(todo), "skipped": skipped, "jobs": jobs, "backend": backend})
    if outputs:
        from .outputs import write_outputs

        run.notes.extend(write_outputs(spec, out, run.records, runs=load_runs(out), plots=plots))
    return run


def load_runs(out: Path) -> list[dict[str, Any]]:
    """History of runs of this folder (runs.json): wall time and cells computed by each."""
    p = out / "runs.json"
    try:
        runs = load_json(p, "run history") if p.is_file() else []
    except UserError:
        runs = []
    return runs if isinstance(runs, list) else []


def _append_run(out: Path, entry: dict[str, Any]) -> None:
    dump_json(out / "runs.json", [*load_runs(out), entry])


def _graph_hashes(models: list[str]) -> dict[str, str]:
    """Current hash of every model's graph: a record made for another graph is stale. The
    graphs stay cached for the forked workers."""
    from .cell import _GRAPHS, _load

    out = {}
    for m in models:
        if m not in _GRAPHS:
            _GRAPHS[m] = _load(m)
        out[m] = _GRAPHS[m].hash
    return out


def _finish(out: Path, cell: Cell, rec: dict[str, Any]) -> None:
    plan = rec.pop("_plan", None)
    if plan is not None:
        p = plan_path(out, cell)
        dump_json(p, plan)
        rec["plan_path"] = str(p.relative_to(out))
    dump_json(cell_path(out, cell), rec)


def _failure(cell: Cell, status: str, message: str, wall: float) -> dict[str, Any]:
    from .cell import RECORD_SCHEMA_VERSION, package_versions

    return {"kind": "study-cell", "schema_version": RECORD_SCHEMA_VERSION, "key": cell.key, **cell.key,
            "status": status, "message": message, "wall_seconds": wall, "versions": package_versions()}


# ---------------------------------------------------------------- local processes
def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when the study process dies, however it dies
    (SIGKILL included), so no orphan finishes a cell that a rerun also solves."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler (cli: SIGTERM as SIGINT)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the call
        os._exit(1)


def _local_worker(cell: Cell, out: str, keep_plan: bool) -> None:
    _die_with_parent()
    # Solver banners and logs go to the cell's own log file, not over the progress bar.
    log_path = log_file(Path(out), cell)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    rec = run_cell(cell, keep_plan=keep_plan)
    _finish(Path(out), cell, rec)


def _fill(out: Path, pending: list[Cell], running: dict, jobs: int, start, report) -> None:
    """Start cells until ``jobs`` run: each claimed first (its lock file), then ``start(cell)``
    gives the handle ``running`` keys it by."""
    while pending and len(running) < jobs:
        c = pending.pop()
        if not claim(out, c):  # another run took it since the start
            log.warning("cell %s %g %s is being run by another process; left to it", c.model, c.ratio, c.method)
            continue
        running[start(c)] = (c, time.perf_counter())
        report(len(running), None)


def _run_local(spec: StudySpec, out: Path, todo: list[Cell], jobs: int, report) -> None:
    # fork: workers start in milliseconds and inherit the loaded registry; spawn elsewhere
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    forked = ctx.get_start_method() == "fork"
    if forked:
        from .cell import warm

        warm(list(dict.fromkeys(c.model for c in todo)), [c.base_method for c in todo])
    wall_limit = spec.cell_wall_limit()
    pending = list(reversed(todo))
    running: dict[Any, tuple[Cell, float]] = {}
    try:
        def start(c: Cell):
            if forked:
                from .cell import prepare

                prepare(c.model, c.base_method)
            p = ctx.Process(target=_local_worker, args=(c, str(out), spec.save_plans), daemon=True)
            p.start()
            note_worker(out, c, p.pid)
            return p

        while pending or running:
            _fill(out, pending, running, jobs, start, report)
            # wake as soon as a worker exits (its sentinel), or to check the wall limits
            mp_connection.wait([p.sentinel for p in running], timeout=0.5)
            for p in list(running):
                c, started = running[p]
                age = time.perf_counter() - started
                if p.is_alive() and age <= wall_limit:
                    continue
                if p.is_alive():  # past its hard limit: kill it, record a timeout
                    p.kill()
                    p.join()
                    _finish(out, c, _failure(c, "timeout", f"killed after the cell wall limit of {wall_limit:g} s "
                                                           f"(the method did not stop at its time limit)", age))
                else:
                    p.join()
                    if load_record(out, c) is None:
                        _finish(out, c, _failure(c, "error", f"worker exited with code {p.exitcode} "
                                                             f"without a result", age))
                del running[p]
                release(out, c)
                lf = log_file(out, c)
                if lf.is_file() and lf.stat().st_size == 0:
                    lf.unlink()  # keep only logs that say something
                report(len(running), load_record(out, c))
    finally:
        for p, (c, _) in running.items():  # interrupted: stop the workers, keep every finished cell
            p.kill()
            p.join()
            release(out, c)
        if running:
            _sweep_temp(out)


# ---------------------------------------------------------------- ray
def _ray_cell(key: dict[str, Any], keep_plan: bool) -> dict[str, Any]:
    return run_cell(Cell(**key), keep_plan=keep_plan)


def _require_ray():
    try:
        import ray
    except ImportError:
        raise UserError("--backend ray needs the 'ray' package (pip install 'ray>=2.9'); "
                        "the default --backend local needs nothing extra") from None
    return ray


def _run_ray(spec: StudySpec, out: Path, todo: list[Cell], jobs: int, address: str | None, report) -> None:
    ray = _require_ray()
    started_here = False
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        except Exception as exc:  # no cluster at that address, bad address...
            raise UserError(f"cannot connect to Ray at {address or '(local)'}: {exc}".splitlines()[0]) from None
        started_here = True
    remote = ray.remote(num_cpus=spec.threads, max_retries=0)(_ray_cell)
    wall_limit = spec.cell_wall_limit()
    pending = list(reversed(todo))
    running: dict[Any, tuple[Cell, float]] = {}
    try:
        while pending or running:
            _fill(out, pending, running, jobs, lambda c: remote.remote(c.key, spec.save_plans), report)
            ready, _ = ray.wait(list(running), num_returns=1, timeout=0.2)
            for ref in ready:
                c, started = running.pop(ref)
                try:
                    rec = ray.get(ref)
                except Exception as exc:
                    rec = _failure(c, "error", f"ray task failed: {type(exc).__name__}",
                                   time.perf_counter() - started)
                _finish(out, c, rec)
                release(out, c)
                report(len(running), rec)
            for ref in list(running):
                c, started = running[ref]
                age = time.perf_counter() - started
                if age > wall_limit:
                    ray.cancel(ref, force=True)
                    del running[ref]
                    rec = _failure(c, "timeout", f"cancelled after the cell wall limit of {wall_limit:g} s", age)
                    _finish(out, c, rec)
                    release(out, c)
                    report(len(running), rec)
    finally:
        for ref, (c, _) in running.items():
            ray.cancel(ref, force=True)
            release(out, c)
        if started_here:
            ray.shutdown()
