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

A fit that predicts one class on its own training data, one whose kernels each reach no training
point but their own (a lookup table of its training points: the width is far below their spacing,
as on raw inputs in the hundreds at ``h = 1``), or one whose engine stopped at its
start (no move raised the evidence there: ``converged_`` is then False, since nothing was
searched), gives a :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` that says what
to change.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import log_expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from sparsebayes.models.features import GaussianKernelFeatures
from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood
from sparsebayes.models.priors.typeii import ARDPrior, check_no_noise_settings, typeii_hierarchy

from sparsebayes.inference.engines import typeii_laplace
from sparsebayes.inference.estimators._base import OneVsAllLinkClassifier, atomic_fit, basis_names, fit_feature_design, has_bias_column, raw_weights
from sparsebayes.inference._validation import check_flags, check_max_iter, check_number, validate_classification_data
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.posterior.idata import draws_idata, gaussian_draws, point_estimate_idata
from sparsebayes.inference.posterior.posterior_sampling import PosteriorSamplingMixin
from sparsebayes.inference.estimators.typeii_warnings import scale_advice


#: The classifier's likelihood on the engine's Laplace path.
LIKELIHOOD = BernoulliLogisticLikelihood()

#: A kept kernel below this at every other training point (``‖x_i − x_j‖ > 3.7 h`` for all ``i ≠ j``)
#: reaches no training point but its own.
ISOLATED_KERNEL = 1e-3


class RVMClassifier(ClassifierMixin, OneVsAllLinkClassifier, PosteriorSamplingMixin, BaseEstimator):
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
        builds this estimator. The posterior twin (``compare``) is ARD's only.
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

    def __init__(self, *, prior="ard", features="kernel", kernel_width="scale", bias=True, max_iter=1000, tol=1e-6):
        self.prior = prior
        self.features = features
        self.kernel_width = kernel_width
        self.bias = bias
        self.max_iter = max_iter
        self.tol = tol

    @atomic_fit
    def fit(self, X, y):
        """Fit by sequential type-II maximum likelihood with the Laplace approximation at the mode
        (Tipping 2001, Sec. 4; Tipping & Faul 2003, Sec. 5), one-vs-all beyond two classes; returns ``self``."""
        check_flags(self)
        check_max_iter(self.max_iter)
        check_number("tol", self.tol, 0.0)
        hierarchy = check_no_noise_settings(typeii_hierarchy(self.prior), "RVMClassifier")
        X, y_enc = validate_classification_data(self, X, y)
        # standardize linear / quadratic inputs: the bias absorbs the offset, and the flat hyperprior
        # on each α makes the model scale-free, so the engine's absolute floors meet unit columns
        self.feature_map_, Phi = fit_feature_design(X, self.features, kernel_width=self.kernel_width, bias=self.bias,
                                                    center=bool(self.bias), scale=bool(self.bias))
        targets = [y_enc == 1] if len(self.classes_) == 2 else [y_enc == c for c in range(len(self.classes_))]
        targets = [t.astype(np.float64) for t in targets]
        mask = np.any(Phi != 0, axis=0)
        states = [typeii_laplace.fit(Phi, t, mask, likelihood=LIKELIHOOD, prior=hierarchy, max_iter=int(self.max_iter),
                                     tol=self.tol) for t in targets]
        self._set_fitted(Phi, targets, states)
        self.prior_ = hierarchy
        if hierarchy.has_rate:  # per classifier: the fitted rate λ on the variances and its square root
            self.gamma_ = np.array([float(s.lam) for s in states])
            self.lam_ = np.sqrt(self.gamma_)
        self._warn(Phi, states)
        return self

    def _set_fitted(self, Phi, targets, states):
        """The fitted attributes from the engine states (one per classifier, with its 0/1 targets)."""
        self.beta_ = np.array([np.asarray(typeii_laplace.coefficients(s, Phi.shape[1])) for s in states])
        self.active_ = np.array([np.asarray(s.var) > 0 for s in states])
        first = int(has_bias_column(self.feature_map_))
        raw = np.atleast_2d(raw_weights(self.feature_map_, self.beta_))
        self.coef_ = raw[:, first:]
        self.intercept_ = raw[:, 0] if first else np.zeros(len(states))
        self.prior_var_ = np.array([np.asarray(s.var) for s in states])
        self.prior_ = ARDPrior()
        self.likelihood_ = LIKELIHOOD
        self.weights_basis_ = "raw"
        self.laplace_cov_ = [np.asarray(typeii_laplace.posterior_covariance(Phi, t, s, likelihood=LIKELIHOOD))
                             for t, s in zip(targets, states)]
        self.objective_ = np.array([float(s.objective) for s in states])
        self.n_iter_ = np.array([int(s.n_iter) for s in states])
        self.stalled_ = np.array([bool(s.stalled) for s in states])
        self.converged_ = np.array([bool(s.converged) and not typeii_laplace.stopped_at_start(s) for s in states])
        # the kept basis functions of the model (on the centred inputs' terms; coef_ in the raw terms
        # can have more nonzero linear terms with quadratic features)
        self.relevance_indices_ = np.flatnonzero(np.any(self.beta_[:, first:] != 0, axis=0))
        self.n_active_ = int(self.relevance_indices_.size)

    def _warn(self, Phi, states):
        """A :class:`ConvergenceWarning` for stalled fits or ``max_iter``; a :class:`DegenerateFitWarning`
        for a constant classifier or a fit that stopped at its start."""
        at_start = np.array([typeii_laplace.stopped_at_start(s) for s in states])
        if np.any(self.stalled_):
            warnings.warn(f"RVMClassifier: {int(self.stalled_.sum())} of {len(states)} fits stopped on a cycle of "
                          "moves that did not raise the Laplace evidence (near-separable classes); the best state "
                          "visited is kept", ConvergenceWarning)
        if not np.all(self.converged_ | self.stalled_ | at_start):
            warnings.warn(f"RVMClassifier did not converge in max_iter={self.max_iter} steps; increase max_iter",
                          ConvergenceWarning)
        eta = Phi @ self.beta_.T
        predicted = (eta[:, 0] > 0).astype(int) if eta.shape[1] == 1 else np.argmax(eta, axis=1)
        if np.unique(predicted).size == 1:
            what = (f"it predicts one class ({self.classes_[predicted[0]]}) for every training point"
                    + (f", and {int(at_start.sum())} of {len(states)} fits stopped at their start" if at_start.any()
                       else ""))
            warn_degenerate(self, what, scale_advice(self.feature_map_, "the labels"), stacklevel=5)
        elif self._isolated_kernels(Phi):
            warn_degenerate(self, f"each of its {self.n_active_} kernels is below {ISOLATED_KERNEL:g} at every other "
                            "training point: it recalls its training points, and away from them predicts the "
                            "bias's class", scale_advice(self.feature_map_, "the labels"), stacklevel=5)
        elif at_start.any():
            warn_degenerate(self, f"{int(at_start.sum())} of {len(states)} fits stopped at their start (no move raised "
                            "the Laplace evidence from the one basis function best aligned with the labels); "
                            "converged_ is False there", scale_advice(self.feature_map_, "the labels"), stacklevel=5)

    def _isolated_kernels(self, Phi):
        """Whether every kept Gaussian kernel is below :data:`ISOLATED_KERNEL` at every training point but
        its own centre: the width is far below the spacing of the points (raw breast-cancer inputs,
        in the hundreds, at ``h = 1``), so the fit is a lookup table of training points."""
        if not isinstance(self.feature_map_, GaussianKernelFeatures) or self.n_active_ == 0:
            return False
        first = int(has_bias_column(self.feature_map_))
        kept = self.relevance_indices_  # kernel j is column first + j, centred on training point j
        K = Phi[:, first + kept].copy()
        K[kept, np.arange(kept.size)] = 0.0
        return bool(np.max(K) < ISOLATED_KERNEL)

    def _log_link(self, eta):
        """``log σ(η)``, the logistic link."""
        return log_expit(eta)

    def to_inference_data(self, *, draws=0, seed=0):
        """ArviZ ``InferenceData``: the mode weights per classifier (one chain, one draw), or with
        ``draws > 0`` draws of the Laplace posterior ``N(w*, Σ)`` at the fitted α (zeros
        off the active set), both as weights of the raw terms (:func:`~._base.raw_weights`)."""
        check_is_fitted(self, "coef_")
        cls = [str(c) for c in (self.classes_[1:] if len(self.classes_) == 2 else self.classes_)]
        coords = {"classifier": cls, "basis": basis_names(self, self.feature_map_, self.beta_.shape[1])}
        dims = {"beta": ["classifier", "basis"]}
        if draws:
            per_class = zip(self.beta_, self.prior_var_, self.laplace_cov_)
            beta = np.stack([gaussian_draws(beta, cov, n_draws=draws, seed=None if seed is None else [seed, c],
                                            active=var > 0)
                             for c, (beta, var, cov) in enumerate(per_class)], axis=2)
            return draws_idata({"beta": raw_weights(self.feature_map_, beta)}, method="rvm-bernoulli-laplace",
                               coords=coords, dims=dims, attrs={"objective": self.objective_.tolist()})
        return point_estimate_idata({"beta": raw_weights(self.feature_map_, self.beta_)}, method="rvm-bernoulli-typeii",
                                    coords=coords, dims=dims, attrs={"objective": self.objective_.tolist()})

    def posterior_model(self, X=None, y=None, *, surrogate_eps=None, train=None):
        """This fit's model as a record (:func:`sparsebayes.inference.posterior.twin_builders.bernoulli_rvm_model`)."""
        from sparsebayes.inference.posterior.twin_builders import bernoulli_rvm_model
        if hasattr(self, "prior_") and not isinstance(self.prior_, ARDPrior):  # TODO: the Laplace prior's twin
            raise ValueError(f"RVMClassifier's posterior twin is written for the ARD prior; this fit's is "
                             f"{type(self.prior_).__name__}")
        return bernoulli_rvm_model(self, X, y, surrogate_eps, train)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
