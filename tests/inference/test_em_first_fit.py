"""The first EM fit in a fresh process builds the engine's loop and nothing else.

A first fit's time is mostly XLA compiling (``comparisons/bench/first_fit.py``); every program
it builds counts. The EM estimators compile one ``run`` (:func:`sparsebayes.inference.em.run`)
per slice width and no other program: the objective and the E-step scale come out of that same
program, and the host side works on NumPy values, so no eager ``jnp`` operation dispatches (and
compiles) a program of its own. The check runs in a new process, without the persistent
compilation cache, and reads the names of the programs from ``jax_log_compiles``.
"""
import json
import os
import subprocess
import sys

PROGRAM = r"""
import json, logging, re, warnings
import numpy as np
import jax
import sparsebayes
from sparsebayes.inference import AdaptiveSparseRegressor, SparseProbitClassifier

built = []


class Names(logging.Handler):
    def emit(self, record):
        found = re.search(r"Finished XLA compilation of (\S+)", record.getMessage())
        if found:
            built.append(found.group(1))


jax.config.update("jax_log_compiles", True)
log = logging.getLogger("jax")
log.addHandler(Names())
log.propagate = False
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 5))
y = X[:, 0] - 2.0 * X[:, 2] + 0.3 * rng.normal(size=60)
fits = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, est, target in (("regression", AdaptiveSparseRegressor(), y),
                              ("kernel probit", SparseProbitClassifier(features="kernel", kernel_width=1.0), y > 0)):
        before = len(built)
        est.fit(X, target)
        fits[name] = built[before:]
print("PROGRAMS " + json.dumps(fits))
"""


def test_a_first_em_fit_compiles_only_the_em_loop():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_COMPILATION_CACHE", "SPARSEBAYES_"))}
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [s for s in done.stdout.splitlines() if s.startswith("PROGRAMS ")][-1]
    fits = json.loads(line[len("PROGRAMS "):])
    # a linear design of 6 columns is one slice; a kernel design of 61 columns pads to a slice of
    # at most 64, which never compacts: one program per fit, the loop of that width and likelihood
    assert fits == {"regression": ["jit(run)"], "kernel probit": ["jit(run)"]}, fits
