"""The Gibbs engines' progress bar: a ``lax.scan`` cut into a few compiled calls, a tqdm bar
advanced between them.

Every Gibbs driver (:func:`sparsebayes.inference.engines.hierarchy_gibbs.run`, and the Bayesian
Lasso and the type-II twins through it) keeps its
sweeps inside jit and advances the bar once per call, never once per draw. The calls take their
random numbers from streams drawn sweep-major, so the draws are the same however the sweeps are
cut.
"""
from __future__ import annotations

import sys

from tqdm.auto import tqdm

#: With a bar, the sweeps run in about this many calls.
BAR_CALLS = 20


def show_progress(progress_bar):
    """``progress_bar`` as a bool: ``None`` is "when standard error is a terminal" (an interactive
    run shows the bar, a log file or a test gets none)."""
    if progress_bar is None:
        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty and isatty())
    return bool(progress_bar)


def chunk_lengths(total, size):
    """Sweeps per compiled call: ``size`` each, the last call taking the rest (at most two
    lengths, so at most two compiles)."""
    size = max(1, min(size, total))
    return [size] * (total // size) + ([total % size] if total % size else [])


def bar_chunk(total, progress_bar):
    """Sweeps per call: all of them without a bar, about ``total / BAR_CALLS`` with one."""
    return -(-total // BAR_CALLS) if progress_bar else total


def progress(total, desc, progress_bar):
    """The tqdm bar of ``total`` sweeps (disabled without ``progress_bar``); a context manager."""
    return tqdm(total=total, desc=desc, disable=not progress_bar)
