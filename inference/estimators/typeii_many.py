"""The batched entry point of the type-II regressors: many fits of one estimator configuration (the
replications of a table, CV folds, a grid of kernel widths) in one compiled call, each returned as the
fitted estimator a user would get from ``fit``.

:func:`fit_many` runs the two halves of the type-II fitting core for each estimator
(:func:`~sparsebayes.inference.estimators.typeii_fit.prepare_typeii`: checks, feature map, centring, σ²'s
start, the hierarchy; :func:`~sparsebayes.inference.estimators.typeii_fit.finish_typeii`: the fitted
model, the empty model, warnings; the estimator names the record), and between them
the engine on all designs at once (:func:`~sparsebayes.inference.engines.typeii.fit_models`): the
same padding and the same engine steps as ``fit`` (:mod:`.typeii_batch` takes the steps of single fits,
up to the rounding of a differently compiled program), so a paper table written with it reports the
numbers of the public estimators.
"""
from __future__ import annotations

from sklearn.base import clone

from sparsebayes.inference._validation import validate_regression_data
from sparsebayes.inference.engines import typeii
from sparsebayes.inference.engines.typeii_design import pack_design
from sparsebayes.inference.estimators._base import atomic_fit
from sparsebayes.inference.estimators.sparse_estimators import SparseRegressor
from sparsebayes.inference.estimators.typeii_fit import (TypeIIFit, finish_typeii, gaussian_model, prepare_typeii,
                                                         typeii_basis)


def _is_typeii(estimator):
    """A regressor that fits by the Gaussian type-II core (a paper class, or ``SparseRegressor(method="type2")``)."""
    return isinstance(estimator, SparseRegressor) and estimator._typeii_route()


def fit_many(estimators, Xs, ys):
    """Fit a clone of ``estimators[k]`` to ``(Xs[k], ys[k])`` for every ``k``; returns the fitted clones.

    ``estimators`` is one type-II regressor (:class:`~sparsebayes.inference.estimators.typeii_estimators.RVMRegressor`,
    ``BLSRegressor``, ``FLAPRegressor``, or ``SparseRegressor(method="type2")`` of the Gaussian likelihood),
    used for every data set, or a list of them that differ at most in their features (e.g. a kernel width
    per data set): one class, one hierarchy and the same engine controls (``max_iter``, ``tol``,
    ``noise_every``, ``max_active``), so that one compiled program serves them all. The designs of one
    padded shape are fitted together; a factored (low-rank) design, or one of another shape, is fitted
    alone. Warnings are those each ``fit`` would give.
    """
    Xs, ys = list(Xs), list(ys)
    if isinstance(estimators, SparseRegressor):
        estimators = [estimators] * len(Xs)
    estimators = [clone(e) for e in estimators]
    if not (len(estimators) == len(Xs) == len(ys)) or not estimators:
        raise ValueError(f"fit_many needs one estimator (or one for each data set) and as many X as y, got "
                         f"{len(estimators)} estimators, {len(Xs)} X and {len(ys)} y")
    first = estimators[0]
    if not _is_typeii(first) or any(type(e) is not type(first) for e in estimators):
        raise ValueError("fit_many takes type-II regressors of one class (RVMRegressor, BLSRegressor or FLAPRegressor)")
    controls = first._typeii_setup()[1].engine_controls()
    if any(e._typeii_setup()[1].engine_controls() != controls for e in estimators):
        raise ValueError(f"fit_many's estimators must share their engine controls {tuple(controls)}")
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
                _finish(estimators[k], p, typeii.fit_model(p.Phi, p.y, gaussian_model(p.prior), params=p.noise_var,
                                                           factor=p.factor, n_obs=p.n_obs, **controls))
            continue
        states = typeii.fit_models([packed for _, packed in members], gaussian_model(problems[members[0][0]].prior),
                                   [problems[k].noise_var for k, _ in members], **controls)
        for (k, _), state in zip(members, states):
            _finish(estimators[k], problems[k], state)
    return estimators


@atomic_fit
def _prepare(estimator, X, y):
    """The fit's first half (:func:`~.typeii_fit.prepare_typeii`), with the warnings and the clean-up on
    failure of ``fit``: the engine's problem, or ``None`` when there is nothing to fit (the empty model,
    named on ``estimator``)."""
    prior, options = estimator._typeii_setup()
    X, y = validate_regression_data(estimator, X, y)
    problem = prepare_typeii(typeii_basis(X, options), y, prior, options, owner=estimator)
    if isinstance(problem, TypeIIFit):
        estimator._name_typeii_fit(problem)
        estimator._route_ = "typeii"
        return None
    return problem


@atomic_fit
def _finish(estimator, problem, state):
    """The fit's second half (:func:`~.typeii_fit.finish_typeii`) with the warnings of ``fit``, named on ``estimator``."""
    estimator._name_typeii_fit(finish_typeii(problem, state, owner=estimator))
    estimator._route_ = "typeii"
