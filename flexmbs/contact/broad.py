"""Broad phase: the pairs of axis-aligned bounding boxes (AABBs) that overlap.

.. code:: text

    h = the 90th percentile of the boxes' largest extents (x 1.000001)      cell size
    a box no larger than h lies in the cell floor(centre / h);  two such boxes overlap only if
    their cells are neighbours (|c_i - c_j| <= (e_i + e_j) / 2 <= h on every axis)
    sort the small boxes by cell key; for the cell itself and each of the 3^dim - 1 / 2 neighbours
    "after" it, the candidates are a slice of the sorted keys (searchsorted); then the AABB test
    the boxes larger than h: tested against every box (few: a container, a long capsule)

This is sweep and prune with the sweep done on cell keys, in all axes at once: sorting on one axis
alone (the classical sweep and prune, Baraff 1992; Cohen et al. 1995, doi:10.1145/199404.199437)
lists every pair that overlaps on that axis, N^(5/3) pairs for N boxes spread uniformly in 3D
(measured in docs/benchmarks.md, "Contact").  Here the candidates are the boxes in neighbouring
cells, O(N) when boxes are of similar size, and the cost is that of the sort, O(N log N); no
Python loop over boxes (a loop over the 14 (2D: 5) cell offsets).  `brute_force_pairs` is the
O(N^2) reference of the tests.
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = ["overlapping_pairs", "brute_force_pairs", "SMALL"]

SMALL = 48        # up to this many boxes every pair is tested (fewer numpy calls than the grid's)


def _pairs_in(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (k, j) with start[k] <= j < end[k], as two index arrays (a repeat and a cumulative sum)."""
    counts = np.maximum(end - start, 0)
    total = int(counts.sum())
    k = np.repeat(np.arange(len(start)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    return k, np.repeat(start, counts) + (np.arange(total) - first)


def _half_neighbourhood(dim: int) -> list[tuple]:
    """The cell offsets o != 0 with the first nonzero component positive (each neighbour pair once)."""
    return [o for o in itertools.product((-1, 0, 1), repeat=dim) if any(o) and o[next(i for i, x in
                                                                                      enumerate(o) if x)] > 0]


def _overlap(lo, hi, i, j) -> np.ndarray:
    return np.all((lo[i] <= hi[j]) & (lo[j] <= hi[i]), axis=1)


def overlapping_pairs(lo, hi, group=None) -> tuple[np.ndarray, np.ndarray]:
    """(i, j), i < j: the pairs of boxes [lo_k, hi_k] (N, dim) that overlap (touching counts).  ``group``
    (N,) integers, optional: only pairs of one group (the boxes of the rows of a block of outputs, which
    overlap each other in space but never touch: `flexmbs.contact.Contact.power_history`), each group's
    pairs as the group alone would give them: every pair of a group tested when no group has more than
    `SMALL` boxes, else the cell grid with the group as the leading key (no neighbours across groups)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    n, dim = lo.shape
    if n < 2:
        return np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    if group is not None:
        group = np.asarray(group, dtype=np.int64).reshape(n)
        by_group = np.argsort(group, kind="stable")
        sorted_group = group[by_group]
        start, end = (np.searchsorted(sorted_group, sorted_group, side=side) for side in ("left", "right"))
        if int((end - start).max()) <= SMALL:                   # every later member of one's group
            k, j = _pairs_in(np.arange(n) + 1, end)
            i, j = by_group[k], by_group[j]
            keep = _overlap(lo, hi, i, j)
            return np.minimum(i[keep], j[keep]), np.maximum(i[keep], j[keep])
    elif n <= SMALL:
        return brute_force_pairs(lo, hi)
    extent = (hi - lo).max(axis=1)
    span = float((hi.max(axis=0) - lo.min(axis=0)).max())
    h = max(1.000001 * float(np.quantile(extent, 0.9)), 1e-9 * max(span, 1.0))
    small = np.flatnonzero(extent <= h)
    cells = np.floor(0.5 * (lo[small] + hi[small]) / h).astype(np.int64)
    offsets = np.array(_half_neighbourhood(dim), dtype=np.int64).reshape(-1, dim)
    if group is not None:                                        # the group: the leading key, offset 0
        cells = np.column_stack([group[small], cells])
        offsets = np.column_stack([np.zeros(len(offsets), dtype=np.int64), offsets])
    cells -= cells.min(axis=0) - 1                               # >= 1: neighbours stay >= 0
    size = cells.max(axis=0) + 2
    if np.prod(size.astype(float)) > 2.0 ** 62:                  # a key would overflow: compare every pair
        return _every_pair(lo, hi, group)
    strides = np.concatenate([np.cumprod(size[::-1])[::-1][1:], [1]]).astype(np.int64)
    keys = cells @ strides
    order = np.argsort(keys, kind="stable")
    sorted_keys, members = keys[order], small[order]
    pos = np.arange(len(order))
    parts_i, parts_j = [], []
    same_end = np.searchsorted(sorted_keys, sorted_keys, side="right")
    k, j = _pairs_in(pos + 1, same_end)                           # the same cell, after k
    parts_i.append(members[k]), parts_j.append(members[j])
    for o in offsets:
        nk = sorted_keys + int(o @ strides)
        k, j = _pairs_in(np.searchsorted(sorted_keys, nk, side="left"), np.searchsorted(sorted_keys, nk, side="right"))
        parts_i.append(members[k]), parts_j.append(members[j])
    large = np.flatnonzero(extent > h)
    if large.size:                                               # each large box against every other box (of its group)
        if group is None:
            i = np.repeat(large, n)
            j = np.tile(np.arange(n), large.size)
        else:
            at = np.searchsorted(sorted_group, group[large], side="left")
            k, j = _pairs_in(at, np.searchsorted(sorted_group, group[large], side="right"))
            i, j = large[k], by_group[j]
        keep = (j != i) & ~((extent[j] > h) & (j < i))           # a large-large pair once
        parts_i.append(i[keep]), parts_j.append(j[keep])
    i, j = np.concatenate(parts_i), np.concatenate(parts_j)
    keep = _overlap(lo, hi, i, j)
    i, j = i[keep], j[keep]
    return np.minimum(i, j), np.maximum(i, j)


def _every_pair(lo, hi, group) -> tuple[np.ndarray, np.ndarray]:
    """`brute_force_pairs`, of one group only when ``group`` is given."""
    i, j = brute_force_pairs(lo, hi)
    if group is None:
        return i, j
    keep = group[i] == group[j]
    return i[keep], j[keep]


def brute_force_pairs(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """The same pairs as `overlapping_pairs` by testing every pair (O(N^2) memory: for tests)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    i, j = np.triu_indices(len(lo), k=1)
    keep = _overlap(lo, hi, i, j)
    return i[keep], j[keep]
