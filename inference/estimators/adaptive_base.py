"""What Figueiredo's two EM estimators share (:mod:`sparsebayes.inference.estimators.adaptive`): the hierarchy
and its checks, the design (standardized inputs, see that module's docstring), the EM call, the
fitted hierarchy ``prior_`` and its ``gamma_``/``lam_``, the support, and the warnings on
degenerate fits."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sparsebayes.models.features import GaussianKernelFeatures, scale_width
from sparsebayes.models.priors import hierarchy_name, is_hierarchy, make_prior, require

from sparsebayes.inference.estimators._base import (
    fit_design_or_factor,
    fit_feature_design,
    has_bias_column,
    raw_weights,
    standardization,
)
from sparsebayes.inference._validation import check_flags, check_max_iter, check_number
from sparsebayes.inference._warnings import warn_degenerate
from sparsebayes.inference.engines.em import fit_em
from sparsebayes.inference.engines.em_working_set import fit_em_working_set, large_design, use_working_set


def _kernel_width_hint(fm):
    """What to change about a fitted Gaussian kernel map's width when EM kept none of its kernels:
    kernels much narrower than the data's spread each fit one point, much wider ones are all
    nearly the bias; the ``"scale"`` width (:func:`~sparsebayes.models.features.scale_width`) is
    the yardstick."""
    scale = scale_width(fm.centers_)
    if isinstance(fm.width, str):
        return f"the Gaussian kernels have the 'scale' width {scale:.3g}: try a smaller kernel_width"
    side = "narrower" if fm.width_ < scale else "wider"
    return (f"the Gaussian kernels' width {fm.width_:.3g} is {side} than the data's 'scale' width {scale:.3g}: "
            "use kernel_width='scale', or standardize X")


def _conditioned_on(prior):
    """What the Gaussian draws at an EM fit hold fixed: the final E-step's prior variances
    ``1/E[1/v_i | β_i]`` (``β_i²`` for Jeffreys, where that is the plug-in itself)."""
    if hierarchy_name(prior) == "jeffreys":
        return "plug-in tau_i = beta_i^2"
    return "tau_i = 1/E[1/tau_i | beta_i]"


def _warn_if_collinear(estimator, H, what="the design", stacklevel=5):
    """``DegenerateFitWarning`` when a linear or quadratic design (not wider than it is tall) has
    numerically dependent columns (duplicated inputs, an exact linear relation): the sparse MAP is
    then not unique (the Jeffreys and Laplace penalties are flat along the dependence), so which
    of the dependent columns EM keeps, or how it splits the weight between them, depends on the
    start and on rounding. Kernel designs are left out: their columns are near-dependent by design.
    ``what`` names the columns checked (the working-set path checks the kept ones)."""
    H = H[:, np.any(H != H[:1], axis=0) | np.all(H != 0, axis=0)]  # constant columns beside the bias are fitted as zero
    n, p = H.shape
    if p > n or p == 0:
        return
    sv = np.linalg.svd(H, compute_uv=False)
    rank = int(np.sum(sv > sv[0] * max(n, p) * np.finfo(float).eps * 1e3))
    if rank < p:
        warn_degenerate(estimator, f"{what} has {p} columns but rank {rank} (duplicated or collinear inputs): "
                        "the sparse estimate is not unique, and which of the dependent columns is kept depends on "
                        "rounding", "drop or combine the dependent inputs", stacklevel=stacklevel)


def _is_prior_list(prior):
    """A list of hierarchies, one per one-vs-all classifier (a multiclass fit's ``prior_``), not one
    hierarchy object (some are NamedTuples, so tuples themselves)."""
    return isinstance(prior, (list, tuple)) and not is_hierarchy(prior)


class _AdaptiveSparseBase(BaseEstimator):
    def _check_params(self):
        """The checked hierarchy object (a list of them, one per one-vs-all classifier, for a classifier's
        list ``prior``, the ``prior_`` of a multiclass fit). A refit starts from nothing: every fitted
        attribute of an earlier fit is removed first, so none (``gamma_``, ``lam_`` of a Laplace fit after
        ``set_params(prior="jeffreys")``) outlives the fit that set it."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)
        check_flags(self)
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise ValueError(f"standardize must be True or False, got {self.standardize!r}")
        check_number("tol", self.tol, 0.0, strict=True)
        check_max_iter(self.max_iter)
        if not _is_prior_list(self.prior):
            return require(make_prior(self.prior, self.gamma, self.gamma_prior), "em")
        if not is_classifier(self):
            raise ValueError(f"{type(self).__name__} fits one hierarchy: prior must be a name or a hierarchy object, "
                             f"not a list ({self.prior!r}); a list, one per one-vs-all classifier, is the prior_ of "
                             "a multiclass SparseProbitClassifier")
        if not self.prior or not all(is_hierarchy(p) for p in self.prior) or len(
                {hierarchy_name(p) for p in self.prior}) != 1:
            raise ValueError(f"a list prior must hold hierarchy objects of one kind, one per one-vs-all classifier "
                             f"(a multiclass fit's prior_), got {self.prior!r}")
        return [require(make_prior(p, self.gamma, self.gamma_prior), "em") for p in self.prior]

    @staticmethod
    def _classifier_prior(prior, c, n_classifiers):
        """The hierarchy of one-vs-all classifier ``c`` of ``n_classifiers``: ``prior`` itself, or its
        ``c``-th entry when it is a list (``ValueError`` unless the list has one per classifier)."""
        if not isinstance(prior, list):
            return prior
        if len(prior) != n_classifiers:
            raise ValueError(f"prior holds {len(prior)} hierarchies but the data have {n_classifiers} one-vs-all "
                             f"classifier(s): a list prior (a multiclass fit's prior_) refits data with as many classes")
        return prior[c]

    def _design(self, X, prior):
        """``(feature map, H, factor)``: with ``low_rank``, ``factor`` is the :class:`DesignFactor` of a
        low-rank kernel design and ``H`` is ``None``; otherwise ``factor`` is ``None``. Sets ``design_rank_``.
        Inputs are scaled only under a ``scale_free`` ``prior`` (the checked hierarchy object; of one kind
        in a list)."""
        prior = prior[0] if isinstance(prior, list) else prior
        kw = dict(kernel_width=self.kernel_width, bias=self.bias, **standardization(self.standardize, self.bias, prior))
        if self.low_rank:
            fm, H, factor = fit_design_or_factor(X, self.features, **kw)
        else:
            (fm, H), factor = fit_feature_design(X, self.features, **kw), None
        self.design_rank_ = None if factor is None else int(factor.basis.shape[1])
        if H is not None and not isinstance(fm, GaussianKernelFeatures) and not large_design(H):
            _warn_if_collinear(self, H)  # a large design's is checked by _em (an SVD of it costs O(np²))
        return fm, H, factor

    def _em(self, H, factor, y, prior, likelihood, y_init, noise_var=None, *, fm, which=""):
        """EM on the design; at large ``n · p`` with the Gaussian likelihood on the working set of
        :func:`~sparsebayes.inference.engines.em_working_set.fit_em_working_set`, which never forms ``HᵀH``
        (the collinearity check then runs on the kept columns)."""
        linear = isinstance(H, np.ndarray) and not isinstance(fm, GaussianKernelFeatures)
        if isinstance(H, np.ndarray) and use_working_set(H, likelihood, factor):
            res = fit_em_working_set(H, y, prior, likelihood, noise_var=noise_var, tol=self.tol,
                                     max_iter=self.max_iter)
            if linear:
                _warn_if_collinear(self, H[:, np.flatnonzero(res.beta)], "the kept columns")
        else:
            if linear and large_design(H):
                _warn_if_collinear(self, H)
            res = fit_em(H, y, prior, likelihood, y_init=y_init, noise_var=noise_var,
                         tol=self.tol, max_iter=self.max_iter, factor=factor)
        if not res.converged:
            warnings.warn(
                f"EM stopped at max_iter={self.max_iter} before the relative change fell below "
                f"tol={self.tol}; increase max_iter", ConvergenceWarning, stacklevel=3)
        self._warn_if_constant(res.beta, fm, likelihood, which)
        return res

    def _warn_if_constant(self, beta, fm, likelihood, which):
        """:func:`warn_degenerate` when EM pruned every basis weight, with or without the bias: the fit
        is then one number (a prediction, or a class) whatever ``x``. ``which`` names the one-vs-all
        classifier (empty for a single fit)."""
        has_bias = has_bias_column(fm)
        if np.any(beta[int(has_bias):]):
            return
        classifier = getattr(likelihood, "support", "real") in ("binary", "categorical")
        subject = ("the classifier" if classifier else "the fit") + which
        if np.any(beta):
            what = (f"EM pruned every weight but the bias: {subject} predicts "
                    f"{'one class' if classifier else 'one value'} everywhere")
        else:
            what = (f"EM pruned every weight{', the bias included' if has_bias else ''}: {subject} predicts "
                    f"{'probability 1/2' if classifier else '0'} everywhere")
        target = "the labels" if classifier else "y"
        change = ("the Laplace penalty sqrt(gamma)·Σ|β_i| depends on the units of y and of the features: "
                  "standardize them or lower gamma" if self.prior == "laplace" else
                  f"no basis function explained enough of {target} to be kept")
        if isinstance(fm, GaussianKernelFeatures):
            change += "; " + _kernel_width_hint(fm)
        warn_degenerate(self, what, change, stacklevel=4)

    def _set_fitted_prior(self, priors):
        """``prior_`` (and, for a hierarchy with a γ, ``gamma_`` and ``lam_ = √γ``, the l1 weight) from
        the fitted hierarchy of each classifier (one for a regression or two classes)."""
        self.prior_ = priors[0] if len(priors) == 1 else priors
        if all(hasattr(p, "gamma") for p in priors):
            gammas = [float(p.gamma) for p in priors]
            self.gamma_ = gammas[0] if len(gammas) == 1 else np.array(gammas)
            self.lam_ = np.sqrt(self.gamma_)

    def _split_bias(self, beta):
        """``(coef, intercept)`` in the raw terms (:func:`~._base.raw_weights`) of ``beta`` on the
        fitted ``feature_map_``'s columns."""
        beta = np.atleast_2d(raw_weights(self.feature_map_, beta))
        if has_bias_column(self.feature_map_):
            return beta[:, 1:], beta[:, 0]
        return beta, np.zeros(beta.shape[0])

    def _set_support(self):
        """The kept basis functions: nonzero in ``beta_`` (in any classifier), the bias excluded. With
        quadratic features these are the terms of the centred inputs, the model's basis; ``coef_``
        re-expressed in the raw terms can have more nonzero linear terms."""
        beta = np.atleast_2d(self.beta_)[:, int(has_bias_column(self.feature_map_)):]
        self.active_ = np.any(beta != 0, axis=0)
        self.relevance_indices_ = np.flatnonzero(self.active_)
        self.n_active_ = int(self.relevance_indices_.size)
