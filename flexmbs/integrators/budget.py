"""The size of a run, estimated before it starts: steps, outputs, memory and disk.

Every run passes through `flexmbs.integrators.simulate`, which calls `check_run_size` before
the first step (and `flexmbs.run` calls it once more for the results file it streams to):

.. code:: text

    steps   = (t_end - t0) / h                  fixed-step methods (adaptive ones: not known before)
    outputs = len(t_eval)                       (t_eval None: every step, steps + 1)
    memory  = outputs x bytes per output        simulate keeps x (n_state) and the integrals (k):
                                                8 (1 + n_state + k) bytes per output
    disk    = outputs x bytes per output written (flexmbs.run: its fields, `run_bytes_per_output`)

A run is refused (ValueError) when

- ``h`` exceeds ``t_end - t0`` (`check_step_fits`: the run would be one step cut to t_end - t0),
- its outputs would need more memory than `MEMORY_FRACTION` of the available memory
  (``MemAvailable`` of /proc/meminfo, else ``os.sysconf("SC_AVPHYS_PAGES")``), or
- more disk than is free where the results file is written (`flexmbs.disk.free_bytes`),

with a message that names ``h``, ``dt_out`` or ``t_end`` and the numbers.  It goes on with
a warning (`RunSizeWarning`) beyond `WARN_STEPS` steps (1e7: hours for most models) or
`WARN_BYTES` (1 GB) of outputs in memory or on disk.
"""
from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

from ..frozen import FrozenFields

__all__ = ["RunSize", "RunSizeWarning", "check_run_size", "check_step_fits", "available_memory", "WARN_STEPS", "WARN_BYTES",
           "MEMORY_FRACTION"]

WARN_STEPS = 1e7                 # more steps than this: a warning (hours for most models)
WARN_BYTES = 1e9                 # more output bytes than this in memory or on disk: a warning
MEMORY_FRACTION = 0.8            # outputs may take at most this fraction of the available memory


class RunSizeWarning(UserWarning):
    """A run that will take very many steps or bytes (it goes on)."""


class RunSize(FrozenFields):
    """Estimated size of a run: ``steps`` (None: adaptive), ``outputs``, ``memory_bytes``,
    ``disk_bytes`` (0 without a results file)."""

    def __init__(self, steps: int | None, outputs: int, memory_bytes: int, disk_bytes: int = 0):
        self._set_fields(locals())


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation: MemAvailable of /proc/meminfo (Linux,
    counting the reclaimable page cache), else free physical pages x page size; None if
    neither is known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def release_freed_memory() -> bool:
    """Give the heap memory freed by Python back to the operating system (glibc's
    ``malloc_trim(0)``); True if done.  A long run frees many block-sized arrays whose heap
    glibc keeps (at 10 001 outputs of the 200-element rotating bar, 110 MB of resident memory
    that nothing used); called where a run's working arrays are released, so that the next
    large allocation (the results read back) does not come on top of it.  A no-op elsewhere
    than glibc."""
    import ctypes
    try:        # the process's own symbols, glibc's among them: no `ctypes.util.find_library`, which
        libc = ctypes.CDLL(None)        # runs `ldconfig -p` in a subprocess (about 60 ms of wall time)
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError, TypeError):        # TypeError: Windows takes no None
        return False


def _free_disk(path: Path) -> int | None:
    """Free bytes on the file system of ``path`` (its nearest existing parent)."""
    from ..disk import free_bytes          # not shutil: its import pulls bz2 and lzma (7 ms), for this one call

    p = Path(path).resolve()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return int(free_bytes(p))
    except OSError:
        return None


def _size(n: float) -> str:
    """Bytes as '1.5 GB'."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _what_to_change(span: float, h: float | None, n_out: int, every_step: bool) -> str:
    """The parameters that set the number of outputs, with their values."""
    if every_step:
        return (f"raise `h` (now {h:g} s; every step is an output), give output times (`dt_out` or "
                f"`t_eval`) or shorten `t_end` (now t_end - t0 = {span:g} s)")
    dt = span / max(n_out - 1, 1)
    return f"raise `dt_out` (now {dt:.3g} s) or shorten `t_end` (now t_end - t0 = {span:g} s)"


def check_step_fits(h: float | None, t_span) -> None:
    """Refuse a step ``h`` longer than the run (ValueError naming h and t_end)."""
    t0, t_end = (float(t) for t in t_span)
    span = t_end - t0
    if h is not None and h > span * (1 + 1e-9):
        raise ValueError(f"`h` = {h:g} s exceeds the simulated time t_end - t0 = {span:g} s: the run would be "
                         f"a single step cut to {span:g} s; give h <= t_end - t0 (e.g. h = {span / 100:g} s).")


def check_run_size(t_span, h: float | None, n_out: int | None, bytes_per_output: int, *, fixed_step: bool,
                   disk_path=None, disk_bytes_per_output: int = 0, stacklevel: int = 4) -> RunSize:
    """Estimate a run's steps, outputs, memory and disk (module docstring); refuse what
    cannot run, warn beyond the thresholds.

    Parameters
    ----------
    t_span : (float, float)
    h : float or None
        The step (fixed-step methods) or the first trial step.
    n_out : int or None
        Number of output times; None: every step is an output.
    bytes_per_output : int
        Memory kept per output.
    fixed_step : bool
        Whether the method steps with ``h`` (then steps = (t_end - t0) / h).
    disk_path : path, optional
        The results file; with ``disk_bytes_per_output`` its size is checked against the free
        disk space there.

    Raises
    ------
    ValueError
        The outputs exceed the available memory or the free disk.
    """
    t0, t_end = (float(t) for t in t_span)
    span = t_end - t0
    steps = math.ceil(span / h * (1 - 1e-12)) if (fixed_step and h) else None
    every_step = n_out is None
    if every_step and steps is None:
        return RunSize(None, 0, 0)                   # adaptive, every step an output: not known before
    outputs = int(steps + 1 if every_step else n_out)
    memory = outputs * int(bytes_per_output)
    disk = outputs * int(disk_bytes_per_output) if disk_path is not None else 0
    change = _what_to_change(span, h, outputs, every_step)
    available = available_memory()
    if available is not None and memory > MEMORY_FRACTION * available:
        raise ValueError(f"The run would keep {outputs:,} outputs x {_size(bytes_per_output)} = {_size(memory)} in "
                         f"memory, more than {MEMORY_FRACTION:.0%} of the {_size(available)} available: {change}.")
    if disk:
        free = _free_disk(Path(disk_path))
        if free is not None and disk > free:
            raise ValueError(f"The run would write {outputs:,} outputs x {_size(disk_bytes_per_output)} = "
                             f"{_size(disk)} to {disk_path}, more than the {_size(free)} free there: {change}.")
    if steps is not None and steps > WARN_STEPS:
        warnings.warn(f"`h` = {h:g} s over t_end - t0 = {span:g} s is {steps:.3g} steps (more than "
                      f"{WARN_STEPS:.0e}): this run may take hours; raise `h` or shorten `t_end` if that is "
                      "not meant.", RunSizeWarning, stacklevel=stacklevel)
    for what, n in (("in memory", memory), (f"on disk ({disk_path})", disk)):
        if n > WARN_BYTES:
            warnings.warn(f"The run will keep {outputs:,} outputs = {_size(n)} {what} (more than "
                          f"{_size(WARN_BYTES)}); to make it smaller, {change}.", RunSizeWarning,
                          stacklevel=stacklevel)
    return RunSize(steps, outputs, memory, disk)
