"""A compiled hash table of DP_allocation's states (queue position, free GPUs), for the compiled
searches (:mod:`hetsched.hadar.bnb_kernel`, :mod:`hetsched.hadar.dp_kernel`): open addressing
over entry numbers, each entry a row of (idx, key, values). The key is the free GPUs packed
``bits`` to a cell into 64-bit words (:func:`pack`): a 480-job slot's DP meets 250,000 states,
and 45 cells unpacked made its table 45 MB, which the cache could not hold. The arrays grow by
doubling, so the function that adds returns them."""

from __future__ import annotations

import numpy as np

from hetsched.core.compiled import kernel

_EMPTY = -1
_START = 1 << 11  # entries before the first growth


def key_layout(cap: np.ndarray) -> tuple[int, int]:
    """(bits a cell, words a key) for free GPU counts of at most ``cap.max()``."""
    bits = max(1, int(cap.max()).bit_length()) if cap.size else 1
    per_word = 64 // bits
    return bits, max(1, -(-cap.size // per_word))


@kernel
def pack(free, bits, key):
    """Write the free GPUs into ``key``, ``bits`` to a cell, 64 // bits cells a word."""
    per_word = 64 // bits
    key[:] = 0
    for c in range(free.shape[0]):
        w = c // per_word
        key[w] |= np.uint64(free[c]) << np.uint64((c % per_word) * bits)


@kernel
def _hash(idx, key):
    x = np.uint64(idx) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
    for w in key:
        x = (x ^ w) * np.uint64(0x100000001B3)
        x ^= x >> np.uint64(29)
    return x


@kernel
def grow(a, size):
    """``a`` copied into the first rows of a new array of ``size`` rows (the rest uninitialized)."""
    out = np.empty((size,) + a.shape[1:], a.dtype)
    out[: a.shape[0]] = a
    return out


@kernel
def new(n_words, n_values):
    """An empty table: (slots, entry idx, entry keys, entry values)."""
    return (
        np.full(2 * _START, _EMPTY, np.int64),
        np.empty(_START, np.int64),
        np.empty((_START, n_words), np.uint64),
        np.empty((_START, n_values), np.float64),
    )


@kernel
def find(slots, e_idx, e_key, idx, key):
    """The entry of state (idx, key), or -1."""
    mask = slots.shape[0] - 1
    s = np.int64(_hash(idx, key) & np.uint64(mask))
    while slots[s] != _EMPTY:
        e = slots[s]
        if e_idx[e] == idx:
            same = True
            for c in range(key.shape[0]):
                if e_key[e, c] != key[c]:
                    same = False
                    break
            if same:
                return e
        s = (s + 1) & mask
    return -1


@kernel
def add(slots, e_idx, e_key, e_val, n_e, idx, key):
    """Add state (idx, key), not in the table, as entry ``n_e`` (its values are the caller's to
    write); returns the arrays, grown (and rehashed at load 1/4) when full."""
    if n_e == e_idx.shape[0]:
        slots, e_idx, e_key, e_val = reserve(slots, e_idx, e_key, e_val, n_e, 2 * n_e)
    insert(slots, e_idx, e_key, n_e, idx, key)
    return slots, e_idx, e_key, e_val


@kernel
def reserve(slots, e_idx, e_key, e_val, n_e, size):
    """The arrays with room for at least ``size`` entries (doubled until they have), the first
    ``n_e`` kept (rehashed into two slots an entry of room if grown), so that a loop can
    :func:`insert` up to there without reassigning them (numba counts the references of the
    arrays a loop reassigns on every pass: 0.25 us a pass of
    :func:`hetsched.hadar.dp_kernel.sweep`, more than its work)."""
    if size <= e_idx.shape[0]:
        return slots, e_idx, e_key, e_val
    room = e_idx.shape[0]
    while room < size:  # doubled: the slots stay a power of two (the hash masks with it)
        room *= 2
    size = room
    e_idx, e_key, e_val = grow(e_idx, size), grow(e_key, size), grow(e_val, size)
    slots = np.full(2 * size, _EMPTY, np.int64)
    for e in range(n_e):
        _place(slots, _hash(e_idx[e], e_key[e]), e)
    return slots, e_idx, e_key, e_val


@kernel
def insert(slots, e_idx, e_key, n_e, idx, key):
    """Add state (idx, key), not in the table, as entry ``n_e`` of arrays with room for it
    (:func:`reserve`)."""
    e_idx[n_e] = idx
    e_key[n_e] = key
    _place(slots, _hash(idx, key), n_e)


@kernel
def _place(slots, hv, e):
    mask = slots.shape[0] - 1
    s = np.int64(hv & np.uint64(mask))
    while slots[s] != _EMPTY:
        s = (s + 1) & mask
    slots[s] = e
