"""What the type-II estimators say after a fit: degenerate fits (:func:`warn_degenerate`), a
collapsed noise variance, a cycle of moves, ``max_iter``. Shared by the regressors
(:mod:`sparsebayes.inference.estimators.typeii_estimators`) and the Bernoulli RVM
(:mod:`sparsebayes.inference.estimators.rvm_classifier`), so the advice reads the same in both.

Degenerate fits: the empty model (every basis function pruned; ``objective_`` its evidence), a
non-finite objective and a fit that never left its start give a :class:`~sparsebayes.inference._warnings.DegenerateFitWarning` that
says what to change. Without an intercept the usual cause is uncentred inputs: on ``X + 100``
every column is nearly the constant direction and only their differences carry the signal, so no
single add raises the evidence (with the collinearity guard ``align_max`` off too) and the search
ends where it began; the start, Tipping & Faul's column of largest ``(φ_iᵀy)²/‖φ_i‖²``, is then
no better than any other. Centring (``fit_intercept=True``) removes the cause. Further from the
origin (``X + 1000``) the search may move, re-estimating its start, and stop there converged with
R² ≈ 0 where least squares on the same columns explains 0.96: the missed-signal check
(:func:`~sparsebayes.inference._warnings.missed_signal`, least squares on the fitted design as the
oracle) catches it, as it would any other fit that misses a signal least squares finds at once.

The checks read the engine's final state and the design the engine saw, after every fit of the
regressors (``fit`` and :func:`~sparsebayes.inference.estimators.typeii_many.fit_many` share
:func:`~sparsebayes.inference.estimators.typeii_fit.finish_typeii`).
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from sparsebayes.models.features import GaussianKernelFeatures

from sparsebayes.inference._warnings import missed_signal, warn_degenerate

#: A fitted σ² at most this fraction of mean(y²) (the engine's floor is 1e-12 of it) means the fit
#: interpolates: a warning says so.
NOISE_COLLAPSE = 1e-9


def scale_advice(feature_map, target="y"):
    """What to change when no basis function explains ``target``: the Gaussian kernels' width
    against the data's scale, or the inputs' scale and the features otherwise. (The width is not
    formatted: it may be a number or a string such as ``"scale"``.)"""
    if isinstance(feature_map, GaussianKernelFeatures):
        return ("the Gaussian kernels' width (kernel_width, in the units of X) may not suit the data's scale: "
                "standardize X, or use kernel_width='scale'")
    return f"if {target} should depend on X, standardize X or choose other features"


def regressor_advice(fit_intercept, feature_map):
    """What to change after a degenerate regression fit, by whether it has an intercept."""
    if not fit_intercept:
        return ("without an intercept the columns must explain y through the origin: centre X and y, or use "
                "fit_intercept=True (uncentred columns that explain y only together, e.g. X + c, are never added "
                "one at a time)")
    return "no basis function explains y beyond its mean; " + scale_advice(feature_map)


def warn_after_fit(owner, fit, state, y_c, Phi=None):
    """The warnings of a fitted type-II regression (the :class:`~.typeii_fit.TypeIIFit` ``fit``), from the
    engine's final ``state`` (:mod:`.typeii`), the centred targets ``y_c`` and the (centred) design ``Phi`` it fitted (``None``: a
    factored design, not checked for a missed signal), under ``owner``'s name: a degenerate fit (the
    empty model, a non-finite objective, a fit that never left its start, a fit that misses a signal
    least squares on ``Phi`` finds) as a :class:`~sparsebayes.inference._warnings.DegenerateFitWarning`;
    else a collapsed σ², a cycle or ``max_iter``. Each says what happened and what to change."""
    options, prior = fit.options, fit.prior
    advice = regressor_advice(options.fit_intercept, fit.basis.feature_map)
    if not fit.active.any():
        predicts = "the mean of y" if options.fit_intercept else "0"
        warn_degenerate(owner, f"every basis function was pruned: the fit is the empty model, which predicts "
                        f"{predicts}", advice)
        return
    if not np.isfinite(float(state.objective)):
        warn_degenerate(owner, f"the objective is not finite ({float(state.objective)}) after {fit.n_iter} steps: "
                        "the engine broke down numerically, and the fit is not converged", advice)
        return
    if int(state.n_moves) == 0:
        warn_degenerate(owner, "no move raised the objective from the starting model (the one basis function best "
                        "aligned with y), so the fit stopped there (converged_ is False)", advice)
        return
    missed = None if Phi is None else missed_signal(Phi, y_c, Phi[:, fit.active] @ fit.coef[fit.active])
    if missed is not None:
        r2_fit, r2_ls, p_value = missed
        warn_degenerate(owner, f"the fit explains R² = {r2_fit:.2g} of y with {int(fit.active.sum())} basis function(s) "
                        f"where least squares on the same {Phi.shape[1]} design columns explains {r2_ls:.2g} (F-test "
                        f"p = {p_value:.1g}): the search stopped far from the signal", advice)
        return
    if prior.noise_update != "fixed" and fit.noise_var <= NOISE_COLLAPSE * float(np.mean(y_c**2)):
        warnings.warn(
            f"the estimated noise variance collapsed to {fit.noise_var:.3g} ({fit.noise_var / np.mean(y_c**2):.2g} "
            f"of mean(y²)): the fit interpolates the training data with {int(fit.active.sum())} basis functions "
            f"for {y_c.size} points, and its predictive sds are not to be trusted; fix the noise variance, or use "
            "fewer basis functions than points", UserWarning, stacklevel=4)
    # the hierarchies with a rate (BLS, FLAP) have Algorithm 1's lambda_update
    profiled_hint = ("" if prior.profile_lambda or not prior.has_rate else
                     "; lambda_update='profiled' moves by an ascent of L and converges")
    name = owner if isinstance(owner, str) else type(owner).__name__
    if fit.cycled:
        warnings.warn(
            f"{name} went round a cycle of moves and stopped after {fit.n_iter} steps at the "
            "cycle's largest evidence: Helgøy & Li's Algorithm 1 scores each move at the current lambda, "
            f"is not an ascent of their eq. 13 and need not settle{profiled_hint}", ConvergenceWarning, stacklevel=4)
    elif not fit.converged:
        warnings.warn(
            f"{name} did not converge in max_iter={options.max_iter} steps "
            f"(last gain {float(state.last_gain):.3g}); increase max_iter{profiled_hint}", ConvergenceWarning,
            stacklevel=4)
