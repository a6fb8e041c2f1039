"""SMLR / RMLR classifiers: ``SparseClassifier(method="map")`` with the penalty as a parameter.

:class:`SMLRClassifier` fits the MAP multinomial logistic regression of Krishnapuram et
al. (2005) with the last class as reference (eq. 1),

    max_W  ℓ(W) − λ‖W‖₁          (penalty="l1": SMLR, eq. 3)
    max_W  ℓ(W) − λ‖W‖²/2        (penalty="l2": RMLR, Sec. 3.3)
    max_W  ℓ(W)                  (penalty=None: ML, Sec. 3.2)

on a basis ``h(x)`` (linear, quadratic or Gaussian kernels centred on the training points,
from :mod:`sparsebayes.models.features`).  :class:`SMLRClassifier` is
:class:`~sparsebayes.inference.estimators.sparse_estimators.SparseClassifier` with ``method="map"`` fixed
and the hierarchy given as SMLR's ``penalty`` and ``lam``: it fits by the MAP fitting core
(:func:`~sparsebayes.inference.estimators.map_fit.fit_map_model`) and answers through
:class:`~sparsebayes.inference.estimators.map_fitted.MapClassifierMethods`. :class:`SMLRCV`
(:mod:`sparsebayes.inference.estimators.smlr_cv`) picks λ, and the kernel width, by
cross-validation.

The paper's prior covers the whole ``w``, the bias weight included (eq. 3; Sec. 3.3 for the Gaussian):
on the raw inputs the penalized intercept then depends on where the origin of ``x`` lies and the fit
on the units of X (an offset of 1e4 moved RMLR's probabilities by 0.17). By default
(``standardize=True``) the linear and quadratic maps act on the standardized inputs, so the bias is
the logit at the training mean (a centred bias, penalized like the other weights, as the EM
estimators' ``standardize``) and the weights are per training SD: offsets and units leave the fit
as it was. ``standardize=False`` is the paper's basis, which its reproductions
(:mod:`sparsebayes.comparisons.experiments.smlr`) ask for.
"""
from __future__ import annotations

from sparsebayes.inference.estimators._base import set_init_params
from sparsebayes.inference.estimators.map_fit import MapOptions
from sparsebayes.inference.estimators.sparse_estimators import SparseClassifier
from sparsebayes.models.priors.penalty import penalty_prior


