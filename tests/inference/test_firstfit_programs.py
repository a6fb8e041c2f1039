"""The first fit in a fresh process of the RVM classifier, the Gaussian type-II regressors and SMLRCV
builds few programs.

A first fit's time is mostly XLA compiling (``comparisons/bench/first_fit.py``, the aim of
2 s on 200 × 8 standardized data), and every program counts: a tiny one costs tens of
milliseconds to trace, lower and compile. On the bench's data,

* ``RVMClassifier`` passes 8 active kernels on its way: its fit is one program
  (:func:`~sparsebayes.inference.engines.typeii_laplace._start_and_run` in 16 slots, the second half
  opened by the loop itself, the start settled by the loop's own step) and the padded rows'
  constant (``_log_lik_at_zero``); the end of the fit and the Laplace covariance are computed on
  the host;
* ``FLAPRegressor``, ``RVMRegressor`` and ``BLSRegressor`` compile the engine's ``fit`` alone, each for
  its hierarchy: the data's products are computed in it (``typeii_exact.Design``), and the check of a last
  basis to prune is answered on the host when more than one basis is in the model;
* ``SMLRCV`` pads its folds to the full data's bucket of rows and gives the cold start as an
  array, so that the folds and the refit share one ``_build_problem`` and one ``_run``, and
  nothing else.

The check runs in a new process, without the persistent compilation cache, and reads the names
of the programs from ``jax_log_compiles`` (the ``first_fit_programs`` fixture); the estimators are
imported before it starts counting.
"""
SETUP = r"""
from sklearn.datasets import make_classification, make_regression
from sklearn.preprocessing import StandardScaler
from sparsebayes.inference import SMLRCV, BLSRegressor, FLAPRegressor, RVMClassifier, RVMRegressor

Xr, yr = make_regression(n_samples=200, n_features=8, n_informative=3, noise=1.0, random_state=0)
yr = (yr - yr.mean()) / yr.std()
Xc, yc = make_classification(n_samples=200, n_features=8, random_state=0)
Xr, Xc = StandardScaler().fit_transform(Xr), StandardScaler().fit_transform(Xc)
FITS = [("FLAPRegressor", FLAPRegressor(), Xr, yr), ("RVMRegressor", RVMRegressor(), Xr, yr),
        ("BLSRegressor", BLSRegressor(), Xr, yr), ("RVMClassifier", RVMClassifier(), Xc, yc),
        ("SMLRCV", SMLRCV(), Xc, yc)]
"""


def test_a_first_fit_of_the_rvm_classifier_the_typeii_regressors_and_smlrcv_builds_few_programs(first_fit_programs):
    fits = first_fit_programs(SETUP)
    # one program of the step: the fit that outgrows 8 slots opens the other 8 in the same loop
    assert sorted(fits["RVMClassifier"]) == ["jit(_log_lik_at_zero)", "jit(_start_and_run)"], fits
    for name in ("FLAPRegressor", "RVMRegressor", "BLSRegressor"):  # one program: the products in the fit's
        assert fits[name] == ["jit(fit)"], fits
    # the folds and the refit: one problem and one solver loop, and no eager jit(sqrt) of the Laplace
    # prior's ridge precision (the capability check asks the class, not the property)
    assert sorted(fits["SMLRCV"]) == ["jit(_build_problem)", "jit(_run)"], fits


def test_a_first_program_that_opens_its_closed_slots_takes_the_steps_of_a_widening(monkeypatch, request):
    """``typeii_laplace.fit`` starts a kernel fit in 16 slots, 8 of them closed, and opens them in
    the loop when an add finds the first 8 full: the very steps, to the last bit, of the fit that
    ran in 8 slots, paused, was widened to 16 and went on in a second program (driven here by
    hand). A width that takes the open slots in another order than the 8-slot program does
    (active first rather than in slot order) moves the weights by 1e-8. Closed slots serve the
    narrow widths of a step (``typeii_laplace_mode._widths``), which this size would not take by itself."""
    import jax
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler
    from sparsebayes.inference.engines import typeii_laplace as tl
    from sparsebayes.inference.engines import typeii_laplace_mode
    from sparsebayes.inference.estimators._base import fit_feature_design
    from sparsebayes.inference.engines.typeii_moves import grow_slots
    from sparsebayes.models.likelihoods import BernoulliLogisticLikelihood

    # the narrow widths at this size: the path with closed slots (traced afresh, and not left for later tests)
    monkeypatch.setattr(typeii_laplace_mode, "NARROW_ABOVE", 0)
    jax.clear_caches()
    request.addfinalizer(jax.clear_caches)
    X, y = make_classification(n_samples=200, n_features=8, random_state=0)
    _, Phi = fit_feature_design(StandardScaler().fit_transform(X), "kernel", kernel_width="scale", bias=True,
                                center=True, scale=True)
    t, mask, lik = (y == 1).astype(float), np.ones(Phi.shape[1], bool), BernoulliLogisticLikelihood()
    one = tl.fit(Phi, t, mask, likelihood=lik)
    P, tp, mp = tl._padded(Phi, t, mask)
    kw = {"max_iter": 1000, "tol": 1e-6, "patience": 100}
    data, model = tl.LaplaceData(P, tp, mp), tl.make_model(lik)
    state = grow_slots(lambda c, pause: tl._start_and_run(data, model, capacity=c, pause_when_full=pause, **kw),
                       lambda st, pause: tl.run(st, data, model, pause_when_full=pause, **kw), tl._widen,
                       8, P.shape[1], whole_below=4)
    two = tl._finish(lik, jax.device_get(state), P.shape[0] - Phi.shape[0], 100)
    assert state.w.shape[0] == 16 and one.w.shape[0] == 16  # both passed 8 active kernels: 16 slots open
    assert int(one.n_iter) == int(two.n_iter) and float(one.objective) == float(two.objective)
    np.testing.assert_array_equal(tl.coefficients(one, Phi.shape[1]), tl.coefficients(two, Phi.shape[1]))
    np.testing.assert_array_equal(one.var, np.asarray(two.var)[:Phi.shape[1]])
