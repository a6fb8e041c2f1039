"""The three-class problem of the multiclass tests (the posteriors, ``tests/inference``; ``compare``,
``tests/comparisons``), and the small sampler settings they share: one program shape for every run."""
import numpy as np

#: The labels: strings, so that a test sees class names carried through, not codes.
CLASSES = np.array(["a", "b", "c"])
#: Short chains (one program shape for every run of the multiclass tests).
SMALL = dict(num_warmup=15, num_samples=15, num_chains=1)


def three_classes(n=45, seed=0):
    """Two inputs, three classes by a noisy argmax of linear scores: every class present."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    scores = X @ np.array([[2.0, -1.0, 0.0], [0.0, 1.5, -1.5]]) + rng.standard_normal((n, 3))
    return X, CLASSES[np.argmax(scores, axis=1)]
