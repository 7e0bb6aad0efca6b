"""Parameter studies: every combination of parameters runs as an independent case.

One code path for local worker processes and a Dask cluster: both are a
``concurrent.futures.Executor`` (``ProcessPoolExecutor`` from the standard library, or
``distributed.Client.get_executor()`` when a scheduler address is given), and each
case is submitted as one task.

Nothing is lost: ``DIR`` is made absolute before anything is handed to a worker (a Dask
worker runs in its own working directory); a case writes its results under
``DIR/cases/<id>/`` as soon as it finishes, then a ``done.json`` record; a case that raises
or diverges is recorded with its status and message; running the same sweep again skips the
cases whose record says they finished and runs the failed ones again (``retry_failed=False``
keeps them).  ``DIR/summary.csv`` lists parameters, status, the case's summary quantities and
wall time of every case.  The quantities are those the case declares in its module-level
``SUMMARY`` (names of scalar entries of its summary.json, each with what it is), and
``peak_displacement`` (the largest |u_i| of the run: of a System run over its flexible bodies;
no entry for a System of rigid bodies only) for a case that returns its `Results`.

Ctrl-C (or SIGTERM in the ``flexmbs`` command) stops a sweep at once: the worker processes
are ended, the cases that were running are recorded as "interrupted" (their ``done.json``),
``summary.csv`` is written with what finished, and `SweepInterrupted` (a KeyboardInterrupt)
carries the rows.  Running the sweep again runs the interrupted cases and those never started.

A crashed worker loses only its own case.  When a local worker process dies,
``concurrent.futures`` marks the whole pool broken and fails every unfinished task,
those of the healthy workers included.  The sweep therefore submits the unfinished
cases again to a fresh pool.  It finds the case that killed its worker from the
``started.json`` marker each case writes when it starts: a case that never started is
simply resubmitted; if only one case had started, it is the one; if several had, each
of them is run again alone in its own one-process pool, so that a second death
points at one case.  Every run of a case during which the pool broke counts as an
attempt; a case is recorded with status "lost" once its worker has died ``1 + retries``
times, the last time with no other case started beside it.  On Dask a task whose worker dies is
rescheduled by the scheduler itself (and ``retries`` re-runs tasks that raise); the
other cases are not affected.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import csv
import hashlib
import importlib.util
import itertools
import json
import logging
import multiprocessing
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from .parameters import parse_parameters

__all__ = ["parameter_grid", "case_id", "sweep", "run_one", "find_case", "FAILED", "MissingExtra",
           "SweepInterrupted"]

log = logging.getLogger(__name__)

#: statuses of a case that a resumed sweep runs again (unless ``retry_failed=False``)
FAILED = ("error", "lost", "failed")
INTERRUPTED = "interrupted"             # a resumed sweep always runs such a case again
STARTED, DONE = "started.json", "done.json"

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
    """Import a case script; its directory goes on sys.path first, as `flexmbs run` does, so that
    its sibling imports (``from _comparison import ...``) work in the workers too."""
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
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


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C (or SIGTERM); ``rows`` are its records, as `sweep` returns them
    (the unfinished cases with status "interrupted"), already written to summary.csv."""

    def __init__(self, rows: list[dict], summary: Path):
        self.rows, self.summary = rows, summary
        super().__init__(f"sweep interrupted; summary {summary}")


def _elastic_displacements(results) -> list[np.ndarray]:
    """The elastic nodal displacements of a run: a System run's flexible bodies' (`BodyResults`
    of kind "flexible", relative to their frames; none for a rigid-only System), else the
    Model's."""
    bodies = getattr(results, "bodies", None)
    if bodies:
        return [np.asarray(b.displacement) for b in bodies.values() if b.kind == "flexible"]
    return [np.asarray(results.displacement)]


def _peak(results) -> dict:
    """``peak_displacement`` (max |u_i| over the nodes, components and outputs of the run; of a
    System run over its flexible bodies, left out for a System without one), status and message
    of a case that returns its `Results` (or a dict of them: the first one; or a tuple that starts
    with it, as the mechanism cases' (Results, model, extras)); {} for a case that returns
    anything else."""
    main = results
    if isinstance(results, dict):
        main = next(iter(results.values()), None)
    elif isinstance(results, tuple) and results:
        main = results[0]
    if not (hasattr(main, "displacement") and hasattr(main, "t")):
        return {}
    record = {"status": getattr(main, "status", "finished"), "message": getattr(main, "message", "")}
    d = [a for a in _elastic_displacements(main) if a.size]
    if getattr(main, "bodies", None) and not d:
        return record                                 # rigid bodies only: no elastic displacement
    record["peak_displacement"] = max(float(np.abs(a).max()) for a in d) if d else float("nan")
    return record


