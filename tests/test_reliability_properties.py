"""Issue 30: every estimator of :mod:`sparsebayes.inference` on hostile designs.

Hypothesis draws a standardized design ``Z`` (every column mean 0, sd 1; ``n = 30`` training
and 10 held-out points) of one of four shapes, and a target from a sparse linear signal:

* ``plain``: 6 independent columns;
* ``wide``: 90 columns for 30 points (p ≫ n);
* ``duplicated``: 4 independent columns and exact copies of two of them;
* ``collinear``: 4 independent columns and two exact linear combinations of them;

regression targets ``y = Zβ + noise``, classes by thresholding ``Zβ + logistic noise`` at a
quantile that leaves the minority class 50 %, 25 % or 10 % of the points (at least 3).
Then it transforms the columns (train and held-out alike):

* ``offset``: ``X = Z + o`` with per-column offsets ``|o_j|`` up to ``10^e``, ``e ≤ 8``;
* ``scale``: ``X = Z · s`` with per-column scales ``s_j`` from ``10^-e`` to ``10^e``, ``e ≤ 8``
  (the extremes always among them);
* ``common_scale``: ``X = Z · 10^{±e}``, one scale for all columns, ``e ≤ 8``.

The property, for every estimator and transform:

1. the fit on ``X`` raises nothing (these designs are not bad input: a ValueError fails too),
   and ``coef_``, ``intercept_``, ``predict`` and ``predict_proba`` on the training and
   held-out points are finite (probabilities in [0, 1], rows summing to 1);
2. where the table below holds the estimator to the transform: its predictions after the fit
   on ``X`` are those of the same estimator fitted on ``Z`` (``max |ŷ_X − ŷ_Z| ≤ tol · sd(y)``
   for regressors, ``max |P_X − P_Z| ≤ tol`` for classifiers, over the 40 points), OR one of
   the two fits (or their predictions) issued a ``UserWarning`` (``DegenerateFitWarning`` and
   scikit-learn's ``ConvergenceWarning`` included): a fit whose answer depends on the
   transform must say so. A warning from the fit on ``Z`` counts because then the reference
   itself is flagged.

Which invariance each estimator is held to (✓ held, – finite outputs only; the letters give why):

=============================================  ======  =====  ============  ==========
estimator (configuration)                      offset  scale  common_scale  why
=============================================  ======  =====  ============  ==========
AdaptiveSparseRegressor() (Jeffreys, linear)   ✓       ✓      ✓             (a)(b)(e)
AdaptiveSparseRegressor(features="kernel")     ✓       –      –             (c)(e)
SparseProbitClassifier() (Jeffreys, linear)    ✓       ✓      ✓             (a)(b)(e)
RVMRegressor() (linear, fit_intercept)         ✓       ✓      ✓             (d)(f)
BLSRegressor()                                 ✓       –      ✓             (d)(g)
FLAPRegressor() (noise fixed, profiled λ)      ✓       –      –             (d)(h)
FLAPRegressor(estimate_noise=True) (FLAPσ)     ✓       –      ✓             (d)(g)
RVMClassifier() (Gaussian kernels)             ✓       –      –             (c)(f)
RVMClassifier(features="linear")               ✓       ✓      ✓             (a)(f)
SMLRClassifier() (l1, λ = 1, linear)           ✓       ✓      ✓             (i)
SMLRClassifier(features="kernel")              ✓       –      –             (c)
SMLRCV(cv=3, n_lams=4)                         ✓       ✓      ✓             (i)
BayesianLassoRegressor() (Gibbs, 1 chain)      ✓       –      –             (j)
GibbsRegressor() (horseshoe, 1 chain)          ✓       –      –             (k)
GibbsClassifier() (Laplace, probit, 1 chain)   ✓       –      –             (k)
NutsRegressor() (Laplace, 1 chain)             –       –      –             (l)
NutsClassifier() (Laplace, probit, 1 chain)    –       –      –             (l)
=============================================  ======  =====  ============  ==========

The tolerance is the same wherever an invariance is held: 1e-4 (of sd(y), or of a
probability). The transformed data carry ``Z`` to within the rounding of the transform: a
scale by ``10^±8`` loses nothing but the last bit, an offset of 1e8 about 1e-8 of ``Z`` (the
ulp of 1e8 is 1.5e-8), so a fit whose algorithm is invariant, as the reasons below say it is,
reproduces its predictions to 1e-8 times the design's condition number: 1e-4 leaves room for a
condition number of 1e3 and for the engines' stopping rules (gains in log evidence, unit-free,
at ``tol`` ≤ 1e-5), and it fails on what a user would see: a changed support, a shifted
intercept, a mode found in some units and not others. (Where the invariant fits passed when this
test was written, they agreed to 4e-7 or better.)

(a) The bias is a basis function with a prior like every other weight's, not a flat
    intercept, but the linear map centres the inputs at their training mean (the EM
    estimators' ``standardize=True`` default; RVMClassifier with ``bias=True``): the bias
    weight is the value at the mean, and an offset leaves the centred design as it was.
(b) Jeffreys ``p(τ_i) ∝ 1/τ_i`` is scale-free for each weight on its own: scaling column ``j``
    by ``s_j`` maps the EM fixed points ``β_j → β_j / s_j`` (``U H'ᵀH' U = U HᵀH U``), and
    ``standardize=True`` divides the inputs by their training SD, so the iterations, the
    stopping rule included, are the same.
(c) Gaussian kernels ``exp(−‖x − x'‖²/(2h²))`` depend on differences only: an offset leaves
    the design as it was (the bias column included); the fixed width ``h`` is not scale-free.
    (The kernel width is ``√p``, so that the kernels of standardized data are not all ≈ 0.)
(d) ``fit_intercept=True``: columns and ``y`` centred, intercept flat and integrated out.
(e) EM prunes a weight by its contribution ``|β_i| ‖h_i‖`` (unit-free); its stopping rule
    ``‖Δβ‖/‖β‖ < 1e-3`` is not unit-free on raw inputs (per-column scales change which weight
    dominates ``‖β‖``): it is on the standardized ones the estimators fit by default.
(f) Flat hyperpriors on every ``α_i`` (``p(α) ∝ 1/α``): type-II ML is scale-free per column
    (``α_i = s_i²/(q_i² − s_i)`` moves with the column's units; ``q_i² > s_i`` does not).
(g) One λ for all weights: per-column scales change which weights the common penalty prunes;
    one common scale does not (BLS's ``τ_i = v_i/σ²`` and FLAPσ's moves scored at the current
    λ by 004 Algorithm 1 are unit-free, ``test_fits_do_not_depend_on_the_units_of_y_or_x``).
(h) FLAP with its noise fixed: ``γ_i`` has the units of ``w_i²`` and the profiled ascent's
    ``A log λ`` depends on them (FLAPRegressor's docstring): no scale invariance.
(i) ``standardize=True``: the linear basis is the inputs centred at their training mean and
    divided by their training SD, the bias the logit at the mean; every weight, the bias included,
    is penalized by the one fixed (or CV-chosen, from a grid set on that basis) λ, and the basis is
    the same whatever the columns' offsets and units, so the MAP is too.
(j) Centred ``X`` and ``y`` with the intercept integrated out; the same seed gives the same
    draws on the same centred data, so the fits differ only by the offset's rounding of ``Z``
    (a flip of an accept/reject step would make them differ by Monte Carlo error and fail).
    Its ``Gamma(1, 1.78)`` prior on λ² sets a scale: no scale invariance.
(k) ``standardize=True``: the linear basis is the inputs centred at their training mean (the EM
    estimators' map without its bias column), the intercept the value at the mean (flat under the
    Gaussian likelihood, ``N(0, 10²)`` under the probit): an offset leaves the basis as it was, up to
    its rounding, and the same seed gives the same sweeps, as (j). The hierarchy's scale (the
    horseshoe's τ, the Laplace γ) has the units of β, as under EM, so the inputs are not scaled: no
    scale invariance.
(l) The Gibbs estimators' basis and model (k), sampled by NUTS: the model is offset-invariant (its
    record on ``X + c`` is the one on ``X``, ``tests/inference/test_sampling_standardization.py``),
    but NUTS's discrete steps (tree doubling, the U-turn check, the multinomial choice of the draw)
    are not continuous in the data: the offset's rounding can flip one, and the chains then differ
    by Monte Carlo error, which a tolerance of 1e-4 would fail. Finite outputs only; their NUTS
    programs take tens of seconds to compile, so their fast cases are slow tests.

``derandomize=True`` makes the examples the same on every run; shrinking is off (each step
would refit), the failing example is printed as drawn. The fast test runs, per (estimator,
transform), every shape at ``e = 8`` and 4 drawn examples; ``test_reliability_extended``
(``-m slow``) draws 30 and adds three classes. Shapes are fixed (n = 30, p = 6 or 90) so
that each estimator compiles its programs for two shapes only.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from public_estimators import EXPORTED
from sklearn.base import is_classifier

import sparsebayes.inference as inference

N_TRAIN, N_TEST = 30, 10
N_COLUMNS = {"plain": 6, "wide": 90, "duplicated": 6, "collinear": 6}
SCENARIOS = tuple(N_COLUMNS)
TRANSFORMS = ("offset", "scale", "common_scale")

# id: (factory of p, {transform: tolerance} where held to invariance)
TOL = 1e-4
SAMPLER_DRAWS = dict(num_warmup=50, num_samples=100, num_chains=1, rhat_max=np.inf)
CONFIGS = {
    "AdaptiveSparseRegressor": (lambda p: inference.AdaptiveSparseRegressor(),
                                {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "AdaptiveSparseRegressor-kernel": (lambda p: inference.AdaptiveSparseRegressor(features="kernel",
                                                                                   kernel_width=np.sqrt(p)),
                                       {"offset": TOL}),
    "SparseProbitClassifier": (lambda p: inference.SparseProbitClassifier(),
                               {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "RVMRegressor": (lambda p: inference.RVMRegressor(), {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "BLSRegressor": (lambda p: inference.BLSRegressor(), {"offset": TOL, "common_scale": TOL}),
    "FLAPRegressor": (lambda p: inference.FLAPRegressor(), {"offset": TOL}),
    "FLAPRegressor-sigma": (lambda p: inference.FLAPRegressor(estimate_noise=True),
                            {"offset": TOL, "common_scale": TOL}),
    "RVMClassifier": (lambda p: inference.RVMClassifier(kernel_width=np.sqrt(p)), {"offset": TOL}),
    "RVMClassifier-linear": (lambda p: inference.RVMClassifier(features="linear"),
                             {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "SMLRClassifier": (lambda p: inference.SMLRClassifier(), {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "SMLRClassifier-kernel": (lambda p: inference.SMLRClassifier(features="kernel", kernel_width=np.sqrt(p)),
                              {"offset": TOL}),
    "SMLRCV": (lambda p: inference.SMLRCV(cv=3, n_lams=4), {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "PoissonRVMRegressor": (lambda p: inference.PoissonRVMRegressor(),
                            {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "SparseRegressor": (lambda p: inference.SparseRegressor(), {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "SparseClassifier": (lambda p: inference.SparseClassifier(method="map"),
                         {"offset": TOL, "scale": TOL, "common_scale": TOL}),
    "BayesianLassoRegressor": (lambda p: inference.BayesianLassoRegressor(**SAMPLER_DRAWS), {"offset": TOL}),
    "GibbsRegressor": (lambda p: inference.GibbsRegressor(**SAMPLER_DRAWS), {"offset": TOL}),
    "GibbsClassifier": (lambda p: inference.GibbsClassifier(**SAMPLER_DRAWS), {"offset": TOL}),
    "NutsRegressor": (lambda p: inference.NutsRegressor(**SAMPLER_DRAWS), {}),
    "NutsClassifier": (lambda p: inference.NutsClassifier(**SAMPLER_DRAWS), {}),
}

#: The configurations whose fast cases are slow tests (NUTS programs compile for tens of seconds).
SLOW_CONFIGS = {"NutsRegressor", "NutsClassifier"}

#: (configuration, transform) whose fit may stop with a FloatingPointError that says to scale X, on a
#: rank-deficient design (duplicated or collinear columns) in units of 1e6 or more; any other failure
#: fails. None now: the augmented Gibbs β draw falls back to a QR factor of ``[Ω^½H; D^-½]`` where the
#: Cholesky factor of ``HᵀΩH + D⁻¹`` fails (``gibbs_beta.rue_draw``), and a sweep that still leaves
#: float64 is refused with a DegenerateFitWarning, as the Gaussian sweep's.
SINGULAR_IN_LARGE_UNITS = set()


def test_every_exported_estimator_is_covered():
    covered = {type(make(6)).__name__ for make, _ in CONFIGS.values()}
    assert covered == EXPORTED


# ---------------------------------------------------------------------------------------- data

def make_design(scenario, seed):
    """``(Z_train, Z_test, signal, rng)``: ``Z`` standardized on the training rows (held-out rows
    with the training means and sds), duplicated / collinear columns exact copies / combinations
    (to rounding); ``signal = Zβ`` on all rows, ``β`` nonzero on the first three columns; ``rng``
    to draw the target with."""
    rng = np.random.default_rng(seed)
    n = N_TRAIN + N_TEST
    p = N_COLUMNS[scenario]
    base = rng.standard_normal((n, 4 if scenario in ("duplicated", "collinear") else p))
    if scenario == "duplicated":
        Z = np.column_stack([base, base[:, 0], base[:, 2]])
    elif scenario == "collinear":
        Z = np.column_stack([base, 2.0 * base[:, 0] - base[:, 1], base[:, 1] + 0.5 * base[:, 2] - 3.0 * base[:, 3]])
    else:
        Z = base
    mean, sd = Z[:N_TRAIN].mean(axis=0), Z[:N_TRAIN].std(axis=0)
    Z = (Z - mean) / sd
    beta = np.zeros(p)
    beta[:3] = rng.choice([-1.0, 1.0], 3) * rng.uniform(0.5, 2.0, 3)
    return Z[:N_TRAIN], Z[N_TRAIN:], Z @ beta, rng


def make_target(signal, rng, task, noise, minority, n_classes):
    if task == "count":  # log mean = half the signal, as counts of a few to a few dozen
        return rng.poisson(np.exp(0.5 * signal[:N_TRAIN])).astype(float)
    if task == "regression":
        y = signal + noise * np.std(signal) * rng.standard_normal(signal.size)
        return y[:N_TRAIN]
    latent = signal[:N_TRAIN] + rng.logistic(size=N_TRAIN)
    order = np.argsort(latent)
    n_min = max(3, int(round(minority * N_TRAIN)))
    y = np.zeros(N_TRAIN, int)
    if n_classes == 2:
        y[order[N_TRAIN - n_min:]] = 1
    else:  # two minority classes of n_min points at the top and bottom
        y[:] = 1
        y[order[:n_min]] = 0
        y[order[N_TRAIN - n_min:]] = 2
    return y


def transform_columns(transform, Z, exponent, rng):
    p = Z.shape[1]
    if transform == "offset":
        mags = 10.0 ** rng.uniform(0.0, exponent, p)
        mags[0] = 10.0 ** exponent
        return Z + rng.choice([-1.0, 1.0], p) * mags
    if transform == "scale":
        logs = rng.uniform(-exponent, exponent, p)
        logs[:2] = [-exponent, exponent]
        return Z * 10.0 ** rng.permutation(logs)
    if transform == "common_scale":
        return Z * 10.0 ** (exponent * rng.choice([-1.0, 1.0]))
    raise ValueError(transform)


# ---------------------------------------------------------------------------------------- fits

def _fit_and_predict(est, X_train, y, X_eval):
    """``(fitted, outputs, warnings)``; outputs: predictions (regressor) or probabilities."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X_train, y)
        out = est.predict_proba(X_eval) if is_classifier(est) else est.predict(X_eval)
        labels = est.predict(X_eval)
    caught = [w for w in caught if issubclass(w.category, UserWarning)]
    return est, np.asarray(out, dtype=float), labels, caught


