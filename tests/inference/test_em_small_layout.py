"""EM's compiled loop forms the M-step's system in LAPACK's order without copying a square first.

LAPACK's Cholesky takes a column-major matrix; JAX's arrays are row-major. Built from ``G`` and
``σ²I`` as they are, ``σ²I + UGU`` made the compiled loop copy the slice's whole Gram block and
identity into column-major before it started (two copies of a width × width square per call,
about a tenth of a millisecond at width 320 on a CPU, as much as a third of an iteration).
:func:`sparsebayes.inference.engines.em._gram_solve` reads both (symmetric) transposed, which is that
order already. The check reads the compiled program's entry computation.
"""
import re

import numpy as np

from sparsebayes.inference.engines import em
from sparsebayes.models.likelihoods import ProbitLikelihood
from sparsebayes.models.priors import JeffreysPrior


def test_em_small_the_loop_copies_no_square_into_column_major():
    rng = np.random.default_rng(0)
    n, width = 60, 80
    H = rng.normal(size=(n, width))
    y = (rng.random(n) < 0.5).astype(float)
    data = em.EMData(H, y, H.T @ H, None, np.float64(n), np.sqrt(np.einsum("ij,ij->j", H, H)), np.float64(width))
    controls = em.EMControls(*(np.float64(c) for c in (1e-3, 100, -1, 1e-8, 0.0, 0.0)))
    model = em.EMModel(JeffreysPrior(), ProbitLikelihood())
    state = em.init(data, model, 0.1 * rng.normal(size=width), 1.0)
    hlo = em.run.lower(state, data, model, controls, estimate_noise=False).compile().as_text()
    entry = hlo[hlo.index("ENTRY"):]
    copies = re.findall(rf"%\S*copy\S* = f64\[{width},{width}\]\S*", entry)
    assert copies == [], copies
