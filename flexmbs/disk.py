"""Free disk space, without importing shutil.

``shutil.disk_usage`` is the standard call, but importing shutil imports bz2 and lzma and their
compression modules (about 7 ms of CPU): a run that checks the room for its results and ParaView
files paid that for two numbers.
"""
from __future__ import annotations

import os

__all__ = ["free_bytes"]


def free_bytes(path) -> int:
    """Bytes that a user without privileges can still write on the file system of ``path`` (an
    existing file or directory): ``shutil.disk_usage(path).free``, from ``os.statvfs`` (f_bavail
    blocks of f_frsize bytes, as shutil computes it); by shutil where there is no statvfs
    (Windows)."""
    if hasattr(os, "statvfs"):
        st = os.statvfs(path)
        return st.f_bavail * st.f_frsize
    import shutil
    return shutil.disk_usage(path).free
