"""What the verdict (:mod:`.verdict`) and projection selection (:mod:`.selection`) ask of a fitted
estimator: its likelihood, the scale of its outcome, and the basis its posterior draws are on.

Each question is put to the fitted estimator's public attributes (``likelihood_``, ``link``,
``weights_basis_``, ``feature_map_``), never to its class, so that any estimator that states them is
read the same way.
"""
from __future__ import annotations

import numpy as np

from sparsebayes.inference.estimators.links import LINKS as ESTIMATOR_LINKS

#: A classifier's ``link=`` -> the likelihood it names: the estimators' links
#: (:data:`sparsebayes.inference.estimators.links.LINKS`), and ``"logit"`` as other estimators name the logistic.
LINKS = {**ESTIMATOR_LINKS, "logit": "bernoulli_logistic"}


def likelihood_name(est):
    """The registry name of a fitted estimator's likelihood (``"gaussian"``, ``"probit"``,
    ``"bernoulli_logistic"``, ``"poisson"``, ``"multinomial"``, ...), or ``None`` when it states none.

    Asked, in order, of ``likelihood_`` (the fitted likelihood object, or a name), the
    ``likelihood`` parameter, and a classifier's ``link`` (:data:`LINKS`). A regressor that states
    none is Gaussian by the package's convention; a classifier that states none has ``None``.
    """
    from sklearn.base import is_classifier

    for attribute in ("likelihood_", "likelihood"):
        lik = getattr(est, attribute, None)
        if isinstance(lik, str):
            return lik
        if lik is not None and isinstance(getattr(lik, "name", None), str):
            return lik.name
    link = getattr(est, "link", None)
    if isinstance(link, str) and link in LINKS:
        return LINKS[link]
    return None if is_classifier(est) else "gaussian"


def fitted_likelihood(est):
    """The likelihood object of a fitted estimator: its ``likelihood_`` (or ``likelihood``) object, else
    the registry's likelihood of :func:`likelihood_name`; ``None`` when it states none the registry knows."""
    from sparsebayes.models.likelihoods import LIKELIHOODS, make_likelihood

    for attribute in ("likelihood_", "likelihood"):
        lik = getattr(est, attribute, None)
        if lik is not None and not isinstance(lik, str):
            return lik
    name = likelihood_name(est)
    return make_likelihood(name) if name in LIKELIHOODS else None


def on_link_scale(est):
    """Whether the outcome's unit for ``est`` is one unit of the linear predictor: a classifier
    (probit, logit) or a likelihood that does not state ``identity_link`` (counts: the log rate;
    :data:`~sparsebayes.models.likelihoods.registry.LIKELIHOOD_DECLARATIONS`), rather than sd(y)."""
    from sklearn.base import is_classifier

    from sparsebayes.models.likelihoods import identity_link

    return is_classifier(est) or not identity_link(fitted_likelihood(est))


def draws_on_raw_terms(est):
    """Whether ``est``'s posterior draws (``to_inference_data``, its twin's) are weights of the raw terms
    its feature map names (``A β``, :meth:`~sparsebayes.models.LinearFeatures.raw_weights`) rather than of
    its design's columns: the estimator says so by ``weights_basis_ == "raw"`` (the Bernoulli RVM's), with
    a fitted feature map to read them by."""
    return getattr(est, "weights_basis_", None) == "raw" and getattr(est, "feature_map_", None) is not None


def to_raw_terms(feature_map):
    """The linear map from weights ``(..., n_columns)`` on a fitted feature map's columns to the raw
    terms' weights: the map's ``raw_weights`` (a linear or quadratic map on standardized inputs), else
    the identity (no map, or a map whose columns are the raw terms)."""
    convert = getattr(feature_map, "raw_weights", None)
    if convert is None:
        return lambda w: np.asarray(w, dtype=np.float64)
    return convert


def per_basis_matrix(fn, nb):
    """The matrix ``A`` (nb × nb) of a linear map ``fn`` on weights ``(..., nb)``: ``fn(β) = A β``."""
    return np.asarray(fn(np.eye(nb)), dtype=np.float64).T
