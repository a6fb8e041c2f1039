"""The first EM fit in a fresh process builds the engine's loop and nothing else.

A first fit's time is mostly XLA compiling (``comparisons/bench/first_fit.py``); every program
it builds counts. The EM estimators compile one ``run`` (:func:`sparsebayes.inference.engines.em.run`)
per slice width and no other program: the objective and the E-step scale come out of that same
program, and the host side works on NumPy values, so no eager ``jnp`` operation dispatches (and
compiles) a program of its own. The check runs in a new process, without the persistent
compilation cache, and reads the names of the programs from ``jax_log_compiles``.
"""
SETUP = r"""
import numpy as np
import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 5))
y = X[:, 0] - 2.0 * X[:, 2] + 0.3 * rng.normal(size=60)
FITS = [("regression", AdaptiveSparseRegressor(), X, y),
        ("kernel probit", SparseProbitClassifier(features="kernel", kernel_width=1.0), X, y > 0)]
"""


def test_a_first_em_fit_compiles_only_the_em_loop(first_fit_programs):
    fits = first_fit_programs(SETUP)
    # a linear design of 6 columns is one slice; a kernel design of 61 columns pads to a slice of
    # at most 64, which never compacts: one program per fit, the loop of that width and likelihood
    assert fits == {"regression": ["jit(run)"], "kernel probit": ["jit(run)"]}, fits
