"""Held-out predictive scores of a :class:`~sparsebayes.comparisons.compare_any.Comparison`: the point
estimate's plug-in predictions beside each sampler's posterior predictive, on the same test rows.

Per source, over the ``n`` test rows:

* ``log_score``: the mean log predictive density ``(1/n) Σ_i log p(y_i | x_i)``. For the point
  estimate it is the plug-in density: the model's likelihood at the point estimate (its own
  ``log_lik`` at ``η = Hβ̂`` and the fitted parameter, :func:`plug_in_density`; the Gaussian at
  ``est.predict`` with the fitted noise variance for the type-II and Bayesian Lasso models; for a
  classifier ``est.predict_proba`` at the true class). For a sampler it is ``log((1/S) Σ_s p(y_i | x_i, θ_s))`` over its ``S`` draws,
  by ``logsumexp`` so that it stays finite when every density underflows. Higher is better; the
  posterior's score also pays for its spread, the plug-in's does not.
* ``rmse`` (regression): of ``est.predict`` and of the posterior predictive mean ``(1/S) Σ_s
  E[y | x, θ_s]``; ``error_rate`` (classification): of ``est.predict`` and of the class with the
  largest posterior-mean probability.
* ``n_test``.
"""
from __future__ import annotations

import numpy as np

POINT_ROW = "point estimate"


def check_test_data(X, X_test, y_test):
    """``ValueError`` unless ``X_test`` and ``y_test`` are both given (or both ``None``), ``y_test`` is
    one-dimensional with one entry per row of ``X_test``, and ``X_test`` has ``X``'s columns."""
    if (X_test is None) != (y_test is None):
        raise ValueError("pass both X_test and y_test (held-out rows and their targets), or neither")
    if X_test is None:
        return
    X_shape, test_shape, y_shape = np.shape(X), np.shape(X_test), np.shape(y_test)
    if len(test_shape) != 2 or test_shape[0] == 0:
        raise ValueError(f"X_test must be a non-empty 2-D table of inputs, got shape {test_shape}")
    if test_shape[1:] != X_shape[1:]:
        raise ValueError(f"X_test has {test_shape[1]} columns; X has {X_shape[1]}")
    if len(y_shape) != 1 or y_shape[0] != test_shape[0]:
        raise ValueError(f"y_test must be 1-D with one target per row of X_test ({test_shape[0]}), "
                         f"got shape {y_shape}")


def _logmeanexp(log_lik):
    """``log((1/S) Σ_s exp(log_lik[s]))`` along the draws (axis 0)."""
    from scipy.special import logsumexp
    return logsumexp(log_lik, axis=0) - np.log(log_lik.shape[0])


def point_scores(est, X_test, y_test, noise_var=None, plug_in=None):
    """The point estimate's row: plug-in ``log_score``, ``rmse`` or ``error_rate``, ``n_test``.

    Regression: the plug-in density is the model's likelihood, ``plug_in = (likelihood, η, params)`` at
    the test rows (:func:`plug_in_density`: the Student-t's, the Poisson's, ...); without it the Gaussian
    at ``est.predict`` with the fitted noise variance ``noise_var`` (the Gaussian models' own)."""
    from sparsebayes.models.likelihoods import GaussianLikelihood
    y_test = np.asarray(y_test)
    if hasattr(est, "classes_"):
        proba = np.asarray(est.predict_proba(X_test), dtype=np.float64)
        code = np.searchsorted(est.classes_, y_test)
        with np.errstate(divide="ignore"):
            log_p = np.log(proba[np.arange(len(y_test)), code])
        return dict(log_score=float(np.mean(log_p)),
                    error_rate=float(np.mean(np.asarray(est.predict(X_test)) != y_test)), n_test=len(y_test))
    pred = np.asarray(est.predict(X_test), dtype=np.float64)
    y_test = y_test.astype(np.float64)
    likelihood, eta, params = (GaussianLikelihood(), pred, noise_var) if plug_in is None else plug_in
    log_p = np.asarray(likelihood.log_lik(y_test, eta, params), dtype=np.float64)
    return dict(log_score=float(np.mean(log_p)), rmse=float(np.sqrt(np.mean((y_test - pred) ** 2))),
                n_test=len(y_test))


