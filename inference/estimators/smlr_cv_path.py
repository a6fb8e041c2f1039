"""One cross-validation fold's λ path for :class:`~sparsebayes.inference.estimators.smlr_cv.SMLRCV`, as a task
that depends on its arguments alone, so that the folds can run in other processes or on other
machines (:func:`~sparsebayes.inference.parallel.parallel_map`).

A module of its own: a worker that unpickles the task imports it first, and it imports only the MAP
fitting core (:mod:`sparsebayes.inference.estimators.map_fit`), so that it (and :mod:`.smlr_cv`) can be
imported before :mod:`sparsebayes.inference.estimators.smlr`.
"""
from __future__ import annotations

import numpy as np

from sparsebayes.inference.estimators.map_fit import fit_coef, log_softmax, reference_logits


def held_out(Phi_te, y_te, coef):
    """Misclassified held-out points and the held-out log-likelihood sum of the weights ``coef``."""
    log_p = log_softmax(reference_logits(Phi_te, coef))
    return np.sum(log_p.argmax(1) != y_te), np.sum(log_p[np.arange(len(y_te)), y_te])


def fold_path_rest(Phi_tr, y_tr, Phi_te, y_te, m, coef, lams, fit_kw):
    """One fold's path over ``lams`` (descending) from the weights ``coef`` of the λ before them,
    each fit warm-started at the previous one: held-out error counts and log-likelihood sums per λ.
    A task of :func:`~sparsebayes.inference.parallel.parallel_map` (it depends on its arguments alone)."""
    err, loglik, cache = np.zeros(len(lams)), np.zeros(len(lams)), {}
    for i, lam in enumerate(lams):
        coef, _, _ = fit_coef(Phi_tr, y_tr, m, lam=lam, coef0=coef, cache=cache, **fit_kw)
        err[i], loglik[i] = held_out(Phi_te, y_te, coef)
    return err, loglik
