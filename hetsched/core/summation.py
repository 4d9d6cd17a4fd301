"""Sums in numpy's order, compiled: a kernel that adds what numpy adds gets numpy's result to
the bit, so a compiled path can replace an array expression without moving a decision.

numpy's ``np.sum`` of a float row is a pairwise sum (``pairwise_sum`` in numpy's
``loops_utils.h``): fewer than 8 terms one by one from 0, up to 128 in eight running sums
combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) with the rest added after,
longer rows split in two at a multiple of 8 below the middle. A test compares these kernels
with numpy on rows of 1 to 5,000 terms."""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel


@kernel
def _block_sum(a, lo, n):  # pragma: no cover - compiled
    """numpy's sum of n <= 128 terms from a[lo]."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    whole = n - n % 8
    for i in range(lo + 8, lo + whole, 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(lo + whole, lo + n):
        res += a[i]
    return res


@kernel
def pairwise_sum(a, lo, n):  # pragma: no cover - compiled
    """a[lo] + ... + a[lo + n - 1] as ``np.sum`` adds them. numpy recurses on the halves; here
    an explicit stack of frames does (numba's cache cannot hold a recursive kernel: loading one
    crashes), each frame a range and, once its left half is summed, that sum."""
    if n <= 128:
        return _block_sum(a, lo, n)
    start = np.empty(64, dtype=np.int64)  # 2^64 terms would need a deeper stack
    size = np.empty(64, dtype=np.int64)
    left = np.empty(64)
    has_left = np.zeros(64, dtype=np.bool_)
    d = 0
    start[0], size[0] = lo, n
    while True:
        if size[d] > 128:  # descend into the left half
            half = size[d] // 2
            half -= half % 8
            start[d + 1], size[d + 1], has_left[d + 1] = start[d], half, False
            d += 1
            continue
        value = _block_sum(a, start[d], size[d])
        d -= 1
        while d >= 0 and has_left[d]:  # both halves summed: the frame's sum goes up
            value = left[d] + value
            d -= 1
        if d < 0:
            return value
        left[d], has_left[d] = value, True  # the left half done: on to the right one
        half = size[d] // 2
        half -= half % 8
        start[d + 1], size[d + 1], has_left[d + 1] = start[d] + half, size[d] - half, False
        d += 1


@kernel
def weighted_row_sums(m, w):  # pragma: no cover - compiled
    """``np.sum(m * w[None, :], axis=1)`` to the bit: each row's products, summed pairwise."""
    n, k = m.shape
    out = np.empty(n)
    row = np.empty(k)
    for j in range(n):
        for r in range(k):
            row[r] = m[j, r] * w[r]
        out[j] = pairwise_sum(row, 0, k)
    return out
