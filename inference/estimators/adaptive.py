"""Estimators for Figueiredo's adaptive sparseness: EM with Laplace or Jeffreys hyperpriors.

* :class:`AdaptiveSparseRegressor`: ``y = Hβ + w`` with σ² estimated (000 Sec. 3) or fixed.
* :class:`SparseProbitClassifier`: probit with latent ``z`` (002 Secs. 2–3); ``k > 2`` classes
  by one-vs-all (002 Sec. 4.2), the class probabilities normalized (our addition).

Both are :class:`~sparsebayes.inference.estimators.sparse_estimators.SparseRegressor` and
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseClassifier` with ``method="em"`` fixed
and EM's settings as parameters, as scikit-learn's ``Lasso`` is ``ElasticNet`` with ``l1_ratio=1``:
they fit by the EM fitting core (:func:`sparsebayes.inference.estimators.em_fit.fit_em_model`) and
answer by :mod:`sparsebayes.inference.estimators.em_fitted`.

The bias, the origin and the units of ``x``: Figueiredo penalizes the bias weight like the
others, so with features of the raw ``x`` the fit depends on where the origin of ``x`` lies (a
common offset of 1e5 could prune the bias; at 1e8 the ridge start's Cholesky failed). Here, by
default (``standardize=True``), the linear and quadratic maps act on standardized inputs: centred
at their training mean (with ``bias=True``), so that the model's bias weight is the value at the
mean, penalized like the others, as scikit-learn's linear models centre; and for the Jeffreys
prior, which is scale-free, also divided by their training SD. Jeffreys EM's fixed points do not
depend on the units of a column (:mod:`sparsebayes.inference.engines.em`), but its stopping rule on
``‖Δβ‖/‖β‖`` does once a bias weight sits beside the slopes; on standardized inputs the fits on
``X``, ``X + c`` and ``X · s`` run the same iterations. The Laplace penalty ``√γ Σ|β_i|`` depends
on the units by design, so its inputs are only centred. A fit on ``X + c`` then predicts what the
fit on ``X`` does, up to the rounding of ``X + c`` itself (its entries carry about ``|c| · 1e-16``
of absolute error: at ``c = 1e8`` and unit-spread inputs, predictions agree to ``1e-6 · sd(y)``,
the tolerance ``tests/inference/test_em_reliability.py`` holds them to). Gaussian kernels are
translation-invariant and their width sets the scale (their distances are taken from the
training mean when it lies far from the origin, for rounding).

``beta_`` (and ``sigma_``, ``laplace_cov_``, ``to_inference_data``) hold the model's weights, on
``feature_map_``'s columns, so they line up with a sampler run on ``feature_map_.transform(X)``:
for linear and quadratic features the ``bias`` there is the value at the training mean and, for
Jeffreys, a slope is per training SD. ``coef_`` and ``intercept_`` give the same function in the
raw terms (``intercept_`` the value at ``x = 0``, as in scikit-learn).
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier, SparseRegressor


class AdaptiveSparseRegressor(SparseRegressor):
    """Sparse regression by EM under a Laplace or Jeffreys hyperprior (Figueiredo 2003, Sec. 3).

    Parameters
    ----------
    prior : {"jeffreys", "laplace", "horseshoe"} or a hierarchy object, default="jeffreys"
        Hyperprior on the variances τ_i: parameter-free Jeffreys ``p(τ) ∝ 1/τ``, the
        exponential with rate γ/2 (a Laplacian ``√γ ‖β‖₁`` penalty), or any registered hierarchy
        with an EM E-step (:data:`sparsebayes.models.priors.HIERARCHIES`), given by name (its
        defaults) or as an object such as ``HorseshoePrior(tau=0.1)``.
    gamma : float, default=1.0
        Laplace hyperparameter γ (ignored by Jeffreys); with ``gamma_prior``, the starting value.
    gamma_prior : tuple (a, b) or None, default=None
        ``None`` keeps γ fixed at ``gamma``. ``(a, b)`` (with ``prior="laplace"`` only) estimates γ
        inside EM under the hyperprior ``γ ~ Gamma(a, b)`` (shape ``a > 0``, rate ``b > 0``), by the
        M-step of :meth:`~sparsebayes.models.priors.LaplacePrior.update_shared`; ``gamma_`` holds the
        estimate (the joint mode of β and γ, which EM climbs to from the ridge start). γ is in the
        units of ``1/β²``; the hyperprior's mean is ``a/b``. A vague one (small ``b``) lets data that
        determine the weights well decide, but the empty model ``β = 0``, ``γ = (p/2 + a − 1)/b`` is a
        mode too, whose height grows as ``(p/2) log(1/b)``: with few data per weight EM can end there
        (every weight pruned, with a warning), and a ``b`` of the order of ``a`` over the expected γ
        avoids it.
    features : {"linear", "quadratic", "kernel"} or transformer, default="linear"
        The basis ``h(x)``; ``"kernel"`` uses Gaussian kernels of width ``kernel_width``
        centred on the training points; ``"linear"`` and ``"quadratic"`` act on standardized
        inputs with ``standardize`` (the module says why).
        A transformer is used as it is (``kernel_width`` and ``bias`` do not reach it, and its
        inputs are not centred); its bias column, if it is one of this package's maps with
        ``bias=True``, gives ``intercept_``.
    kernel_width : float or "scale", default="scale"
        ``h`` in ``exp(-‖x − x'‖² / (2h²))``; ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)``, the width of scikit-learn's ``SVC(gamma="scale")`` on centred columns
        (``feature_map_.width_`` holds the one in use).
    bias : bool, default=True
        Include a constant basis function (weighted, and penalized, like the others as in
        the paper): with ``standardize``, the value at the training mean of the inputs for linear
        and quadratic features.
    standardize : bool, default=True
        Linear and quadratic features act on the inputs centred at their training mean (with
        ``bias``) and, for Jeffreys, scaled to unit SD: fits on ``X``, ``X + c`` (and, for Jeffreys,
        ``X · s``) predict the same (the module says to what tolerance). ``False`` takes the paper's
        features of the raw ``x``, whose penalized bias is the value at ``x = 0`` (the reproductions
        of 000's synthetic designs, whose true intercept is 0, use it: there Jeffreys EM prunes
        that bias, which tells it the intercept is 0; a fit centred at the sample mean keeps a bias
        and estimates the slopes as with a free intercept).
    likelihood : str or likelihood object, default="gaussian"
        The observation model: ``"gaussian"`` (the paper's), or any registered likelihood with EM
        working weights (:mod:`sparsebayes.models.likelihoods`) for real or count targets, by name or
        as an object: ``"student_t"`` (robust regression, ``StudentTLikelihood(df=4)``: its scale is
        estimated), ``"poisson"`` and ``"negative_binomial"`` (counts, log link: ``predict`` gives the
        mean count; the dispersion is estimated). EM's M-step then runs on ``HᵀWH`` with the
        likelihood's working weights (:func:`~sparsebayes.inference.engines.em.weighted_m_step`).
    noise_var : float or None, default=None
        Fixed noise variance σ² (with another likelihood, its own parameter: the Student-t's squared
        scale, the negative binomial's dispersion); ``None`` estimates it (000 eq. 12).
    tol : float, default=1e-3
        Stop when ``‖Δβ‖/‖β‖ < tol`` (002 Step 4); with estimated shared hyperparameters or a
        likelihood with working weights, when the joint change's distance to the fixed point is
        (:mod:`sparsebayes.inference.engines.em`).
    max_iter : int, default=1000
    low_rank : bool, default=True
        With Gaussian kernel features whose kernel matrix has numerical rank ``r ≤ n/4``
        (pivoted Cholesky to 1e-14, :mod:`sparsebayes.inference.engines.lowrank`), run EM on the
        factored design ``H = QH̃``: an iteration costs ``O(r²n)`` instead of ``O(n³)``, and
        the fit equals the dense one up to rounding (the module says where rounding decides
        between fits). ``False`` always uses the dense design.

    Attributes
    ----------
    coef_ : ndarray (n_basis,)
        Weights of the basis functions (bias excluded), as terms of the raw inputs.
    intercept_ : float
        The constant of the fit in the raw terms: its value at ``x = 0`` for linear and quadratic
        features (the bias weight itself for kernels).
    relevance_indices_ : ndarray
        Indices of the nonzero basis functions (of ``beta_``, bias excluded); with kernel features,
        the training points whose kernels survive.
    active_ : ndarray of bool (n_basis,)
        The kept basis functions: nonzero weight (bias excluded).
    n_active_ : int
        Number of nonzero basis weights (bias excluded).
    noise_var_ : float or None
        Estimated (or the fixed) σ² (``None`` with another likelihood: see ``likelihood_param_``).
    likelihood_ : likelihood object
        The observation model fitted.
    likelihood_param_ : float or None
        Its own parameter at the fit (σ², the Student-t's squared scale, the negative binomial's
        dispersion; ``None`` for the Poisson).
    n_iter_ : int
        EM iterations run.
    sigma_ : ndarray (k, k)
        Covariance of the ``k`` nonzero entries of ``beta_`` (bias column included) given the final
        E-step's variances (:meth:`gaussian_conditional`; with another likelihood, the Laplace
        approximation there, :func:`~sparsebayes.inference.engines.em.laplace_covariance`);
        ``predict(X, return_std=True)`` uses it.
    design_rank_ : int or None
        The rank ``r`` of the factored kernel design EM ran on; ``None`` for the dense design.
    beta_ : ndarray (n_columns,)
        All weights of the design, the bias column's included (``feature_map_``'s columns: for linear
        and quadratic features, terms of the standardized inputs).
    feature_map_ : transformer
        The fitted feature map (its ``get_feature_names_out`` names ``beta_``'s entries).
    objective_ : float
        The objective EM climbs, at the fit: ``log p(y | β, σ²) + log p(β)`` up to a constant (the
        Jeffreys ``log p(β)`` over the nonzero weights; with γ estimated, ``+ log p(β | γ̂) + log p(γ̂)``).
    prior_ : hierarchy object
        The hierarchy at the fit, its shared hyperparameters at their estimates when estimated.
    gamma_ : float
        The Laplace prior's γ at the fit: the estimate with ``gamma_prior``, else ``gamma`` (Laplace
        hierarchies only).
    """

    #: The generic estimator's arguments this paper class fixes (class attributes, not parameters).
    method = "em"
    options = None

    def __init__(self, *, prior="jeffreys", gamma=1.0, gamma_prior=None, likelihood="gaussian", features="linear",
                 kernel_width="scale", bias=True, standardize=True, noise_var=None, tol=1e-3, max_iter=1000,
                 low_rank=True):
        set_init_params(self, locals())


class SparseProbitClassifier(SparseClassifier):
    """Sparse probit classifier by EM under a Laplace or Jeffreys hyperprior (002; 000 Sec. 4).

    ``P(y = 1 | x) = Φ(βᵀh(x))``; for ``k > 2`` classes, ``k`` one-vs-all classifiers (002
    Sec. 4.2) whose ``Φ(β_cᵀh(x))`` are normalized into class probabilities (our choice; the
    paper does not say how it combines them). With ``link="logistic"``, ``P(y = 1 | x) = σ(βᵀh(x))``
    by the Pólya-Gamma EM (:class:`~sparsebayes.models.likelihoods.BernoulliLogisticLikelihood`):
    sparse logistic regression under the same hierarchies.

    Parameters
    ----------
    prior, gamma, gamma_prior, features, kernel_width, bias, standardize, tol, max_iter, low_rank
        As for :class:`AdaptiveSparseRegressor` (no noise variance: the latent noise is N(0, 1)); with
        ``gamma_prior`` each one-vs-all classifier estimates its own γ.
    link : {"probit", "logistic"}, default="probit"
        The link ``P(y = 1 | x) = F(βᵀh(x))``: the paper's probit ``Φ`` (002) or the logistic ``σ``
        (:data:`~.links.LINKS`). With the Laplace prior and γ fixed, the logistic fit is the ℓ1-penalized
        logistic regression ``min Σ log-loss + √γ ‖β‖₁`` (scikit-learn's ``LogisticRegression(
        penalty="l1", C=1/√γ)`` with the same bias handling).

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray (1, n_basis) for two classes, (n_classes, n_basis) otherwise
        In the raw terms, as for :class:`AdaptiveSparseRegressor`.
    intercept_ : ndarray (1,) or (n_classes,)
    relevance_indices_ : ndarray
        Basis functions nonzero in any classifier; with kernel features, training points.
    n_active_ : int
        Their number.
    n_iter_ : int or ndarray
        EM iterations (per one-vs-all classifier when ``k > 2``).
    design_rank_ : int or None
        As for :class:`AdaptiveSparseRegressor`.
    beta_ : ndarray (n_classifiers, n_columns)
        All weights, one row per one-vs-all classifier (one row for two classes), bias included, on
        ``feature_map_``'s columns.
    feature_map_ : transformer
        The fitted feature map.
    objective_ : float or ndarray
        The EM objective of each classifier at its fit (log posterior up to a constant).
    laplace_cov_ : list of ndarray
        Per classifier, the covariance of its nonzero weights (``beta_`` order, bias included) in the
        Laplace approximation at the fit given the final E-step's variances ``τ̂``
        (:func:`~sparsebayes.inference.engines.em.laplace_covariance`): EM's fixed point is the mode of the
        probit model with the Gaussian prior ``N(0, τ̂)``. It is taken at the returned weights, which
        approach that mode as ``tol → 0`` (Pima at the default ``tol``: a Newton step to the mode is
        under 0.01 sd; near separability the iterates are still growing, and so is the covariance).
        It holds ``τ̂`` fixed and pruned weights at zero, so it understates the posterior spread;
        ``to_inference_data(draws=N)`` draws from it.
    prior_ : hierarchy object or list
        The hierarchy at the fit (a list, one per classifier, when ``k > 2``).
    gamma_ : float or ndarray
        The Laplace prior's γ at the fit (per one-vs-all classifier when ``k > 2``), as for
        :class:`AdaptiveSparseRegressor`.
    """

    #: The generic estimator's arguments this paper class fixes (class attributes, not parameters).
    method = "em"
    options = None

    def __init__(self, *, prior="jeffreys", gamma=1.0, gamma_prior=None, link="probit", features="linear",
                 kernel_width="scale", bias=True, standardize=True, tol=1e-3, max_iter=1000, low_rank=True):
        set_init_params(self, locals())