class SMLRClassifier(SparseClassifier):
    """Sparse (l1, SMLR) or ridge (l2, RMLR) multinomial logistic regression by bound optimization.

    Parameters
    ----------
    penalty : {"l1", "l2", None}, default="l1"
        Laplace prior (SMLR, eq. 3), Gaussian prior (RMLR, Sec. 3.3) or none (ML).
    lam : float, default=1.0
        ``λ``: the Laplace parameter, or the Gaussian prior's inverse variance. Its size is
        relative to the units of ``h(x)``: above ``λ_max`` (:func:`~.smlr_scale.lambda_max`) every SMLR weight is
        zero, and the fit warns (:class:`~sparsebayes.inference._warnings.DegenerateFitWarning`).
    lam_relative : bool, default=False
        Take ``lam`` as a fraction of ``λ_max`` of the training data (SMLR only): ``λ = lam · λ_max``,
        in ``lam_``. ``lam=0.01, lam_relative=True`` keeps the same penalty whatever the units of X;
        the default takes ``lam`` as the number ``λ``.
    solver : {"auto", "newton", "surrogate-cd", "componentwise", "block"}, default="auto"
        Component-wise updates (eqs. 15–16), the block update (eqs. 7, 10, 13 with
        over-relaxation), the block surrogate maximized by coordinate sweeps, or an MM step
        followed by a damped Newton step on its support (not in the paper; same optimum)
        (:mod:`sparsebayes.inference.engines.bound`); ``"auto"``: :func:`~.map_fit.choose_solver`.
    features : {"linear", "quadratic", "kernel", None} or transformer, default="linear"
        ``h(x)``: inputs with a bias column, quadratic features, Gaussian kernels
        ``exp(−‖x−x'‖²/(2h²))`` on the training points (with a bias), raw ``X``, or any
        transformer (cloned; e.g. ``PolynomialFeatures(3)`` for the paper's polynomial basis).
        Every weight of the basis, the bias included, is penalized, as in the paper (eq. 3 and
        Sec. 3.3 put the prior on the whole ``w``); ``standardize`` says on which basis.
    kernel_width : float or "scale", default="scale"
        ``h`` for ``features="kernel"``; ``"scale"`` takes it from the training inputs,
        ``h = √(Σ_j var(x_j) / 2)`` (scikit-learn's ``SVC(gamma="scale")`` on centred columns);
        ``feature_map_.width_`` holds the one in use.
    standardize : bool, default=True
        For the linear and quadratic maps: the basis is built on the standardized inputs
        ``z = (x − mean)/sd`` (training mean and SD; :class:`~sparsebayes.models.features.LinearFeatures`
        with ``center`` and ``scale``). The bias weight is then the logit at the training mean (a
        centred bias) and every weight is in units of one SD, so the fit, hence ``predict_proba``,
        does not move when columns are offset or change units: ``λ`` is a unit-free prior precision
        (``l2``) or Laplace weight (``l1``). A binary ``penalty="l2"`` fit is scikit-learn's
        ``LogisticRegression(C=1/λ, solver="liblinear", intercept_scaling=1)`` on the standardized
        inputs, whose intercept is penalized like a weight of a column of ones. ``coef_`` and
        ``intercept_`` give the same function of the raw inputs. ``False``: the paper's eqs. 2-3 (and
        Sec. 3.3's Gaussian prior) on the basis of the raw ``x``, as the reproductions of Krishnapuram
        et al. (2005) fit it: an offset of a column moves the penalized intercept and the fit, and the
        fit depends on the units of X by design; the bias column is then ``bias_scale_`` (a power of
        two; 1 for inputs within a factor 8 of unit size), so that the penalty on the intercept follows
        the units of X (:func:`~.smlr_scale.bias_scale`). Gaussian kernels (translation-invariant, their width
        sets the scale), ``features=None`` and transformers take the inputs as they are either way.
    tol : float, default=1e-6
        Stop when ``max|ΔW| / max|W| < tol``.
    max_iter : int, default=2000
        Iterations (block) or sweeps (component-wise).
    warm_start : bool, default=False
        Start from the previous fit's weights when the shapes agree.
    random_state : int, RandomState or None, default=0
        Seeds the visitation of zero weights (:func:`~.map_fit.visitation_seed`; ``None``: a fresh seed each fit).

    Attributes
    ----------
    classes_ : ndarray (m,)
        Class labels; the last is the reference class.
    coef_ : ndarray (m, n_features_out), or (1, n_features_out) for two classes
        ``LogisticRegression``'s layout (:func:`~.map_fit.sklearn_layout`): ``decision_function(X)`` is
        ``X_out @ coef_.T + intercept_``, ``X_out`` the raw terms of the design without its bias column
        (``X`` itself for linear features; the terms ``feature_map_.get_feature_names_out`` names; with
        ``standardize=False`` or kernels, ``feature_map_.transform(X)``); the reference class's row is zero.
    intercept_ : ndarray (m,), or (1,) for two classes: the logits at ``x = 0`` (zeros without a bias column).
        ``to_inference_data``, ``active_`` and ``n_nonzero_`` read the weights on ``feature_map_``'s columns
        (with ``standardize``, of the standardized inputs: the bias is the logit at the training mean).
    feature_map_ : transformer or None
    active_ : bool (n_basis,), the basis functions with a nonzero weight in some class (the kept basis);
        ``n_active_`` counts them, ``n_nonzero_`` counts the nonzero weights.
    relevance_indices_ : training points whose kernels are retained (Gaussian kernel bases only).
    bias_scale_ : float
        The bias column's value in the penalized problem: the intercept ``b`` is penalized as
        ``λ|b|/bias_scale_`` (``objective_`` and ``optimality_residual_`` are that problem's; its
        NumPyro twin is the model on the design with the bias column times ``bias_scale_``).
    lam_ : float
        The ``λ`` fitted (``lam``, or ``lam · λ_max`` with ``lam_relative``; 0 without a penalty).
    prior_ : LaplacePrior, GaussianPrior or FlatPrior
        The hierarchy fitted, ``penalty``'s at ``lam_`` (:func:`~sparsebayes.models.priors.penalty.penalty_prior`:
        ``LaplacePrior.from_lam(lam_)``, ``GaussianPrior(lam_)``, ``FlatPrior()``):
        ``SparseClassifier(method="map", prior=prior_)``, with the same features and options (but
        ``lam_relative``: ``prior_`` holds the absolute λ), refits it.
    likelihood_ : MultinomialLogisticLikelihood
        The likelihood fitted (:class:`~sparsebayes.models.likelihoods.multinomial.MultinomialLogisticLikelihood`,
        003 eqs. 1–2, the last class the reference).
    n_nonzero_, n_iter_, objective_, optimality_residual_, solver_

    A fit sets or deletes every fitted attribute; a fit that fails (bad input, or a warning
    turned into an error) leaves the estimator unfitted, the previous model lost, as in
    scikit-learn.
    """

    #: The generic estimator's arguments this paper class fixes (class attributes, not parameters).
    method = "map"
    prior = None
    link = None
    options = None

    def __init__(self, *, penalty="l1", lam=1.0, lam_relative=False, solver="auto", features="linear", kernel_width="scale",
                 standardize=True, tol=1e-6, max_iter=2000, warm_start=False, random_state=0):
        set_init_params(self, locals())

    def _map_setup(self):
        """``(penalty, lam, options)`` of this estimator's parameters (:meth:`~.map_fitted.MapClassifierMethods._fit_map`):
        ``ValueError`` for a penalty outside ``("l1", "l2", None)`` or a ``lam`` that is not a positive number."""
        penalty_prior(self.penalty, self.lam)
        return self.penalty, self.lam, MapOptions(
            features=self.features, kernel_width=self.kernel_width, standardize=self.standardize,
            lam_relative=self.lam_relative, solver=self.solver, tol=self.tol, max_iter=self.max_iter,
            warm_start=self.warm_start, random_state=self.random_state)