def _assert_finite(name, est, out, labels, y):
    for attr in ("coef_", "intercept_"):
        if hasattr(est, attr):
            value = np.asarray(getattr(est, attr), dtype=float)
            assert np.all(np.isfinite(value)), f"{name}: {attr} not finite: {value}"
    assert np.all(np.isfinite(out)), f"{name}: predictions not finite: {out}"
    if is_classifier(est):
        assert np.all((out >= 0) & (out <= 1)), f"{name}: probabilities outside [0, 1]"
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-9, err_msg=f"{name}: rows do not sum to 1")
        assert set(np.unique(labels)) <= set(np.unique(y)), f"{name}: unknown labels predicted"


_BASE_FITS = {}


def _base_fit(config, scenario, seed, noise, minority, n_classes):
    key = (config, scenario, seed, noise, minority, n_classes)
    if key not in _BASE_FITS:
        make, _ = CONFIGS[config]
        Z_train, Z_test, signal, rng = make_design(scenario, seed)
        est = make(N_COLUMNS[scenario])
        task = ("classification" if is_classifier(est) else "count" if isinstance(est, inference.PoissonRVMRegressor)
                else "regression")
        y = make_target(signal, rng, task, noise, minority, n_classes)
        Z_eval = np.vstack([Z_train, Z_test])
        _, out, labels, caught = _fit_and_predict(est, Z_train, y, Z_eval)
        _assert_finite(f"{config} on the standardized {scenario} design", est, out, labels, y)
        _BASE_FITS[key] = (Z_train, Z_test, y, out, caught)
    return _BASE_FITS[key]


