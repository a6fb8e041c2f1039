"""XLA options for the programs of small fits: compile them quickly, run them a little slower.

A first fit in a fresh process is mostly XLA compiling its engine; on a small problem the compiled
loop then runs in milliseconds. At :data:`QUICK_COMPILE` (XLA's backend optimization level 0) the
same HLO is compiled to less optimized machine code, in markedly less CPU time. The
operations are the same IEEE float64 ones, but the code generator at level 0 fuses fewer
multiply-adds, so an operation's result may differ from the optimized program's in its last bits,
and an iterative fit may then stop at another iterate (a difference of the order of its stopping
tolerance): an engine takes the quick program only for problems below a size it names, and keeps one program
per size class, so a fit's bits depend on its shape alone.
"""
from __future__ import annotations

import jax

#: XLA's options for the programs of a small fit.
QUICK_COMPILE = {"xla_backend_optimization_level": 0}


def quick_twin(jitted, **jit_options):
    """The function under ``jitted`` (a ``jax.jit`` wrapper) jitted again at :data:`QUICK_COMPILE`,
    with the same ``jit_options`` (``static_argnames``, ...): a second cache of programs, used for the
    small problems only."""
    return jax.jit(jitted.__wrapped__, compiler_options=QUICK_COMPILE, **jit_options)
