"""The move choice both type-II paths share (:func:`~sparsebayes.inference.engines.typeii_moves.choose`):
against a brute-force search that maximises each candidate's change of the objective numerically."""
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

from sparsebayes.inference.engines.typeii_moves import choose, update_lambda
from sparsebayes.models.priors.typeii import ARDPrior, LaplaceVariancePrior, ScaledLaplacePrior

NOISE = 0.7


def _ell(v, s, q):
    """One basis function's part of the log marginal likelihood at prior variances ``v`` (an array;
    Tipping & Faul 2003, eq. 18 with ``α = 1/v``; 0 at ``v = 0``)."""
    v = np.asarray(v, float)
    return np.where(v > 0, -0.5 * np.log1p(v * s) + 0.5 * q * q * v / (1.0 + v * s), 0.0)


def _terms(prior, total, n):
    """The hierarchy's terms of ``L`` at ``Σ v = total`` (an array) over ``n`` active, λ re-maximised."""
    total = jnp.asarray(total)
    lam = prior.typeii_update_lambda(total, NOISE, n)
    return np.asarray(prior.typeii_log_hyperprior(total, lam, NOISE, n))


def _objective_change(prior, var, s, q, i, v):
    """The change of the objective when ``v_i`` moves to each of ``v`` (an array): for a profiled
    hierarchy that of ``Σ ℓ_i + log p(v | λ) + log p(λ)`` with λ re-maximised (the prior's terms and λ
    update, 004 eqs. 13, 17); else 004 Algorithm 1's score at the current λ, ``ℓ_i`` less ``λ/(2σ²)``
    per unit of variance (004 eq. 14, BLS's ``τ_i = v_i/σ²``; no λ for ARD)."""
    v = np.asarray(v, float)
    change = _ell(v, s[i], q[i]) - _ell(var[i], s[i], q[i])
    if not prior.profile_lambda:
        lam = 0.0 if isinstance(prior, ARDPrior) else float(update_lambda(prior, jnp.asarray(var), NOISE))
        return change - lam / (2 * NOISE) * (v - var[i])
    n_others = int(np.sum(var > 0)) - int(var[i] > 0)
    rest = float(np.sum(var)) - var[i]
    new_terms = np.where(v > 0, _terms(prior, rest + v, n_others + 1), _terms(prior, rest, n_others))
    return change + new_terms - _terms(prior, float(np.sum(var)), int(np.sum(var > 0)))


def _brute_force(prior, var, s, q, eligible, full):
    """Each allowed move's best change, the largest: the variances at the interior maxima of the change
    (a grid over ``log v``, each maximum refined by a bounded search; ``v → 0`` is the delete, which keeps
    no infinitesimal variance in the model), and the delete of an active basis but the last."""
    grid = np.linspace(-12.0, 12.0, 1201)
    best = (-np.inf, None, None)
    for i in range(var.size):
        active = var[i] > 0
        if not active and (not eligible[i] or full):
            continue
        f = _objective_change(prior, var, s, q, i, np.exp(grid))
        options = []
        for k in np.flatnonzero((f[1:-1] >= f[:-2]) & (f[1:-1] >= f[2:])) + 1:
            res = scipy.optimize.minimize_scalar(lambda u: -float(_objective_change(prior, var, s, q, i, np.exp(u))),
                                                 bounds=(grid[k - 1], grid[k + 1]), method="bounded",
                                                 options={"xatol": 1e-10})
            options.append((-res.fun, np.exp(res.x)))
        if active and np.sum(var > 0) > 1:
            options.append((float(_objective_change(prior, var, s, q, i, 0.0)), 0.0))
        for gain, v in options:
            if gain > best[0]:
                best = (gain, i, v)
    return best


@pytest.mark.parametrize("prior", [ARDPrior(), LaplaceVariancePrior(a=1.0, b=0.5),
                                   ScaledLaplacePrior(a=1.0, b=0.5)], ids=["ard", "flap-profiled", "bls-algorithm1"])
@pytest.mark.parametrize("full", [False, True], ids=["free-slot", "full"])
def test_choose_takes_the_move_of_largest_change_of_the_objective(prior, full):
    rng = np.random.default_rng(7)
    m = 9
    s = rng.uniform(0.5, 3.0, m)
    q = rng.normal(0.0, 2.0, m)
    var = np.where(np.arange(m) < 4, rng.uniform(0.2, 2.0, m), 0.0)
    q[1] = 0.1  # an active basis with little quality: its delete is a candidate
    eligible = np.ones(m, bool)
    eligible[6] = False
    move = choose(jnp.asarray(s), jnp.asarray(q), jnp.asarray(var), update_lambda(prior, jnp.asarray(var), NOISE),
                  NOISE, prior, jnp.asarray(eligible), jnp.asarray(full), 1e-9)
    gain, i, v = _brute_force(prior, var, s, q, eligible, full)
    assert int(move.m) == i and int(move.kind) == (0 if var[i] > 0 else 1)
    # the hierarchies scored at the current λ are exact there; the profiled one solves its stationarity
    # condition by fixed-point steps, to well below the search's own tolerance here
    assert float(move.gain) == pytest.approx(gain, rel=1e-6, abs=1e-9)
    assert float(move.var) == pytest.approx(v, rel=1e-4, abs=1e-12)
