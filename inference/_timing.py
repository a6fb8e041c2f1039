"""Compile time inside a timed block, from JAX's monitoring events."""
from __future__ import annotations

from contextlib import contextmanager

#: JAX's duration events of building a program: lowering to MLIR and the backend's compile (the
#: tracing event is left out: a jitted call traced inside another's trace would count twice).
COMPILE_EVENTS = ("/jax/core/compile/jaxpr_to_mlir_module_duration", "/jax/core/compile/backend_compile_duration")


@contextmanager
def compile_seconds():
    """``with compile_seconds() as spent: ...``; then ``spent[0]`` is the seconds JAX spent
    lowering and compiling programs inside the block (NumPyro compiles inside its runs)."""
    import jax.monitoring

    spent = [0.0]

    def on_duration(name, seconds, **_):
        if name in COMPILE_EVENTS:
            spent[0] += seconds

    jax.monitoring.register_event_duration_secs_listener(on_duration)
    try:
        yield spent
    finally:
        jax.monitoring.unregister_event_duration_listener(on_duration)
