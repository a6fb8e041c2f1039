"""The model's sites as :func:`sparsebayes.inference.twin_posterior.site_summary` reads them from an abstract
evaluation equal those of the concrete trace (:func:`sparsebayes.inference.nuts._model_trace`), for the
type-II twin, the one model with a hierarchy's per-weight scales, and a classifier; a model that reads an
array's value in Python is read from its concrete trace."""
from __future__ import annotations

import numpy as np
import pytest

from sparsebayes.inference import AdaptiveSparseRegressor, BLSRegressor, SparseProbitClassifier
from sparsebayes.inference.nuts import _model_trace
from sparsebayes.inference.twin_posterior import basis_sites, site_summary, twin


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, X @ np.array([1.0, 0.0, -0.5]) + 0.3 * rng.standard_normal(n)


@pytest.mark.parametrize("make, binary", [
    (lambda: BLSRegressor(), False),
    (lambda: AdaptiveSparseRegressor(prior="horseshoe"), False),
    (lambda: SparseProbitClassifier(prior="laplace", gamma=2.0), True),
])
def test_abstract_sites_equal_the_concrete_trace(make, binary):
    X, y = _data()
    y = (y > 0).astype(int) if binary else y
    est = make().fit(X, y)
    t = twin(est, X, y)
    kwargs = {**t.kwargs, **t.nuts_kwargs}
    concrete = {name: (site["type"], bool(site.get("is_observed", False)), tuple(np.shape(site["value"])))
                for name, site in _model_trace(t.model, (t.H, t.y), kwargs).items()}
    assert site_summary(t.model, t.H, t.y, kwargs) == concrete
    assert basis_sites(t, kwargs) == {name for name, (kind, observed, shape) in concrete.items()
                                      if kind in ("sample", "deterministic") and not observed
                                      and shape == (t.H.shape[1],)}
    assert "beta" in basis_sites(t, kwargs) or t.weight_site != "beta"



def test_a_model_that_reads_a_value_is_traced_concretely():
    """A model whose Python code reads an array's value cannot be evaluated abstractly: the summary
    comes from the concrete trace instead."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    def model(H, y, scale=None):
        width = float(jnp.sum(jnp.asarray(scale)))  # a value of a JAX computation read in Python
        beta = numpyro.sample("beta", dist.Normal(0.0, width).expand([H.shape[1]]).to_event(1))
        numpyro.sample("y", dist.Normal(H @ beta, 1.0), obs=y)

    X, y = _data()
    summary = site_summary(model, X, y, {"scale": np.ones(2)})
    assert summary == {"beta": ("sample", False, (3,)), "y": ("sample", True, (30,))}