def _scalar(value):
    """A summary entry as a table cell: numbers as floats, None (absent) as nan."""
    if value is None:
        return float("nan")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return float(value) if isinstance(value, (int, float, np.integer, np.floating)) else value


def _entry(summary: dict, name: str):
    """``summary[name]``; "a/b" is ``summary["a"]["b"]`` (a nested summary); None if absent."""
    value = summary
    for key in name.split("/"):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _declared(module, case_dir: Path) -> dict:
    """The summary quantities the case declares (its ``SUMMARY``: names of entries of its
    summary.json, "a/b" for a nested one; nan for one the run did not write), with the status
    and message summary.json gives (a multibody case returns no `Results` that would say them)."""
    path = case_dir / "summary.json"
    summary = json.loads(path.read_text()) if path.is_file() else {}
    record = {k: _scalar(_entry(summary, k)) for k in getattr(module, "SUMMARY", {})}
    if isinstance(summary.get("status"), str):
        record.update(status=summary["status"], message=str(summary.get("message") or ""))
    return record


def _quantity_columns(module, rows: list[dict]) -> list[str]:
    """The summary.csv columns of the quantities: the case's ``SUMMARY`` names, then
    ``peak_displacement`` if a case returned its `Results`."""
    names = list(getattr(module, "SUMMARY", {}))
    return names + (["peak_displacement"] if any("peak_displacement" in r for r in rows) else [])


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
    (case_dir / STARTED).write_text(json.dumps({"pid": os.getpid(), "started": time.time()}))
    tic = time.perf_counter()
    try:
        module = _load(Path(case_path))
        results = module.run(out=case_dir, **params)
        record = {"status": "finished", "message": "", **_declared(module, case_dir), **_peak(results)}
    except KeyboardInterrupt:                    # Ctrl-C reaches the workers too: say so, the sweep stops
        record = {"status": INTERRUPTED, "message": "interrupted (Ctrl-C) while it ran; a new run of the "
                                                    "sweep runs it again"}
    except Exception as exc:                     # a failing case is recorded, the sweep goes on
        record = {"status": "error", "message": f"{type(exc).__name__}: {exc}",
                  "traceback": traceback.format_exc()}
    record.update(id=case_dir.name, parameters=params, wall_s=time.perf_counter() - tic)
    (case_dir / DONE).write_text(json.dumps(record, indent=2, default=str))
    return record


class MissingExtra(ImportError):
    """An option needs a package of one of flexmbs' extras that is not installed (the message says
    which and how to install it)."""


def _require_dask(scheduler: str, given_as: str) -> None:
    """Raise `MissingExtra` if a Dask scheduler is given (``given_as``: how) but dask.distributed is not
    importable: checked before the sweep writes anything."""
    try:
        import distributed  # noqa: F401
    except ImportError as err:
        raise MissingExtra(f"a Dask scheduler is given ({given_as}: {scheduler}) but dask.distributed is not "
                           f'installed ({err}); install it with: pip install "flexmbs[dask]"') from None


def _dask_executor(scheduler: str, retries: int):
    """(executor, client) of a Dask cluster; ``retries`` re-runs a task that raises."""
    from distributed import Client              # importable: `_require_dask` checked it
    client = Client(scheduler)
    return client.get_executor(retries=retries, pure=False), client


def _local_executor(workers: int):
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def _end_workers(ex, before: set) -> None:
    """Interrupted: cancel the queued cases and end the pool's worker processes (the child processes
    that were not there before it) now, instead of waiting for the running cases and those the pool
    has already handed to its workers."""
    ex.shutdown(wait=False, cancel_futures=True)
    workers = [p for p in multiprocessing.active_children() if p not in before]
    for p in workers:
        p.terminate()
    for p in workers:
        p.join(timeout=5.0)


