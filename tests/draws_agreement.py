"""How far two sets of posterior draws are apart, in Monte Carlo standard errors: the measure by which the
samplers' tests hold one sampler's draws to another's (a Gibbs sampler against NUTS on the same model)."""
import numpy as np

from sparsebayes.inference.posterior import arviz_compat as compat


def mcse_agreement(a, b, names):
    """Largest |difference| / combined MCSE over the posterior means and sds of ``names`` in the
    InferenceData ``a`` and ``b`` (ArviZ's ``summary``): about 4 or more says they differ."""
    sa, sb = compat.summary(a, var_names=names), compat.summary(b, var_names=names)
    z_mean = np.abs(sa["mean"] - sb["mean"]) / np.hypot(sa["mcse_mean"], sb["mcse_mean"])
    z_sd = np.abs(sa["sd"] - sb["sd"]) / np.hypot(sa["mcse_sd"], sb["mcse_sd"])
    return float(max(z_mean.max(), z_sd.max()))
