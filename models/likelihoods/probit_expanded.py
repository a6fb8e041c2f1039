"""The probit likelihood with a parameter-expanded Gibbs sweep (Liu & Wu 1999; van Dyk & Meng 2001):
the same model as :class:`~.probit.ProbitLikelihood`, whose augmented Gibbs sweep rescales Albert &
Chib's latents by a group move before ``β`` is drawn
(:func:`sparsebayes.inference.engines.gibbs_augment.probit_expansion_scale`)."""
from __future__ import annotations

from .probit import ProbitLikelihood


class ExpandedProbitLikelihood(ProbitLikelihood):
    """``P(y = 1 | η) = Φ(η)``, every method :class:`~.probit.ProbitLikelihood`'s, plus the hook
    ``gibbs_rescale`` the augmented Gibbs sweep calls between the latents' draw and ``β``'s: the
    PX-DA scaling ``z → g z``, ``g² ~ Gamma(n/2, zᵀΣ⁻¹z/2)``, ``Σ = I + X diag(v) Xᵀ``. The posterior
    is the same; the chain moves along the overall scale of ``(z, β)`` in one sweep."""

    def gibbs_rescale(self, key, z, design, prior_var):
        """``g z`` by :func:`sparsebayes.inference.engines.gibbs_augment.probit_expansion_scale`."""
        from sparsebayes.inference.engines.gibbs_augment import probit_expansion_scale

        return probit_expansion_scale(key, z, design, prior_var)
