"""The classifiers' links: ``link=`` of :class:`~sparsebayes.inference.estimators.sparse_estimators.SparseClassifier`
and its paper classes names a likelihood of binary labels by its short name.

A link is the short name of a registered label likelihood (:data:`LINKS`): ``"probit"`` is the
likelihood ``P(y = 1 | η) = Φ(η)`` (Figueiredo 2003, Sec. 4), ``"logistic"`` the Bernoulli-logistic
``σ(η)`` (Tipping 2001, Sec. 4). A likelihood object (a fitted ``likelihood_``) is its own link. Each
route fits some of these likelihoods and takes one when ``link=None`` (:func:`link_likelihood`).
"""
from __future__ import annotations

from sparsebayes.models.likelihoods import make_likelihood, methods_fitting

#: link -> the registry name of the likelihood it names.
LINKS = {"probit": "probit", "logistic": "bernoulli_logistic"}


def link_name(likelihood):
    """The link of the likelihood object ``likelihood`` (``"probit"``, ``"logistic"``); the likelihood's
    registry name for one that no link names (the multinomial logistic)."""
    return next((link for link, name in LINKS.items() if name == likelihood.name), likelihood.name)


def link_likelihood(link, fits, default, paper, method):
    """The likelihood object of ``link``: a name of :data:`LINKS`, a likelihood object (a fitted
    ``likelihood_``, returned as it is), or ``None`` for the route's own, the registered ``default``.
    A ``ValueError`` for another name (listing the links), and for a likelihood that the route (of
    ``method``, whose paper class is ``paper``) does not fit, not one of the registry names ``fits``:
    naming the methods that fit it (:func:`~sparsebayes.models.likelihoods.methods_fitting`)."""
    if link is None:
        lik = make_likelihood(default)
    elif isinstance(link, str):
        if link not in LINKS:
            raise ValueError(f"link must be one of {sorted(LINKS)}, None ({paper}'s {default!r} under "
                             f"method={method!r}) or a fitted likelihood_, got {link!r}")
        lik = make_likelihood(LINKS[link])
    else:
        lik = make_likelihood(link)
    if lik.name not in fits:
        raise ValueError(f"{paper} (method={method!r}) fits the {' or '.join(repr(name) for name in fits)} likelihood only, not "
                         f"{lik.name!r} (link={link!r}); the {lik.name!r} likelihood is fitted by {methods_fitting(lik)}")
    return lik
