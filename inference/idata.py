"""ArviZ ``InferenceData`` out of every fit.

Point estimates (EM / MAP / type-II) become a one-chain, one-draw ``posterior`` group marked
``point_estimate=1`` in its attributes; a Gaussian conditional posterior at the fitted
hyperparameters can be given as draws (``gaussian_draws``, ``draws_idata``) so ArviZ plots put
it beside NUTS/Gibbs output of the same model. The routine's name (``"inference"``) and its
settings are attributes of the ``posterior`` group, where the samplers put theirs, and of the
``InferenceData`` itself. Under ArviZ 1.x the same groups are the nodes of an
``xarray.DataTree`` (:mod:`sparsebayes.inference.arviz_compat`).
"""
from __future__ import annotations

import numpy as np


def point_estimate_idata(estimates, *, method, coords=None, dims=None, attrs=None):
    """``InferenceData`` whose ``posterior`` holds one draw: the point estimate.

    Parameters
    ----------
    estimates : dict of str -> array
        Named point estimates (e.g. ``{"beta": coef, "noise_var": s2}``).
    method : str
        The routine that produced them (recorded in ``attrs["inference"]``).
    """
    posterior = {k: np.asarray(v, dtype=np.float64)[None, None, ...] for k, v in estimates.items()}
    return draws_idata(posterior, method=method, coords=coords, dims=dims,
                       attrs={"point_estimate": 1, **(attrs or {})})


def draws_idata(posterior, *, method, coords=None, dims=None, attrs=None):
    """``InferenceData`` of ``posterior`` (name -> array (chain, draw, ...)) with ``method`` in
    ``attrs["inference"]`` and ``attrs`` on both the ``posterior`` group and the whole."""
    from .arviz_compat import from_dict
    idata = from_dict({"posterior": posterior}, coords=coords, dims=dims)
    labels = {"inference": method, **(attrs or {})}
    idata.attrs.update(labels)
    idata.posterior.attrs.update(labels)
    return idata


def predictive_sd(H_active, cov, noise_var):
    """``√(σ² + h(x)ᵀΣh(x))`` per row of ``H_active``: the predictive sd of ``y`` at a Gaussian
    posterior ``N(·, Σ)`` of the active weights, with noise variance σ²."""
    return np.sqrt(noise_var + np.einsum("ij,jk,ik->i", H_active, cov, H_active))


def gaussian_draws(mean, cov, *, n_draws=1000, seed=0, active=None):
    """Draws ``(1, n_draws, p)`` from ``N(mean, cov)``.

    With ``active`` (indices or a mask into ``mean``, p = ``mean.size``), ``cov`` is that of
    ``mean[active]``, and the other coordinates are exactly zero in every draw (a sparse fit's
    pruned weights). ``seed``: anything ``numpy.random.default_rng`` takes (``None``, an int, a
    sequence of ints such as ``[seed, classifier]``).

    The factor is ``V diag(√max(w, 0))`` from the eigendecomposition ``cov = V diag(w) Vᵀ``: exact
    for a positive semidefinite ``cov`` in any units. A Cholesky factor of ``cov + 1e-12 I`` (before)
    inflated the spread of weights whose variance is near 1e-12 or below (data in small units:
    draw variance 1e-12 for a true 3e-16).
    """
    mean = np.asarray(mean, dtype=np.float64)
    if active is not None:
        draws = np.zeros((1, n_draws, mean.size))
        draws[..., active] = gaussian_draws(mean[active], cov, n_draws=n_draws, seed=seed)
        return draws
    rng = np.random.default_rng(seed)
    w, V = np.linalg.eigh(np.asarray(cov, dtype=np.float64).reshape(mean.size, mean.size))
    z = rng.standard_normal((n_draws, mean.size))
    return (mean + (z * np.sqrt(np.maximum(w, 0.0))) @ V.T)[None, ...]