def _lost(cid: str, params: dict, attempts: int, exc: BaseException | None) -> dict:
    why = f"{type(exc).__name__}: {exc}" if exc is not None else "the worker process died"
    return {"id": cid, "parameters": params, "status": "lost", "wall_s": float("nan"),
            "message": f"the worker process running this case died on each of its {attempts} attempt(s) "
                       f"(killed, out of memory, or a crash in compiled code) ({why}); run the case alone "
                       f"(`flexmbs run CASE --set ...`) to see what happens"}


class _LocalRunner:
    """Runs cases in local worker processes and survives the death of a worker (module docstring)."""

    def __init__(self, path: Path, out: Path, workers: int, retries: int, progress, total: int):
        self.path, self.out, self.workers, self.retries = str(path), out, workers, retries
        self.progress, self.total, self.n_done = progress, total, 0
        self.records: dict[str, dict] = {}
        self.attempts: dict[str, int] = {}

    def _dir(self, cid):
        return self.out / "cases" / cid

    def _record(self, cid, record):
        self.records[cid] = record
        self.n_done += 1
        if self.progress:
            self.progress(self.n_done, self.total)

    def _pool(self, jobs: list[tuple[str, dict]], workers: int) -> tuple[list, BaseException | None]:
        """Run ``jobs`` in one fresh pool; (unfinished jobs, the pool's error) when it broke."""
        for cid, _ in jobs:                      # markers of an earlier attempt or run
            for marker in (STARTED, DONE):
                (self._dir(cid) / marker).unlink(missing_ok=True)
        children = set(multiprocessing.active_children())      # ours before the pool: not its workers
        ex = _local_executor(min(workers, len(jobs)))
        broken = None
        try:
            futures = {ex.submit(run_one, self.path, params, str(self._dir(cid))): (cid, params)
                       for cid, params in jobs}
            for fut in cf.as_completed(futures):
                cid, params = futures[fut]
                try:
                    self._record(cid, fut.result())
                except cf.process.BrokenProcessPool as exc:
                    broken = exc
                except Exception as exc:         # e.g. the result could not be sent back: this case only
                    self._record(cid, {"id": cid, "parameters": params, "status": "error",
                                       "message": f"worker failed: {type(exc).__name__}: {exc}",
                                       "wall_s": float("nan")})
        except KeyboardInterrupt:
            _end_workers(ex, children)
            raise
        finally:
            ex.shutdown(wait=True, cancel_futures=True)
        for cid, _ in jobs:                      # finished just before the pool broke: its marker says so
            marker = self._dir(cid) / DONE
            if cid not in self.records and marker.is_file():
                try:
                    self._record(cid, json.loads(marker.read_text()))
                except ValueError:               # cut short while written: run it again
                    pass
        return [job for job in jobs if job[0] not in self.records], broken

    def _charge(self, job, exc) -> list:
        """One more failed attempt of a case whose worker died: back to the queue, or lost."""
        cid, params = job
        self.attempts[cid] = self.attempts.get(cid, 0) + 1
        if self.attempts[cid] > self.retries:
            log.error("case %s: its worker died on each of %d attempts; recorded as lost", cid, self.attempts[cid])
            record = _lost(cid, params, self.attempts[cid], exc)
            self._dir(cid).mkdir(parents=True, exist_ok=True)
            (self._dir(cid) / DONE).write_text(json.dumps(record, indent=2, default=str))
            self._record(cid, record)
            return []
        log.warning("case %s: its worker process died (attempt %d of %d); running it again",
                    cid, self.attempts[cid], 1 + self.retries)
        return [job]

    def run(self, jobs: list[tuple[str, dict]]) -> dict[str, dict]:
        queue = list(jobs)
        while queue:
            unfinished, exc = self._pool(queue, self.workers)
            queue = []
            if not unfinished:
                break
            started = [job for job in unfinished if (self._dir(job[0]) / STARTED).is_file()]
            queue = [job for job in unfinished if job not in started]     # never started: no blame
            log.warning("a worker process died; %d unfinished case(s) go to a fresh pool", len(unfinished))
            if len(started) == 1:                                          # it was the only one running
                queue += self._charge(started[0], exc)
                continue
            for cid, _ in started:                                         # one of them killed it
                self.attempts[cid] = self.attempts.get(cid, 0) + 1
            suspects = started
            while suspects:                                                # each alone: a death names its case
                again = []
                for job in suspects:
                    left, exc_alone = self._pool([job], 1)
                    if left:
                        again += self._charge(job, exc_alone)
                suspects = again
        return self.records