def sampler_scores(predictions, y_test, classes=None):
    """A sampler's row from its ``predictions`` group (:mod:`sparsebayes.inference.posterior.twin_predictive`):
    ``log_score`` (log of the mean over draws of the density, by logsumexp), ``rmse`` of the posterior
    predictive mean or ``error_rate`` of the posterior-mean probabilities' class, ``n_test``."""
    def flat(name):
        v = np.asarray(predictions[name].values, dtype=np.float64)
        return v.reshape(-1, *v.shape[2:])
    y_test = np.asarray(y_test)
    out = {"log_score": float(np.mean(_logmeanexp(flat("log_lik"))))}
    if classes is None:
        mean = flat("mean").mean(axis=0)
        out["rmse"] = float(np.sqrt(np.mean((y_test.astype(np.float64) - mean) ** 2)))
    else:
        prob = flat("prob").mean(axis=0)
        out["error_rate"] = float(np.mean(np.asarray(classes)[np.argmax(prob, axis=1)] != y_test))
    out["n_test"] = len(y_test)
    return out


def point_noise_var(est, point):
    """The fitted noise variance of a regressor: the point estimate's ``noise_var``, else the
    estimator's ``noise_var_`` or fixed ``noise_var``."""
    if "noise_var" in point:
        return float(np.asarray(point["noise_var"].values).ravel()[0])
    for name in ("noise_var_", "noise_var"):
        value = getattr(est, name, None)
        if value is not None:
            return float(value)
    raise ValueError(f"{type(est).__name__} has no fitted noise variance for the plug-in predictive density")


def plug_in_density(cmp):
    """``(likelihood, η, params)`` of the point estimate at the held-out rows where the estimator's model
    names its likelihood (``posterior_model``, :mod:`sparsebayes.inference.posterior.posterior_model`): ``η = Hβ̂``
    (``+ b̂₀`` where the point has an ``intercept``)
    on the test rows' design, ``params`` the point's value of the likelihood's parameter (or the fixed
    one); ``None`` for a model that does not name one (the Gaussian type-II and Bayesian Lasso models)."""
    est = cmp.estimator
    if getattr(est.posterior_model(), "likelihood", None) is None:
        return None
    t = est.posterior_model(cmp.X_test, cmp.y_test, surrogate_eps=getattr(cmp, "surrogate_eps", None))
    point = cmp.idata.point_estimate
    beta = np.asarray(point["beta"].values, dtype=np.float64).reshape(-1)
    own = getattr(t.likelihood, "param_name", None)
    params = t.params if own is None or t.params is not None or own not in point else float(
        np.asarray(point[own].values).ravel()[0])
    # a model with an intercept site (the sampling estimators'): its point beside the weights'
    b0 = float(np.asarray(point["intercept"].values).ravel()[0]) if "intercept" in point else 0.0
    return t.likelihood, t.H @ beta + b0, params


def predictive_table(cmp):
    """``pandas.DataFrame`` indexed by ``source``: the point estimate's row, then each sampler's."""
    import pandas as pd
    from sparsebayes.inference.posterior.twin_predictive import GROUP
    est = cmp.estimator
    classes = getattr(est, "classes_", None)
    plug_in = None if classes is not None else plug_in_density(cmp)
    noise = None if classes is not None or plug_in is not None else point_noise_var(est, cmp.idata.point_estimate)
    rows = {POINT_ROW: point_scores(est, cmp.X_test, cmp.y_test, noise, plug_in)}
    for s, idata in cmp.samples.items():
        rows[s] = sampler_scores(getattr(idata, GROUP), cmp.y_test, classes)
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "source"
    return table
