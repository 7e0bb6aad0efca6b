"""Parameter studies: every combination of parameters runs as an independent case.

One code path for local worker processes and a Dask cluster: both are a
``concurrent.futures.Executor`` (``ProcessPoolExecutor`` from the standard library, or
``distributed.Client.get_executor()`` when a scheduler address is given), and each
case is submitted as one task.

Nothing is lost: a case writes its results under ``DIR/cases/<id>/`` as soon as it
finishes, then a ``done.json`` marker; a crashed worker loses only its own case; a
case that raises or diverges is recorded with its status and message; running the
same sweep again skips the cases whose marker is there.  ``DIR/summary.csv`` lists
parameters, status, peak values and wall time of every case.
"""
from __future__ import annotations

import concurrent.futures as cf
import csv
import hashlib
import importlib.util
import itertools
import json
import logging
import os
import time
import traceback
from pathlib import Path

import numpy as np

from .parameters import parse_parameters

__all__ = ["parameter_grid", "case_id", "sweep", "run_one", "find_case"]

log = logging.getLogger(__name__)

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def find_case(case) -> Path:
    """Path of a case script: a path to a .py file, or a name looked up in ./cases/."""
    path = Path(case)
    if path.suffix != ".py":
        path = Path("cases") / f"{case}.py"
    if not path.is_file():
        available = sorted(p.stem for p in Path("cases").glob("*.py")) if Path("cases").is_dir() else []
        raise ValueError(f"no case {str(case)!r} (looked for {path}); available in ./cases: {available}")
    return path.resolve()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"flexmbs_case_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "DEFAULTS") or not hasattr(module, "run"):
        raise ValueError(f"{path} is not a flexmbs case (it needs DEFAULTS and run(out=None, **params))")
    return module


def parameter_grid(defaults: dict, grid: dict | None = None, listed: list[dict] | None = None,
                   fixed: dict | None = None, case: str = "case") -> list[dict]:
    """The parameter sets of a sweep: the cartesian product of ``grid`` and/or the rows of
    ``listed``, each completed by ``fixed``; values (text or numbers) are parsed to the types
    of ``defaults`` (``flexmbs.parameters``).

    Raises
    ------
    ParameterError (a ValueError)
        An unknown key or a value of the wrong type; the message lists the valid keys.
    """
    grid, listed, fixed = dict(grid or {}), list(listed or []), dict(fixed or {})
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())] if grid else []
    rows = combos + listed
    if not rows:
        rows = [{}]
    return [parse_parameters(case, defaults, {**fixed, **row}) for row in rows]


def case_id(params: dict) -> str:
    """Readable, stable identifier of a parameter set (keys sorted, a short hash appended)."""
    text = json.dumps(params, sort_keys=True, default=str)
    slug = "_".join(f"{k}={params[k]}" for k in sorted(params))
    slug = "".join(c if c.isalnum() or c in "=._-" else "-" for c in slug)[:80] or "default"
    return f"{slug}_{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def _peak(results) -> dict:
    main = results
    if isinstance(results, dict):
        main = next(iter(results.values())) if results else None
    if main is None or not hasattr(main, "displacement") or len(main.t) == 0:
        return {"peak_displacement": float("nan"), "status": "finished", "message": ""}
    d = np.asarray(main.displacement)
    return {"peak_displacement": float(np.abs(d).max()), "status": getattr(main, "status", "finished"),
            "message": getattr(main, "message", "")}


