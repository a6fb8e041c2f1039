"""Padded array sizes: data padded to few shapes shares few compiled programs."""
from __future__ import annotations


def bucket(k, *, per_octave=1, minimum=8):
    """Round ``k`` up to a multiple of ``2^(⌊log₂ k⌋) / per_octave`` (at least ``minimum``).

    ``per_octave=1`` gives the next power of two; ``per_octave=4`` one of four sizes per octave
    (at most 25 % over ``k``). ``minimum`` is the smallest step, so sizes below it round up to it.
    """
    k = max(int(k), 1)
    step = max((1 << (k.bit_length() - 1)) // per_octave, minimum)
    return -(-k // step) * step
