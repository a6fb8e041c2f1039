"""The Student-t likelihood ``y = η + s ε``, ``ε ~ t_ν``: robust regression noise, as the Gaussian
scale mixture ``y_i | λ_i ~ N(η_i, s²/λ_i)``, ``λ_i ~ Gamma(ν/2, ν/2)`` (Lange, Little & Taylor 1989)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.scipy.special import gammaln

from .registry import masked_sum, row_mask


class StudentTLikelihood(NamedTuple):
    """``y_i ~ t_ν(η_i, s²)`` with ``ν = df`` fixed; its own parameter (``params``) is the squared
    scale ``s²``.

    EM takes the scale mixture's E-step ``E[λ_i | r_i] = (ν + 1)/(ν + r_i²/s²)``, ``r_i = y_i − η_i``
    (Lange, Little & Taylor 1989, eq. 4): the working weights ``λ_i/s²`` on the data themselves.
    ``log(1 + u/(νs²))`` is concave in ``u = r²``, so its tangent at ``r_i²`` bounds it: the surrogate
    ``−½ λ_i r'²/s²`` (plus a constant) is below the log likelihood and touches it at the current
    ``η``, and EM is monotone; the scale's update is EM's too (:meth:`update_params`). The log
    likelihood is not concave in ``η`` (``|r| > √ν s``): ``curvature`` is the Fisher information
    ``(ν + 1)/((ν + 3) s²)``.
    """

    #: Degrees of freedom ν (> 2 for a finite variance; fixed, not estimated).
    df: float = 4.0

    #: What ``y`` is: "real", "counts" (nonnegative integers), "binary" (0/1) or "categorical" (one-hot).
    support = "real"
    #: The registry name.
    name = "student_t"
    #: What its own parameter is: the squared scale s².
    param_name = "scale2"
    #: The working weights ``λ_i/s²`` vary by row.
    constant_weight = False
    #: The scale-mixture surrogate minorizes the log likelihood: EM climbs its objective.
    monotone_em = True
    #: Not log-concave: ``curvature`` is the Fisher information.
    curvature_kind = "fisher"
    #: ``E[y | η] = η`` (ν > 1): effects are read in units of ``y``.
    identity_link = True

    @property
    def label(self):
        """A human-readable name of the likelihood (reports, plots)."""
        return f"Student-t (nu={float(self.df):g})"

    def log_lik(self, y, eta, params=1.0):
        """``log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπs²) − (ν+1)/2 · log(1 + r²/(νs²))``."""
        nu = self.df
        r = y - eta
        return (gammaln(0.5 * (nu + 1.0)) - gammaln(0.5 * nu) - 0.5 * jnp.log(nu * np.pi * params)
                - 0.5 * (nu + 1.0) * jnp.log1p(r * r / (nu * params)))

    def score(self, y, eta, params=1.0):
        """``(ν + 1) r/(νs² + r²)``."""
        r = y - eta
        return (self.df + 1.0) * r / (self.df * params + r * r)

    def curvature(self, y, eta, params=1.0):
        """The Fisher information ``E[−∂²/∂η² log p] = (ν + 1)/((ν + 3) s²)`` (free of ``y``)."""
        return jnp.ones_like(eta) * (self.df + 1.0) / ((self.df + 3.0) * params)

    def mean(self, eta, params=1.0):
        """``E[y | η] = η`` (ν > 1)."""
        return eta

    def variance(self, eta, params=1.0):
        """``s² ν/(ν − 2)`` (ν > 2)."""
        return jnp.ones_like(eta) * params * self.df / (self.df - 2.0)

    def expected_precision(self, y, eta, params):
        """``E[λ_i | y_i, η_i] = (ν + 1)/(ν + r_i²/s²)`` (the E-step)."""
        r = y - eta
        return (self.df + 1.0) / (self.df + r * r / params)

    def em_working(self, y, eta, params=1.0):
        """``(z, w) = (y, E[λ_i]/s²)``: the data, weighted by the E-step's precisions."""
        return y, self.expected_precision(y, eta, params) / params

    def init_params(self, y):
        """s² at the start: the squared normalized median absolute deviation of ``y`` (robust to the
        outliers the t is for), the variance where that is 0."""
        y = np.asarray(y, dtype=np.float64)
        mad = 1.4826 * float(np.median(np.abs(y - np.median(y))))
        s2 = mad**2 if mad > 0 else float(np.var(y))
        return s2 if np.isfinite(s2) and s2 > 0 else 1.0

    def update_params(self, y, eta, params, n_obs=None):
        """EM for the scale at ``η``: the E-step at ``(η, s²)``, then ``s²⁺ = Σ_i E[λ_i] r_i² / n``
        (Lange, Little & Taylor 1989, eq. 5), which raises the likelihood in ``s²``; padding rows
        (``n_obs``) add nothing."""
        r = y - eta
        lam = self.expected_precision(y, eta, params) * row_mask(eta, n_obs)
        n = y.shape[0] if n_obs is None else n_obs
        return jnp.sum(lam * r * r) / n

    def neg_log_lik(self, y, eta, params, n_obs=None):
        """``−Σ log p(y_i | η_i, s²)`` over the first ``n_obs`` rows."""
        return -masked_sum(self.log_lik(y, eta, params), n_obs)

    def sample_params(self):
        """``s²`` inside a NumPyro model under Jeffreys' ``p(s²) ∝ 1/s²`` (flat in ``log s²``; the prior of
        :meth:`gibbs_param_step`, so NUTS and Gibbs sample one posterior), site :attr:`param_name`: the
        improper flat density on the log scale mapped by ``exp``."""
        log_flat = dist.ImproperUniform(dist.constraints.real, (), ())
        return numpyro.sample(self.param_name, dist.TransformedDistribution(log_flat, dist.transforms.ExpTransform()))

    def observe(self, name, eta, y=None, params=1.0):
        """``y ~ StudentT(ν, η, s)``."""
        return numpyro.sample(name, dist.StudentT(self.df, eta, jnp.sqrt(params)), obs=y)

    def sample(self, key, eta, params=1.0):
        """``η + s ε``, ``ε ~ t_ν``."""
        return eta + jnp.sqrt(params) * jax.random.t(key, self.df, jnp.shape(eta))

    def gibbs_augment(self, key, y, eta, params=1.0):
        """The scale mixture's draw for a Gibbs sweep, ``λ_i | y, η, s²``, returned as ``(z = y, ω = λ/s²)``:
        :func:`sparsebayes.inference.engines.gibbs_augment.student_t_augment` (``params = s²``)."""
        from sparsebayes.inference.engines.gibbs_augment import student_t_augment

        return student_t_augment(key, y, eta, self.df, jnp.sqrt(params))

    def gibbs_param_step(self, key, y, eta, params, omega):
        """``s² | λ, η ~ InvGamma(n/2, Σ λ_i r_i²/2)`` under Jeffreys' ``p(s²) ∝ 1/s²``, with
        ``λ = ω s²`` from :meth:`gibbs_augment`: :func:`~sparsebayes.inference.engines.gibbs_augment.student_t_scale2_draw`."""
        from sparsebayes.inference.engines.gibbs_augment import student_t_scale2_draw

        return student_t_scale2_draw(key, y, eta, omega * params)
