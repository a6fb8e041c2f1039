"""The relevance vector classifier: the Bernoulli-logistic RVM over the sequential type-II engine
:mod:`sparsebayes.inference.engines.typeii_laplace` (Laplace path, Bernoulli-logistic likelihood), as a
scikit-learn estimator.

The bias and the origin of ``x``: every basis function, the bias included, has its own ARD prior
``w_i ~ N(0, α_i⁻¹)``, so with features of the raw ``x`` the fit depends on where the origin of
``x`` lies. On raw inputs far from it (``X + 10`` on unit-spread data) each linear column is
nearly the bias column, none raises the evidence on its own, and the greedy search stops at its
start, a constant classifier. Here the linear and quadratic maps act on the inputs centred at their
training mean (with a bias): the bias weight is the value at the mean, and a fit on ``X + c``
predicts what the fit on ``X`` does, up to rounding. ``beta_`` (and ``active_``, ``prior_var_``,
``laplace_cov_``) are on ``feature_map_``'s columns, the terms of the centred inputs; ``coef_``,
``intercept_`` and ``to_inference_data`` give the weights of the raw terms
(:func:`~sparsebayes.inference.estimators._base.raw_weights`; ``intercept_`` the value at ``x = 0``).
Gaussian kernels are translation-invariant already.

The estimator is :class:`~sparsebayes.inference.estimators.sparse_estimators.SparseClassifier` with
``method="type2"`` fixed: it fits by the type-II fitting core's Laplace path
(:func:`~sparsebayes.inference.estimators.typeii_fit.fit_typeii_laplace_model`, once per classifier) and
answers through :class:`~sparsebayes.inference.estimators.typeii_laplace_fitted.TypeIIClassifierMethods`.

A fit that predicts one class on its own training data, one whose kernels each reach no training
point but their own (a lookup table of its training points: the width is far below their spacing,
as on raw inputs in the hundreds at ``h = 1``), or one whose engine stopped at its
start (no move raised the evidence there: ``converged_`` is then False, since nothing was
searched), gives a :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` that says what
to change.
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier


class RVMClassifier(SparseClassifier):
    """Relevance vector classifier: Bernoulli-logistic RVM by sequential type-II ML (Laplace approximation).

    ``P(y = 1 | x) = σ(wᵀh(x))``, ``w_i ~ N(0, α_i⁻¹)``, flat hyperpriors (Tipping 2001;
    Tipping & Faul 2003); engine :mod:`sparsebayes.inference.engines.typeii_laplace`. For ``k > 2``
    classes, ``k`` one-vs-rest classifiers whose ``σ(w_cᵀh(x))`` are normalized into class
    probabilities (the paper's RVM columns are one-vs-all).

    Parameters
    ----------
    prior : str or type-II hierarchy object, default="ard"
        The hierarchy on the weights (as :class:`~sparsebayes.inference.PoissonRVMRegressor`'s): ARD
        (the RVM), ``"laplace"`` / ``LaplaceVariancePrior`` (FLAP's), ``"scaled_laplace"`` /
        ``ScaledLaplacePrior`` (BLS's, ``σ² = 1``); ``SparseClassifier(method="type2", prior=...)``
        fits the same model (this estimator is that one with ``method`` fixed and the settings
        ``bias``, ``max_iter``, ``tol`` as parameters). The posterior twin (``compare``): ARD on its
        labelled proper surrogate, FLAP's and BLS's Laplace prior at each classifier's fitted λ.
    features : {"kernel", "linear", "quadratic"} or transformer
        The basis ``h(x)``, as for :class:`SparseProbitClassifier` (default: Gaussian kernels
        ``exp(−‖x − x'‖²/(2h²))`` on the training points, with a bias). ``"linear"`` and
        ``"quadratic"`` with ``bias=True`` act on the inputs standardized at their training mean and
        sd (the model's flat hyperpriors make it scale-free); a transformer is used as it is.
    kernel_width : float or "scale", default="scale"
        The kernel width ``h`` in the units of ``X``; ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)`` (scikit-learn's ``SVC(gamma="scale")``).
    bias : bool, default=True
        Whether ``h(x)`` has a constant column.
    max_iter, tol : int, float
        Engine steps and the smallest gain in the approximate log evidence that counts as a move.

    Attributes
    ----------
    classes_, beta_ (n_classifiers, n_basis: the mode on ``feature_map_``'s columns, zeros where
    pruned), active_ (same shape, bool), coef_ / intercept_ (the raw terms' weights of ``beta_``
    without / with only the bias column, as for :class:`SparseProbitClassifier`),
    relevance_indices_ (columns of ``coef_`` kept by any classifier: training points for kernel
    features), n_active_ (their number), objective_ (Laplace-approximate log evidence per
    classifier), prior_var_ (``1/α``, 0 where pruned), prior_ (the hierarchy fitted:
    ``ARDPrior()``, flat on every ``α_i``), laplace_cov_ (per classifier, ``Σ`` over
    its active basis functions), n_iter_, converged_ (no move gains more than ``tol``, reached
    after at least one move: False for a fit that stopped at its start), stalled_ (stopped on a
    cycle, best state kept: see :mod:`sparsebayes.inference.engines.typeii_laplace`), likelihood_ (the
    :class:`~sparsebayes.models.likelihoods.BernoulliLogisticLikelihood`), weights_basis_ (``"raw"``:
    the weights of :meth:`to_inference_data` and of the posterior draws are the raw terms' weights of
    ``beta_``, :func:`~._base.raw_weights`, not the weights on ``feature_map_``'s columns).
    """

    #: The generic estimator's arguments this paper class fixes (class attributes, not parameters).
    method = "type2"
    link = None
    options = None

    def __init__(self, *, prior="ard", features="kernel", kernel_width="scale", bias=True, max_iter=1000, tol=1e-6):
        set_init_params(self, locals())