def check_case(config, transform, scenario, seed, exponent, noise, minority, n_classes, rng_seed):
    make, held = CONFIGS[config]
    Z_train, Z_test, y, base_out, base_warnings = _base_fit(config, scenario, seed, noise, minority, n_classes)
    rng = np.random.default_rng(rng_seed)
    X = transform_columns(transform, np.vstack([Z_train, Z_test]), exponent, rng)
    est = make(N_COLUMNS[scenario])
    where = f"{config}, {transform} (exponent {exponent}) of the {scenario} design"
    if (config, transform) in SINGULAR_IN_LARGE_UNITS:
        try:
            _, out, labels, caught = _fit_and_predict(est, X[:N_TRAIN], y, X)
        except FloatingPointError as err:  # the documented clear error, nothing else
            assert "scale X" in str(err) and scenario in ("duplicated", "collinear") and exponent >= 6, (where, err)
            return
    else:
        _, out, labels, caught = _fit_and_predict(est, X[:N_TRAIN], y, X)
    _assert_finite(where, est, out, labels, y)
    if transform not in held:
        return
    tol = held[transform]
    if is_classifier(est):
        err = float(np.max(np.abs(out - base_out)))
    else:
        err = float(np.max(np.abs(out - base_out)) / np.std(y))
    warned = [f"{w.category.__name__}: {w.message}" for w in base_warnings + caught]
    assert err <= tol or warned, (
        f"{where}: predictions differ from the fit on the standardized design by {err:.3g} "
        f"({'probability' if is_classifier(est) else 'sd(y)'}), tolerance {tol:g}, and no warning was issued")


