"""The EM engine's starting point: the weakly penalized ridge estimate of 002 Step 2."""
from __future__ import annotations

import numpy as np
import scipy.linalg


class RidgeStart:
    """The weakly penalized ridge estimate ``(E + HᵀH)⁻¹ Hᵀ y₀`` (002 Step 2), factored once for
    a design and then solved for any ``y₀`` (one-vs-all fits share it); dual form when p > n.

    ``E = diag(ε min(1, ‖h_i‖²))``: the paper's ``εI`` (ε = 1e-6) on every column of squared
    norm at least 1 (kernel and bias columns, whose norms are ≥ 1, and inputs in the units of
    the reproductions), and ε relative to the column below that. EM is invariant to the scale
    of each column, and this start is too; with an absolute ε, columns of norm 1e-6 (inputs in
    small units) would start every weight near 0, from where Jeffreys EM prunes them all.
    Computed as the ``εI`` ridge on the columns scaled to norm 1 where they are shorter.

    ``gram``, if given, is ``HᵀH`` (not modified). A design whose regularized Gram matrix is not
    positive definite in float64 (columns collinear to rounding) raises ``ValueError``: EM from
    any start on it loses the weights to rounding.
    """

    def __init__(self, H, eps=1e-6, gram=None):
        n, p = H.shape
        sq = np.einsum("ij,ij->j", H, H) if gram is None else np.diagonal(gram)
        short = (sq > 0) & (sq < 1)
        self.scale = np.ones(p)
        self.scale[short] = 1.0 / np.sqrt(sq[short])
        if short.any():
            H = H * self.scale
            gram = None if gram is None else gram * self.scale[:, None] * self.scale[None, :]
        self.H = H
        self.dual = gram is None and p > n
        if self.dual:
            A = H @ H.T
        else:
            A = H.T @ H if gram is None else gram.copy()
        A[np.diag_indices(A.shape[0])] += eps
        try:
            self.cho = scipy.linalg.cho_factor(A, lower=True)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the design's columns are numerically collinear: the ridge start's HᵀH + εI is not positive "
                "definite in float64 (inputs with a large common offset beside a bias column do this); centre the "
                "inputs (the EM estimators' standardize=True does) or drop the collinear columns") from None

    def __call__(self, y0):
        if self.dual:
            return self.scale * (self.H.T @ scipy.linalg.cho_solve(self.cho, y0))
        return self.scale * scipy.linalg.cho_solve(self.cho, self.H.T @ y0)
