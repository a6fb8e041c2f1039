"""Padded array sizes: data padded to few shapes shares few compiled programs."""
from __future__ import annotations

import numpy as np


def bucket(k, *, per_octave=1, minimum=8):
    """Round ``k`` up to a multiple of ``2^(⌊log₂ k⌋) / per_octave`` (at least ``minimum``).

    ``per_octave=1`` gives the next power of two; ``per_octave=4`` one of four sizes per octave
    (at most 25 % over ``k``). ``minimum`` is the smallest step, so sizes below it round up to it.
    """
    k = max(int(k), 1)
    step = max((1 << (k.bit_length() - 1)) // per_octave, minimum)
    return -(-k // step) * step


def pad_to(a, shape, *, fill=0, out=None):
    """``a`` in the leading corner of an array of ``shape`` filled with ``fill`` (``a``'s dtype),
    or of ``out`` (already filled): the padding rows and columns the engines treat as no data."""
    a = np.asarray(a)
    if out is None:
        out = np.full(shape, fill, dtype=a.dtype)
    out[tuple(slice(0, k) for k in a.shape)] = a
    return out