def _case_strategy(n_classes):
    return dict(
        scenario=st.sampled_from(SCENARIOS),
        seed=st.integers(0, 2),
        exponent=st.integers(1, 8),
        noise=st.sampled_from([0.1, 0.5]),
        minority=st.sampled_from([0.5, 0.25, 0.1]),
        n_classes=st.sampled_from(n_classes),
        rng_seed=st.integers(0, 2**16),
    )


_FAST = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                 phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
_SLOW = settings(_FAST, max_examples=30)


def _EXTREMES(f):
    """Every shape at the largest offsets and scales (10^±8), whatever the generated examples are."""
    for scenario, seed, noise, minority, rng_seed in [("plain", 0, 0.1, 0.5, 0), ("wide", 0, 0.1, 0.1, 1),
                                                      ("duplicated", 1, 0.5, 0.1, 2), ("collinear", 2, 0.1, 0.25, 3)]:
        f = example(scenario=scenario, seed=seed, exponent=8, noise=noise, minority=minority, n_classes=2,
                    rng_seed=rng_seed)(f)
    return f


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("config", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CONFIGS else c
                                    for c in CONFIGS])
def test_reliability(config, transform):
    @_FAST
    @given(**_case_strategy([2]))
    @_EXTREMES
    def run(**case):
        check_case(config, transform, **case)

    run()


@pytest.mark.slow
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("config", list(CONFIGS))
def test_reliability_extended(config, transform):
    @_SLOW
    @given(**_case_strategy([2, 3]))
    @_EXTREMES
    def run(**case):
        check_case(config, transform, **case)

    run()
