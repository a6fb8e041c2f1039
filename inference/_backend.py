"""Which JAX backend a computation runs on, for the choices that depend on it (SMLR's
``solver="auto"``, where the Gibbs sampler draws its random numbers)."""
from __future__ import annotations

import jax

#: JAX backends that are accelerators: dense batched work keeps them busy, and host round trips cost them most.
ACCELERATOR_BACKENDS = ("gpu", "cuda", "rocm", "tpu")


def on_accelerator(backend=None):
    """Whether ``backend`` (default: ``jax.default_backend()``) is an accelerator."""
    return (backend or jax.default_backend()) in ACCELERATOR_BACKENDS
