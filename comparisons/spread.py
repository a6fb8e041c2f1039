"""How far a reproduction's figures are from the paper's, in units of their own spread.

A figure of ours is a mean over the protocol's repetitions (random data sets, splits, subsets,
or, for a one-split protocol, re-drawn fold assignments or starts), so its standard error is the
sample SD of the per-repetition figures over √n. :func:`add_spread` gives every row of ours
that has a paper counterpart, for each figure the paper also gives, ``<figure>_se`` and
``<figure>_z = (ours − paper) / se``, with the count ``n_reps``. A figure with no spread
(one repetition, or a method the protocol leaves nothing random for) gets ``se`` ``None`` or 0
and ``z`` ``None`` (the JSON has no infinity): its distance from the paper's is not noise.
"""
from __future__ import annotations

import numbers

import numpy as np

from sparsebayes.comparisons.registry import JOIN_KEYS

#: The columns that pick the paper's row for one of ours: the table's keys, and the settings a
#: sweep's rows vary (a paper row without them matches no sweep row).
MATCH_KEYS = JOIN_KEYS + ("kernel_width", "lam")
#: Numbers in a paper row that describe the setting, not a result.
NOT_FIGURES = frozenset({"out_of", "n_test", "n_train", "n_features", "n_reps", "reps"})


def sample_sd(values):
    """The sample SD (``ddof=1``) of ``values``; ``None`` for fewer than two."""
    a = np.asarray(values, dtype=np.float64)
    return float(a.std(ddof=1)) if a.size > 1 else None


def standard_error(values):
    """The standard error of the mean of ``values``, ``sample_sd / √n``; ``None`` for fewer than two."""
    sd = sample_sd(values)
    return None if sd is None else sd / np.sqrt(len(values))


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_figure(value):
    """A number, or a non-empty list of numbers (one per coefficient, say)."""
    if isinstance(value, (list, tuple)):
        return len(value) > 0 and all(_is_number(v) for v in value)
    return _is_number(value)


def paper_row(row, paper):
    """The paper's row for ``row``: the one agreeing with it on every :data:`MATCH_KEYS` column
    (present in both with equal values, or absent from both); ``None`` when none does."""
    for candidate in paper:
        if all((key in row) == (key in candidate) and row.get(key) == candidate.get(key) for key in MATCH_KEYS):
            return candidate
    return None


def paper_figures(row):
    """The result figures of a paper row: its numbers and lists of numbers, less keys, spreads and settings."""
    return [key for key, value in row.items()
            if _is_figure(value) and key not in MATCH_KEYS and key not in NOT_FIGURES
            and not key.endswith(("_sd", "_se", "_z"))]


def add_spread(rows, paper, n_reps):
    """Give each of ``rows`` with a paper counterpart ``<figure>_se``, ``<figure>_z`` and ``n_reps``
    for every figure of :func:`paper_figures` it has (in place; returns ``rows``).

    The SE is the row's own ``<figure>_se`` where the experiment gives one, else its
    ``<figure>_sd`` (the sample SD over the repetitions; ``beta_sd`` for ``beta_mean``) over √n,
    with n the row's ``n_reps`` (or ``reps``) or else ``n_reps`` (the experiment's repetitions;
    ``None`` when it has none).
    A list figure (one value per coefficient) gets lists of SEs and z's.
    """
    for row in rows:
        theirs = paper_row(row, paper)
        if theirs is None:
            continue
        n = row.get("n_reps", row.get("reps", n_reps))
        for figure in paper_figures(theirs):
            ours, given = row.get(figure), theirs[figure]
            if not _is_figure(ours) or isinstance(ours, (list, tuple)) != isinstance(given, (list, tuple)):
                continue
            se, sd = row.get(f"{figure}_se"), row.get(f"{figure}_sd", row.get(f"{figure.removesuffix('_mean')}_sd"))
            if isinstance(ours, (list, tuple)):
                if len(ours) != len(given):
                    continue
                se = se or [_se_of(v, n) for v in (sd if sd is not None else [None] * len(ours))]
                row[f"{figure}_se"] = se
                row[f"{figure}_z"] = [z_score(o, g, e) for o, g, e in zip(ours, given, se)]
                continue
            se = _se_of(sd, n) if se is None else se
            row[f"{figure}_se"] = se
            row[f"{figure}_z"] = z_score(ours, given, se)
        row["n_reps"] = n
    return rows


def _se_of(sd, n):
    """``sd / √n`` for ``n`` ≥ 2 repetitions; ``None`` otherwise or without an ``sd``."""
    return None if sd is None or n is None or n < 2 else float(sd / np.sqrt(n))


def z_score(ours, paper, se):
    """``(ours − paper) / se``, ``None`` where ``se`` is missing or 0."""
    if se is None or not se > 0:
        return None
    return float((ours - paper) / se)