def sweep(case, grid: dict | None = None, listed: list[dict] | None = None, fixed: dict | None = None,
          out="out/sweep", workers: int | None = None, scheduler: str | None = None,
          progress=None, retries: int = 1, retry_failed: bool = True) -> list[dict]:
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
        Output directory: ``cases/<id>/`` per case, ``summary.csv``; a relative path is taken
        from the current directory (and made absolute for the workers).
    workers : int, optional
        Local worker processes (default: the number of CPUs).
    scheduler : str, optional
        Dask scheduler address (``tcp://host:port``); default ``$DASK_SCHEDULER_ADDRESS``.
    progress : callable(done, total), optional
        Default: the count of the innermost `flexmbs.progress` display, if there is one.
    retries : int
        How many times a case whose worker process died is run again before it is recorded as
        "lost" (on Dask: how many times a task that raised is re-run).
    retry_failed : bool
        Run the cases again whose record from an earlier run of this sweep has status
        "error", "lost" or "failed" (`FAILED`); False keeps those records.

    Returns
    -------
    list of dict, one record per parameter set (also for the skipped, finished ones).

    Raises
    ------
    MissingExtra
        (an ImportError) if a scheduler is given (or ``$DASK_SCHEDULER_ADDRESS`` set) and
        dask.distributed is not installed: the message says ``pip install "flexmbs[dask]"``;
        nothing is written.
    SweepInterrupted
        Ctrl-C: the workers are ended, the unfinished cases recorded as "interrupted" and
        summary.csv written (module docstring).

    Notes
    -----
    Local workers are started with the "spawn" method (as Dask's are), which imports the
    calling script again in each worker: a script that calls ``sweep`` must do so under
    ``if __name__ == "__main__":`` (the case scripts and the ``flexmbs`` command do).
    """
    if not (isinstance(retries, (int, np.integer)) and not isinstance(retries, bool) and retries >= 0):
        raise ValueError(f"`retries` must be a non-negative integer, got {retries!r}")
    if workers is not None and not (isinstance(workers, (int, np.integer)) and workers >= 1):
        raise ValueError(f"`workers` must be a positive integer, got {workers!r}")
    if scheduler:
        _require_dask(scheduler, "`scheduler`, --scheduler")
    elif os.environ.get("DASK_SCHEDULER_ADDRESS"):
        _require_dask(os.environ["DASK_SCHEDULER_ADDRESS"], "$DASK_SCHEDULER_ADDRESS")
    path = find_case(case)
    module = _load(path)
    sets = parameter_grid(module.DEFAULTS, grid, listed, fixed, case=path.stem)
    out = Path(out).resolve()                            # the workers' working directory may differ
    (out / "cases").mkdir(parents=True, exist_ok=True)
    records, todo, seen = {}, [], set()
    finished_before, failed_before = [], []
    for params in sets:
        cid = case_id(params)
        if cid in seen:                                  # the same parameter set twice: run once
            continue
        seen.add(cid)
        marker = out / "cases" / cid / DONE
        record = None
        if marker.is_file():
            try:
                record = json.loads(marker.read_text())
            except (OSError, ValueError):                # a marker cut short: run the case again
                record = None
        rerun = record is not None and (record.get("status") == INTERRUPTED
                                        or (record.get("status") in FAILED and retry_failed))
        if record is not None and not rerun:
            records[cid] = record
            (failed_before if record.get("status") in FAILED else finished_before).append(cid)
            log.info("skip %s (%s before)", cid, record.get("status"))
        else:
            if record is not None:
                failed_before.append(cid)
                log.info("run again %s (%s before)", cid, record.get("status"))
            todo.append((cid, params))
    if finished_before or failed_before:
        kept = "kept" if not retry_failed else "run again"
        log.warning("resuming sweep in %s: %d case(s) finished before (skipped), %d failed before (%s)%s",
                    out, len(finished_before), len(failed_before), kept,
                    (": " + ", ".join(failed_before)) if failed_before else "")
    for cid, _ in todo:                                  # the records of an earlier run: these cases run again
        for marker in (STARTED, DONE):
            (out / "cases" / cid / marker).unlink(missing_ok=True)
    interrupted = False
    if todo:
        scheduler = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
        stack = contextlib.ExitStack()
        progress = _counted(stack, progress, path.stem, len(todo))
        runner = None if scheduler else _LocalRunner(path, out, workers or os.cpu_count() or 1, retries, progress,
                                                     len(todo))
        try:
            with stack:
                if scheduler:
                    _run_dask(path, out, todo, scheduler, retries, progress, records)
                else:
                    records.update(runner.run(todo))
        except KeyboardInterrupt:
            interrupted = True
            if runner is not None:
                records.update(runner.records)
            records.update(_interrupted(out, todo, records))
    rows = [records[case_id(p)] for p in sets]
    summary = out / "summary.csv"
    _write_summary(summary, rows, sorted({k for p in sets for k in p}), _quantity_columns(module, rows))
    if interrupted:
        log.warning("sweep interrupted: %d of %d case(s) recorded as interrupted; summary %s (run the sweep "
                    "again to run them)", sum(r["status"] == INTERRUPTED for r in rows), len(rows), summary)
        raise SweepInterrupted(rows, summary)
    return rows


def _counted(stack: contextlib.ExitStack, progress, name: str, total: int):
    """``progress``, or without one the count of the innermost `flexmbs.progress` display (a bar on
    a terminal, a line every few seconds in a log: a study run by a case script, such as
    rotating_bar_study, is not silent), entered on ``stack``; None when there is neither."""
    if progress is not None:
        return progress
    from . import progress as shown
    display = shown.current()
    return None if display is None else stack.enter_context(display.counter(f"sweep {name}", total, "cases"))


def _interrupted(out: Path, todo: list, records: dict) -> dict[str, dict]:
    """The records of the cases of ``todo`` that the sweep had not collected when it was
    interrupted: the done.json of one that finished just before, else status "interrupted" (in
    the done.json of a case that had started)."""
    found = {}
    for cid, params in todo:
        if cid in records:
            continue
        case_dir = out / "cases" / cid
        try:
            found[cid] = json.loads((case_dir / DONE).read_text())
            if found[cid].get("status") != INTERRUPTED:
                continue
        except (OSError, ValueError):                    # none, or cut short by the interrupt
            pass
        started = (case_dir / STARTED).is_file()
        record = {"id": cid, "parameters": params, "status": INTERRUPTED, "wall_s": float("nan"),
                  "message": "the sweep was interrupted while this case ran" if started
                  else "the sweep was interrupted before this case started"}
        if started:
            (case_dir / DONE).write_text(json.dumps(record, indent=2, default=str))
        found[cid] = record
    return found


def _run_dask(path: Path, out: Path, todo: list, scheduler: str, retries: int, progress, records: dict) -> None:
    """The cases on a Dask cluster, their records into ``records`` as they finish: the scheduler
    re-runs a task whose worker died.  Interrupted, the tasks are cancelled and the client closed
    without waiting for them."""
    executor, client = _dask_executor(scheduler, retries)
    futures, stopped = {}, False
    try:
        futures = {executor.submit(run_one, str(path), params, str(out / "cases" / cid)): (cid, params)
                   for cid, params in todo}
        for n, fut in enumerate(cf.as_completed(futures), 1):
            cid, params = futures[fut]
            try:
                records[cid] = fut.result()
            except Exception as exc:                 # the worker itself died (KilledWorker) or similar
                records[cid] = _lost(cid, params, 1 + retries, exc)
                (out / "cases" / cid).mkdir(parents=True, exist_ok=True)
                (out / "cases" / cid / DONE).write_text(json.dumps(records[cid], indent=2, default=str))
            if progress:
                progress(n, len(todo))
    except KeyboardInterrupt:
        stopped = True
        for fut in futures:
            fut.cancel()
        raise
    finally:
        if stopped:
            client.close(timeout=2)             # not the default wait for the cancelled tasks
        else:
            client.close()


def _write_summary(path: Path, rows: list[dict], keys: list[str], quantities: list[str]):
    """summary.csv: id, the parameters ``keys``, status, the summary ``quantities`` (blank for a
    case that has none: failed, lost, interrupted), wall time and the message's first line."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", *keys, "status", *quantities, "wall_s", "message"])
        for r in rows:
            p = r.get("parameters", {})
            w.writerow([r["id"], *[p.get(k, "") for k in keys], r["status"], *[r.get(q, "") for q in quantities],
                        r["wall_s"], r.get("message", "").splitlines()[0] if r.get("message") else ""])
