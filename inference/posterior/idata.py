"""ArviZ ``InferenceData`` out of every fit.

Point estimates (EM / MAP / type-II) become a one-chain, one-draw ``posterior`` group marked
``point_estimate=1`` in its attributes; a Gaussian conditional posterior at the fitted
hyperparameters can be given as draws (``gaussian_draws``, ``draws_idata``) so ArviZ plots put
it beside NUTS/Gibbs output of the same model. The routine's name (``"inference"``) and its
settings are attributes of the ``posterior`` group, where the samplers put theirs, and of the
``InferenceData`` itself. :func:`point_estimate_posterior` gives a point estimate kept in a group of
its own back the pymc-extras way (a one-draw ``posterior`` with ``fit`` and ``optimizer_result``).
Under ArviZ 1.x the same groups are the nodes of an
``xarray.DataTree`` (:mod:`sparsebayes.inference.posterior.arviz_compat`).
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
    from sparsebayes.inference.posterior.arviz_compat import from_dict
    idata = from_dict({"posterior": posterior}, coords=coords, dims=dims)
    labels = {"inference": method, **(attrs or {})}
    idata.attrs.update(labels)
    idata.posterior.attrs.update(labels)
    return idata


#: The groups pymc-extras writes beside a point estimate: ``fit`` (``fit_laplace``: ``mean_vector`` on dim
#: ``rows``, ``covariance_matrix`` on ``rows`` × ``columns``) and ``optimizer_result`` (``find_MAP``: ``fun``,
#: ``nit``, ``success``, ``method``).
PYMC_EXTRAS_GROUPS = ("fit", "optimizer_result")


def point_estimate_posterior(idata, group="point_estimate"):
    """A new object whose ``posterior`` is group ``group`` of ``idata`` (a point estimate: one chain of
    one draw), beside copies of ``idata``'s :data:`PYMC_EXTRAS_GROUPS` where it has them: the layout in
    which pymc-extras returns a MAP (``find_MAP``: the optimum as a one-draw ``posterior`` and the
    optimizer's record; ``fit_laplace``: the Gaussian approximation's moments), so that code written for
    that output, and ArviZ's plots, read the point estimate. The object's attrs are the point estimate's
    (``point_estimate = 1``, ``inference``). ``KeyError`` naming the groups there when ``idata`` has no
    ``group``."""
    from sparsebayes.inference.posterior.arviz_compat import dataset, from_datasets, groups
    present = groups(idata)
    if group not in present:
        raise KeyError(f"no group {group!r} to read the point estimate from; the groups are {present}")
    point = dataset(idata, group).copy(deep=True)
    parts = {"posterior": point, **{g: dataset(idata, g).copy(deep=True) for g in PYMC_EXTRAS_GROUPS if g in present}}
    return from_datasets(parts, attrs=dict(point.attrs))


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
