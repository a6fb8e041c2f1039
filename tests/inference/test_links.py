"""The classifiers' links (:mod:`sparsebayes.inference.estimators.links`): one table and one resolver for
every route, checked against the likelihood registry and each route's documented likelihoods."""
import pytest

from sparsebayes.inference import RVMClassifier, SMLRClassifier, SparseClassifier
from sparsebayes.inference.estimators.adaptive import SparseProbitClassifier
from sparsebayes.inference.estimators.links import LINKS, link_likelihood, link_name
from sparsebayes.models.likelihoods import LIKELIHOODS, PoissonLikelihood, ProbitLikelihood, make_likelihood

#: (method, what ``link=None`` fits, the links the route fits): the module docstring of sparse_estimators
ROUTES = [("em", "probit", {"probit", "logistic"}), ("gibbs", "probit", {"probit", "logistic"}),
          ("nuts", "probit", {"probit", "logistic"}), ("type2", "bernoulli_logistic", {"logistic"}),
          ("map", "multinomial", {"logistic"})]


def test_each_link_names_a_registered_label_likelihood_and_back():
    for link, name in LINKS.items():
        assert LIKELIHOODS[name].support == "binary"
        lik = link_likelihood(link, tuple(LINKS.values()), "probit", "P", "em")
        assert lik == make_likelihood(name) and link_name(lik) == link
    assert link_name(make_likelihood("multinomial")) == "multinomial"  # no link names it: its registry name


def test_none_is_the_default_and_an_object_is_its_own_link():
    assert link_likelihood(None, ("multinomial",), "multinomial", "P", "map") == make_likelihood("multinomial")
    probit = ProbitLikelihood()
    assert link_likelihood(probit, ("probit",), "probit", "P", "em") is probit


@pytest.mark.parametrize("method, default, fits", ROUTES)
def test_every_route_resolves_links_by_the_one_table(method, default, fits):
    est = SparseClassifier(method=method, prior="laplace")
    if method != "map":  # MAP's likelihood is the fit's (multinomial, or logistic for two classes)
        assert getattr(est, {"em": "_em_likelihood", "type2": "_laplace_likelihood"}.get(method, "_sampling_likelihood"))() \
            == make_likelihood(default)
    for link in LINKS:
        est.set_params(link=link)
        if link in fits:
            est._check_model()
        else:
            with pytest.raises(ValueError, match=f"fits the .* likelihood only, not '{LINKS[link]}'.*method='em'"):
                est._check_model()
    for bad, pattern in [("cauchit", r"link must be one of \['logistic', 'probit'\]"),
                         (PoissonLikelihood(), "likelihood only, not 'poisson'")]:
        with pytest.raises(ValueError, match=pattern):
            est.set_params(link=bad)._check_model()


@pytest.mark.parametrize("est", [SparseProbitClassifier(link="cauchit"), SMLRClassifier(), RVMClassifier()],
                         ids=lambda e: type(e).__name__)
def test_paper_classes_take_the_same_links(est):
    if isinstance(est, SparseProbitClassifier):
        with pytest.raises(ValueError, match="link must be one of"):
            est._check_model()
    else:
        est._check_model()
