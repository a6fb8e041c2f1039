"""The batched entry point of the type-II regressors: many fits of one estimator configuration (the
replications of a table, CV folds, a grid of kernel widths) in one compiled call, each returned as the
fitted estimator a user would get from ``fit``.

:func:`fit_many` runs each estimator's own preparation (checks, feature map, centring, σ²'s start,
the hierarchy) and post-processing (fitted attributes, the empty model, warnings), and between them
the engine on all designs at once (:func:`~sparsebayes.inference.engines.typeii_design.fit_designs`): the
same padding and the same engine steps as ``fit`` (:mod:`.typeii_batch` takes the steps of single fits,
up to the rounding of a differently compiled program), so a paper table written with it reports the
numbers of the public estimators.
"""
from __future__ import annotations

from sklearn.base import clone

from sparsebayes.inference.estimators._base import atomic_fit
from sparsebayes.inference.engines.typeii_design import fit_design, fit_designs, pack_design
from sparsebayes.inference.estimators.typeii_estimators import _TypeIIRegressor

_ENGINE_PARAMS = ("max_iter", "tol", "noise_every", "max_active")


def fit_many(estimators, Xs, ys):
    """Fit a clone of ``estimators[k]`` to ``(Xs[k], ys[k])`` for every ``k``; returns the fitted clones.

    ``estimators`` is one type-II regressor (:class:`~sparsebayes.inference.estimators.typeii_estimators.RVMRegressor`,
    ``BLSRegressor``, ``FLAPRegressor``), used for every data set, or a list of them that differ at most
    in their features (e.g. a kernel width per data set): one class, one hierarchy and the same engine
    controls, so that one compiled program serves them all. The designs of one padded shape are fitted
    together; a factored (low-rank) design, or one of another shape, is fitted alone. Warnings are
    those each ``fit`` would give.
    """
    Xs, ys = list(Xs), list(ys)
    if isinstance(estimators, _TypeIIRegressor):
        estimators = [estimators] * len(Xs)
    estimators = [clone(e) for e in estimators]
    if not (len(estimators) == len(Xs) == len(ys)) or not estimators:
        raise ValueError(f"fit_many needs one estimator (or one for each data set) and as many X as y, got "
                         f"{len(estimators)} estimators, {len(Xs)} X and {len(ys)} y")
    first = estimators[0]
    if not isinstance(first, _TypeIIRegressor) or any(type(e) is not type(first) for e in estimators):
        raise ValueError("fit_many takes type-II regressors of one class (RVMRegressor, BLSRegressor or FLAPRegressor)")
    controls = {k: first.get_params()[k] for k in _ENGINE_PARAMS}
    if any({k: e.get_params()[k] for k in _ENGINE_PARAMS} != controls for e in estimators):
        raise ValueError(f"fit_many's estimators must share their engine controls {_ENGINE_PARAMS}")
    problems = [_prepare(e, X, y) for e, X, y in zip(estimators, Xs, ys)]
    priors = {p.prior for p in problems if p is not None}
    if len(priors) > 1:
        raise ValueError(f"fit_many's estimators must make one hierarchy, got {sorted(map(repr, priors))}")
    groups = {}
    for k, problem in enumerate(problems):
        if problem is None:
            continue
        packed = pack_design(problem.Phi, problem.y, n_obs=problem.n_obs, factor=problem.factor)
        key = None if problem.factor is not None else packed.Phi.shape
        groups.setdefault(key, []).append((k, packed))
    for key, members in groups.items():
        if key is None or len(members) == 1:
            for k, _ in members:
                p = problems[k]
                _finish(estimators[k], p, fit_design(p.Phi, p.y, p.prior, p.noise_var, factor=p.factor, n_obs=p.n_obs,
                                                     **controls))
            continue
        states = fit_designs([packed for _, packed in members], problems[members[0][0]].prior,
                             [problems[k].noise_var for k, _ in members], **controls)
        for (k, _), state in zip(members, states):
            _finish(estimators[k], problems[k], state)
    return estimators


@atomic_fit
def _prepare(estimator, X, y):
    """``estimator._prepare`` with the warnings and the clean-up on failure of ``fit``."""
    return estimator._prepare(X, y)


@atomic_fit
def _finish(estimator, problem, state):
    """``estimator._finish`` with the warnings of ``fit``."""
    estimator._finish(problem, state)
