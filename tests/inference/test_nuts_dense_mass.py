"""``run_nuts``'s mass matrix: dense by default for a model with few latent dimensions, diagonal for a
large one, the choice recorded, and the draws of the exact target either way."""
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

from sparsebayes.inference import run_nuts
from sparsebayes.inference.engines.nuts import DENSE_MASS_MAX_DIM

#: A strongly correlated Gaussian target (correlation 0.99 between neighbours' shared factor).
COV = 0.01 * np.eye(4) + 0.99 * np.ones((4, 4))


def _correlated():
    numpyro.sample("x", dist.MultivariateNormal(jnp.zeros(4), covariance_matrix=jnp.asarray(COV)))


def _iid(size):
    def model():
        numpyro.sample("x", dist.Normal(jnp.zeros(size), 1.0))
    return model


def _run(model, **kw):
    return run_nuts(model, num_warmup=400, num_samples=1000, num_chains=1, progress_bar=False, seed=1, **kw)


def test_a_small_model_gets_a_dense_mass_matrix_and_fewer_steps_on_a_correlated_target():
    dense, diagonal = _run(_correlated), _run(_correlated, dense_mass=False)
    assert dense.posterior.attrs["dense_mass"] == 1 and diagonal.posterior.attrs["dense_mass"] == 0
    steps = {name: float(np.mean(idata.sample_stats["n_steps"].values))
             for name, idata in (("dense", dense), ("diagonal", diagonal))}
    # the adapted dense metric whitens the target: a few leapfrog steps per draw, where the diagonal
    # metric needs many to travel along the long axis (sd ~2 against 0.1 across it)
    assert steps["dense"] * 3 < steps["diagonal"], steps
    draws = dense.posterior["x"].values.reshape(-1, 4)
    # the draws are the target's: covariance within Monte Carlo error of COV (1000 draws: ±~10 %)
    np.testing.assert_allclose(np.cov(draws.T), COV, rtol=0.25, atol=0.02)


def test_a_model_with_many_latent_dimensions_keeps_the_diagonal_mass_matrix():
    small = _run(_iid(DENSE_MASS_MAX_DIM))
    large = _run(_iid(DENSE_MASS_MAX_DIM + 1))
    assert small.posterior.attrs["dense_mass"] == 1 and large.posterior.attrs["dense_mass"] == 0
    assert _run(_iid(3), dense_mass=False).posterior.attrs["dense_mass"] == 0