def run_one(case_path: str, params: dict, case_dir: str) -> dict:
    """Run one case in this process and record it; never raises (the failure is the record)."""
    for var in _THREAD_VARS:                     # one BLAS thread per worker
        os.environ.setdefault(var, "1")
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:                          # optional: env variables cover fresh processes
        pass
    case_dir = Path(case_dir)
    case_dir.mkdir(parents=True, exist_ok=True)
    tic = time.perf_counter()
    try:
        module = _load(Path(case_path))
        results = module.run(out=case_dir, **params)
        record = _peak(results)
    except Exception as exc:                     # a failing case is recorded, the sweep goes on
        record = {"peak_displacement": float("nan"), "status": "error",
                  "message": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    record.update(id=case_dir.name, parameters=params, wall_s=time.perf_counter() - tic)
    (case_dir / "done.json").write_text(json.dumps(record, indent=2, default=str))
    return record


def _executor(workers: int | None, scheduler: str | None):
    """(executor, closer): Dask when a scheduler address is given, else local processes."""
    scheduler = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError("a Dask scheduler was given but dask.distributed is not installed: "
                               "pip install 'flexmbs[dask]'") from None
        client = Client(scheduler)
        return client.get_executor(), client.close
    import multiprocessing
    ex = cf.ProcessPoolExecutor(max_workers=workers or os.cpu_count(),
                                mp_context=multiprocessing.get_context("spawn"))
    return ex, lambda: ex.shutdown(wait=True)


def sweep(case, grid: dict | None = None, listed: list[dict] | None = None, fixed: dict | None = None,
          out="out/sweep", workers: int | None = None, scheduler: str | None = None,
          progress=None) -> list[dict]:
    """Run every parameter set of a case and write ``out/summary.csv``.

    Parameters
    ----------
    case : str or Path
        A case name in ./cases or the path of a case script.
    grid : dict[str, list]
        Values per parameter; their cartesian product is run.
    listed : list of dict
        Explicit parameter sets (e.g. the rows of a CSV file), run in addition to the grid.
    fixed : dict
        Parameters set for every case.
    out : path
        Output directory: ``cases/<id>/`` per case, ``summary.csv``.
    workers : int, optional
        Local worker processes (default: the number of CPUs).
    scheduler : str, optional
        Dask scheduler address (``tcp://host:port``); default ``$DASK_SCHEDULER_ADDRESS``.
    progress : callable(done, total), optional

    Returns
    -------
    list of dict, one record per parameter set (also for the skipped, finished ones).

    Notes
    -----
    Local workers are started with the "spawn" method (as Dask's are), which imports the
    calling script again in each worker: a script that calls ``sweep`` must do so under
    ``if __name__ == "__main__":`` (the case scripts and the ``flexmbs`` command do).
    """
    path = find_case(case)
    module = _load(path)
    sets = parameter_grid(module.DEFAULTS, grid, listed, fixed, case=path.stem)
    out = Path(out)
    (out / "cases").mkdir(parents=True, exist_ok=True)
    records, todo, seen = {}, [], set()
    for params in sets:
        cid = case_id(params)
        if cid in seen:                                  # the same parameter set twice: run once
            continue
        seen.add(cid)
        marker = out / "cases" / cid / "done.json"
        if marker.is_file():
            records[cid] = json.loads(marker.read_text())
            log.info("skip %s (finished before)", cid)
        else:
            todo.append((cid, params))
    if todo:
        executor, close = _executor(workers, scheduler)
        try:
            futures = {executor.submit(run_one, str(path), params, str(out / "cases" / cid)): cid
                       for cid, params in todo}
            for n, fut in enumerate(cf.as_completed(futures), 1):
                cid = futures[fut]
                try:
                    records[cid] = fut.result()
                except Exception as exc:                 # the worker itself died
                    records[cid] = {"id": cid, "parameters": dict(todo)[cid], "status": "error",
                                    "message": f"worker failed: {type(exc).__name__}: {exc}",
                                    "peak_displacement": float("nan"), "wall_s": float("nan")}
                if progress:
                    progress(n, len(todo))
        finally:
            close()
    rows = [records[case_id(p)] for p in sets]
    _write_summary(out / "summary.csv", rows, sorted({k for p in sets for k in p}))
    return rows


def _write_summary(path: Path, rows: list[dict], keys: list[str]):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", *keys, "status", "peak_displacement", "wall_s", "message"])
        for r in rows:
            p = r.get("parameters", {})
            w.writerow([r["id"], *[p.get(k, "") for k in keys], r["status"], r["peak_displacement"],
                        r["wall_s"], r.get("message", "").splitlines()[0] if r.get("message") else ""])
